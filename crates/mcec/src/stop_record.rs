//! The durable stop record on disk: one small file per display (an X display's
//! `display-<N>`, on the sway backend the Wayland display's `wayland-<its socket's path>`) under
//! `<home from the user database>/.local/state/mcec/stop/`, written the moment a stop
//! engages and removed by a physical re-arm. The rules (which record applies, what a file
//! says, what a running process does when it changes) are `mcec_rules::stop_record`; this
//! file only reads, writes and removes.
//!
//! Every read is fail closed: a regular file that cannot be read or parsed counts as a stop;
//! anything else in the record's place (a directory, FIFO, socket, device or symlink), a
//! directory that cannot be listed, or one where no file can be written, is
//! [`Observation::Unusable`]: no stop could be recorded there. Files are opened without
//! following symlinks and without blocking, so a FIFO or a device planted there cannot hang
//! mcec. Whether a record could be written is tried for real ([`StopRecords::probe`]).

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use mcec_rules::stop_record::{self, MAX_RECORD_BYTES, Observation, Scope, StopId};

/// Where the record lives under the home directory.
#[cfg(unix)]
pub const RECORD_DIR: &str = ".local/state/mcec/stop";
/// Where the record lives under the profile folder (`%LOCALAPPDATA%\mcec\stop` by default).
#[cfg(windows)]
pub const RECORD_DIR: &str = "AppData/Local/mcec/stop";
/// Where a stop latched on a display that could not be identified is written.
const UNIDENTIFIED: &str = "display-unidentified";

/// The records that apply to this process.
#[derive(Debug, Clone)]
pub struct StopRecords {
    dir: Result<PathBuf, String>,
    scope: Scope,
}

impl StopRecords {
    /// For the user running this process and the display it acts on: the sway session's
    /// Wayland display on the sway backend, otherwise the X display in `DISPLAY`.
    pub fn for_this_process() -> StopRecords {
        let dir = mcec_sessions::user_home::home_from_user_database().map(|home| home.join(RECORD_DIR));
        StopRecords { dir, scope: this_desktop() }
    }

    /// For the user running this process and `display` (`:<n>`: a headless own display's,
    /// which is not in `DISPLAY`).
    pub fn for_display(display: &str) -> StopRecords {
        let dir = mcec_sessions::user_home::home_from_user_database().map(|home| home.join(RECORD_DIR));
        StopRecords { dir, scope: Scope::for_display(Some(display)) }
    }

    #[cfg(test)]
    pub(crate) fn at(dir: PathBuf, scope: Scope) -> StopRecords {
        StopRecords { dir: Ok(dir), scope }
    }

    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The file this process writes, for messages (`None` when the home is unknown).
    pub fn path(&self) -> Option<PathBuf> {
        self.dir.as_ref().ok().map(|dir| dir.join(self.own_file_name()))
    }

    fn own_file_name(&self) -> String {
        self.scope.file_name().unwrap_or_else(|| UNIDENTIFIED.to_string())
    }

    /// What the record's place holds now, with a place that holds nothing tried for a write
    /// ([`StopRecords::probe`]): [`Observation::Absent`] only when a record could be written.
    pub fn look(&self) -> Observation {
        match self.observe() {
            Observation::Absent => match self.probe() {
                Ok(()) => Observation::Absent,
                Err(why) => Observation::Unusable(why),
            },
            seen => seen,
        }
    }

    /// What the applicable record says now.
    pub fn observe(&self) -> Observation {
        let dir = match &self.dir {
            Ok(dir) => dir,
            Err(why) => return Observation::Unusable(format!("no home directory to keep it in: {why}")),
        };
        match (&self.scope, self.scope.file_name()) {
            (Scope::NoDisplay, _) => Observation::Absent,
            (_, Some(name)) => read_record(&dir.join(name)),
            (_, None) => observe_all(dir),
        }
    }

    /// Whether a record could be written now: the directory is made if missing, and a file
    /// is created and written in it for real (on Linux an unnamed `O_TMPFILE`, so nobody
    /// watching the directory sees it), which a read-only or immutable directory, a
    /// read-only mount or a full disk refuses. The error names the directory and the reason.
    pub fn probe(&self) -> Result<(), String> {
        if self.scope == Scope::NoDisplay {
            return Ok(());
        }
        let dir = self.make_dir()?;
        probe_write(dir).map_err(|e| format!("cannot write in {}: {e}", dir.display()))
    }

    fn make_dir(&self) -> Result<&Path, String> {
        let dir = self.dir.as_ref().map_err(|why| format!("no home directory to keep it in: {why}"))?;
        mcec_sessions::os::private_dir(DirBuilder::new().recursive(true))
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(dir)
    }

    /// Record the stop `id` that engaged for `reason` at `wall` (written atomically, mode
    /// 0600, replacing whatever regular file or FIFO was there).
    pub fn record(&self, reason: &str, wall: SystemTime, id: StopId) -> Result<(), String> {
        if self.scope == Scope::NoDisplay {
            return Ok(());
        }
        let dir = self.make_dir()?;
        let secs = wall.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let text = stop_record::render(reason, secs, std::process::id(), id);
        mcec_sessions::atomic::write_atomic(dir, &self.own_file_name(), text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", dir.join(self.own_file_name()).display()))
    }

    /// Remove this process's record after a physical re-arm. A record that is already gone
    /// is fine, and so is a directory in its place (no record; the follower reports the place
    /// as unusable); a record that cannot be removed is an error (and keeps the stop for
    /// everyone).
    pub fn clear(&self) -> Result<(), String> {
        if self.scope == Scope::NoDisplay {
            return Ok(());
        }
        let Some(path) = self.path() else {
            return Err(self.dir.clone().err().unwrap_or_default());
        };
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            return Ok(());
        }
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("cannot remove {}: {e}; delete it by hand", path.display())),
        }
    }
}

/// The desktop this process acts on: on a Wayland backend (sway's or a wlroots compositor's, chosen with the backend, by
/// `platform::wayland_backend`) the Wayland display in `WAYLAND_DISPLAY`, whatever `DISPLAY`
/// says; otherwise the X display in `DISPLAY`.
#[cfg(unix)]
fn this_desktop() -> Scope {
    if crate::platform::wayland_backend() {
        let var = |name: &str| std::env::var(name).ok();
        return wayland_scope_of(var("WAYLAND_DISPLAY").as_deref(), var("XDG_RUNTIME_DIR").as_deref());
    }
    x_display_scope()
}

/// The scope of the X display in `DISPLAY` (the display's guard meets there, also on sway,
/// where the operator's windows are on XWayland).
#[cfg(unix)]
pub fn x_display_scope() -> Scope {
    scope_of(std::env::var("DISPLAY").ok().as_deref())
}

#[cfg(unix)]
/// The scope of a Wayland display: its socket is `WAYLAND_DISPLAY` when that is an absolute
/// path, else `XDG_RUNTIME_DIR/WAYLAND_DISPLAY` (where libwayland looks), with symlinks
/// resolved so every spelling of one socket is one display. A socket that cannot be resolved
/// (gone, no runtime directory, not UTF-8) cannot be pinned down: [`Scope::AnyDisplay`].
fn wayland_scope_of(wayland_display: Option<&str>, runtime_dir: Option<&str>) -> Scope {
    let Ok(path) = mcec_desktop_wayland::choice::socket_of(wayland_display, runtime_dir) else {
        return Scope::AnyDisplay;
    };
    match std::fs::canonicalize(&path) {
        Ok(real) => real.to_str().map_or(Scope::AnyDisplay, Scope::for_wayland_socket),
        Err(_) => Scope::AnyDisplay,
    }
}

/// The desktop this process acts on: the user's one interactive desktop, recorded as display 0
/// (a `DISPLAY` that Wine passes through says nothing about a Windows desktop).
#[cfg(windows)]
fn this_desktop() -> Scope {
    Scope::Display(0)
}

#[cfg(unix)]
/// The scope of a `DISPLAY` value; a socket path is resolved first, so a symlink to a
/// display's socket is the same display.
fn scope_of(display: Option<&str>) -> Scope {
    let path = display.and_then(|d| d.strip_prefix("unix:").filter(|p| p.starts_with('/')).or(Some(d)));
    if let Some(path) = path.filter(|p| p.starts_with('/')) {
        let socket = path.rsplit_once('.').map_or(path, |(p, _)| p);
        for candidate in [path, socket] {
            if let Ok(real) = std::fs::canonicalize(candidate) {
                return Scope::for_socket_path(&real.to_string_lossy());
            }
        }
        return Scope::AnyDisplay;
    }
    Scope::for_display(display)
}

fn observe_all(dir: &Path) -> Observation {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Observation::Absent,
        Err(e) => return Observation::Unusable(format!("cannot list {}: {e}", dir.display())),
    };
    let mut seen = Vec::new();
    for entry in entries {
        match entry {
            // Names starting with a dot are the atomic writer's temporary files.
            Ok(entry) if entry.file_name().as_encoded_bytes().starts_with(b".") => {}
            Ok(entry) => seen.push(read_record(&entry.path())),
            Err(e) => seen.push(Observation::Unusable(format!("cannot list {}: {e}", dir.display()))),
        }
    }
    stop_record::strongest(seen)
}

fn read_record(path: &Path) -> Observation {
    let file = mcec_sessions::os::open_no_follow(path, OpenOptions::new().read(true));
    let file = match file {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Observation::Absent,
        Err(e) if mcec_sessions::os::open_error_is_not_regular(&e) => {
            return not_a_record(path, "a symbolic link or a socket");
        }
        Err(e) if e.kind() == ErrorKind::NotADirectory => {
            return Observation::Unusable(format!("cannot open {}: {e}", path.display()));
        }
        Err(e) => return Observation::Unreadable(format!("cannot open {}: {e}", path.display())),
    };
    let meta = match file.metadata() {
        Ok(meta) => meta,
        Err(e) => return Observation::Unreadable(format!("{}: {e}", path.display())),
    };
    if !meta.is_file() {
        return not_a_record(path, mcec_sessions::os::kind_in_words(&meta.file_type()));
    }
    match read_bounded(file) {
        Ok(bytes) => match stop_record::parse(&bytes) {
            Observation::Unreadable(why) => Observation::Unreadable(format!("{}: {why}", path.display())),
            seen => seen,
        },
        Err(e) => Observation::Unreadable(format!("{}: {e}", path.display())),
    }
}

fn not_a_record(path: &Path, what: &str) -> Observation {
    Observation::Unusable(format!("{} is {what}, not a stop record", path.display()))
}

fn read_bounded(file: File) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(MAX_RECORD_BYTES as u64 + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Create and write a file in `dir` and let it go: whether a record could be written there.
fn probe_write(dir: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let unnamed = OpenOptions::new().write(true).custom_flags(libc::O_TMPFILE).mode(0o600).open(dir);
        match unnamed {
            Ok(mut file) => return file.write_all(&[0; 512]),
            // A file system without unnamed files: fall through to a named probe.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)) => {}
            Err(e) => return Err(e),
        }
    }
    let mut suffix = [0u8; 6];
    getrandom::fill(&mut suffix).map_err(|e| std::io::Error::other(format!("no OS randomness: {e}")))?;
    let path = dir.join(format!(".probe-{}", hex::encode(suffix)));
    let written = mcec_sessions::os::private_file(OpenOptions::new().write(true).create_new(true))
        .open(&path)
        .and_then(|mut file| file.write_all(&[0; 512]));
    let _ = std::fs::remove_file(&path);
    written
}

/// A new stop id from the OS's randomness; without any, from the clock and the process id,
/// so a new stop still differs from the ones a process was re-armed from.
pub fn fresh_stop_id() -> StopId {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        bytes = (nanos ^ u64::from(std::process::id()).rotate_left(40)).to_be_bytes();
    }
    StopId::from_bytes(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn records(dir: &Path, scope: Scope) -> StopRecords {
        StopRecords::at(dir.join("stop"), scope)
    }

    #[test]
    fn a_recorded_stop_is_seen_until_it_is_cleared() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mine = records(tmp.path(), Scope::Display(7));
        let other = records(tmp.path(), Scope::Display(8));
        assert_eq!(mine.observe(), Observation::Absent);
        let id = fresh_stop_id();
        assert_ne!(id, fresh_stop_id());
        mine.record("operator pressed Ctrl+Alt+Shift+S", SystemTime::now(), id).expect("record");
        assert_eq!(
            mine.observe(),
            Observation::Stopped { reason: "operator pressed Ctrl+Alt+Shift+S".into(), id: Some(id) }
        );
        assert_eq!(other.observe(), Observation::Absent);
        assert!(records(tmp.path(), Scope::AnyDisplay).observe().is_stop());
        let path = mine.path().expect("path");
        assert_eq!(std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777, 0o600);
        assert_eq!(
            std::fs::metadata(path.parent().expect("dir")).expect("meta").permissions().mode() & 0o777,
            0o700
        );
        mine.clear().expect("clear");
        mine.clear().expect("clearing twice is fine");
        assert_eq!(mine.observe(), Observation::Absent);
    }

    #[test]
    fn garbage_is_a_stop_and_anything_else_in_its_place_is_unusable() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mine = records(tmp.path(), Scope::Display(3));
        let path = mine.path().expect("path");
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");

        std::fs::write(&path, "garbage").expect("write");
        assert!(matches!(mine.observe(), Observation::Unreadable(w) if w.contains("does not start with")));
        std::fs::remove_file(&path).expect("rm");

        let unusable = |what: &str| {
            let seen = mine.look();
            assert!(
                matches!(&seen, Observation::Unusable(w) if w.contains(what) && w.contains("display-3")),
                "{what}: {seen:?}"
            );
        };
        std::os::unix::fs::symlink("/dev/zero", &path).expect("symlink");
        unusable("symbolic link");
        std::fs::remove_file(&path).expect("rm");

        std::fs::create_dir(&path).expect("mkdir");
        unusable("a directory");
        mine.clear().expect("a directory in its place is no record to clear");
        assert!(mine.record("r", SystemTime::now(), fresh_stop_id()).is_err());
        unusable("a directory");
        std::fs::remove_dir(&path).expect("rmdir");

        let fifo = std::process::Command::new("mkfifo").arg(&path).status().expect("mkfifo");
        assert!(fifo.success());
        unusable("a FIFO");
        let id = fresh_stop_id();
        mine.record("r", SystemTime::now(), id).expect("a record replaces a FIFO");
        assert_eq!(mine.look(), Observation::Stopped { reason: "r".into(), id: Some(id) });
        std::fs::remove_file(&path).expect("rm");

        assert_eq!(mine.look(), Observation::Absent, "the positive control: nothing there, no stop");
        let nowhere = StopRecords { dir: Err("no passwd entry".into()), scope: Scope::Display(3) };
        assert!(matches!(nowhere.look(), Observation::Unusable(_)));
        assert!(nowhere.record("r", SystemTime::now(), fresh_stop_id()).is_err());
        let headless = records(tmp.path(), Scope::NoDisplay);
        std::fs::write(&path, "garbage").expect("write");
        assert_eq!(headless.look(), Observation::Absent, "no display, no record applies");
    }

    #[test]
    fn a_place_where_nothing_can_be_written_is_unusable() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mine = records(tmp.path(), Scope::Display(4));
        assert_eq!(mine.look(), Observation::Absent, "the positive control");
        // A file where the directory should be: nothing can be created under it, even by root.
        let blocked = StopRecords::at(tmp.path().join("file"), Scope::Display(4));
        std::fs::write(tmp.path().join("file"), "x").expect("write");
        let seen = blocked.look();
        assert!(matches!(&seen, Observation::Unusable(w) if w.contains("file")), "{seen:?}");
        assert_eq!(
            std::fs::read_dir(mine.path().and_then(|p| p.parent().map(Path::to_path_buf)).expect("dir"))
                .expect("ls")
                .count(),
            0,
            "the probe leaves nothing"
        );
    }

    #[test]
    fn a_socket_path_or_a_symlink_to_it_is_its_display() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let number = 60_000 + std::process::id() % 5_000;
        if std::fs::create_dir("/tmp/.X11-unix").is_ok() {
            // Made here first: give it the mode the X servers expect of it.
            std::fs::set_permissions("/tmp/.X11-unix", std::fs::Permissions::from_mode(0o1777))
                .expect("chmod");
        }
        let socket = PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
        let _ = std::fs::remove_file(&socket);
        let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind a stand-in X socket");
        let link = tmp.path().join("x");
        std::os::unix::fs::symlink(&socket, &link).expect("symlink");
        let seen = [
            scope_of(Some(&link.to_string_lossy())),
            scope_of(Some(&format!("unix:{}.0", link.display()))),
            scope_of(Some(&socket.to_string_lossy())),
        ];
        drop(listener);
        let _ = std::fs::remove_file(&socket);
        assert_eq!(seen, [Scope::Display(number), Scope::Display(number), Scope::Display(number)]);
        assert_eq!(scope_of(Some("/nonexistent/socket")), Scope::AnyDisplay);
        assert_eq!(scope_of(Some(&tmp.path().to_string_lossy())), Scope::AnyDisplay);
        assert_eq!(scope_of(Some(":3.0")), Scope::Display(3));
        assert_eq!(scope_of(None), Scope::NoDisplay);
    }

    #[test]
    fn a_wayland_display_is_its_resolved_socket_and_its_record_is_its_own() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let runtime = tmp.path().join("run");
        std::fs::create_dir(&runtime).expect("mkdir");
        let socket = runtime.join("wayland-1");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind a stand-in socket");
        std::os::unix::fs::symlink(&runtime, tmp.path().join("link")).expect("symlink");
        let real = std::fs::canonicalize(&socket).expect("resolve").to_string_lossy().into_owned();
        let run = runtime.to_string_lossy().into_owned();
        let seen = [
            wayland_scope_of(Some("wayland-1"), Some(&run)),
            wayland_scope_of(Some("wayland-1"), Some(&format!("{run}/"))),
            wayland_scope_of(Some("wayland-1"), Some(&tmp.path().join("link").to_string_lossy())),
            wayland_scope_of(Some(&real), None),
        ];
        assert_eq!(seen, [(); 4].map(|()| Scope::Wayland(real.clone())));
        assert_eq!(wayland_scope_of(Some("wayland-9"), Some(&run)), Scope::AnyDisplay, "no such socket");
        assert_eq!(wayland_scope_of(Some("wayland-1"), None), Scope::AnyDisplay, "no runtime directory");
        assert_eq!(wayland_scope_of(None, Some(&run)), Scope::AnyDisplay);

        // Its record stops it; an X display's or another Wayland display's does not.
        let dir = tmp.path().join("stop");
        let mine = StopRecords::at(dir.clone(), Scope::Wayland(real.clone()));
        let other = StopRecords::at(dir.clone(), Scope::Wayland(format!("{real}-2")));
        let x = StopRecords::at(dir.clone(), Scope::Display(1));
        other.record("elsewhere", SystemTime::now(), fresh_stop_id()).expect("record");
        x.record("on X", SystemTime::now(), fresh_stop_id()).expect("record");
        assert_eq!(mine.look(), Observation::Absent);
        let id = fresh_stop_id();
        mine.record("chord", SystemTime::now(), id).expect("record");
        assert_eq!(mine.observe(), Observation::Stopped { reason: "chord".into(), id: Some(id) });
        assert!(
            mine.path().expect("path").file_name().expect("name").to_string_lossy().starts_with("wayland-")
        );
        mine.clear().expect("clear");
        assert_eq!(mine.observe(), Observation::Absent);
        assert!(x.observe().is_stop() && other.observe().is_stop());
        // A display that cannot be identified gets every record, a Wayland display's too.
        x.clear().expect("clear");
        other.clear().expect("clear");
        mine.record("chord", SystemTime::now(), id).expect("record");
        assert!(StopRecords::at(dir, Scope::AnyDisplay).observe().is_stop());
    }
}
