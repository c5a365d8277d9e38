//! The durable stop record on disk: one small file per display under
//! `<home from the user database>/.local/state/mcec/stop/`, written the moment a stop
//! engages and removed by a physical re-arm. The rules (which record applies, what a file
//! says, what a running process does when it changes) are `mcec_rules::stop_record`; this
//! file only reads, writes and removes.
//!
//! Every read is fail closed: a record that is not a regular file, cannot be opened or read,
//! or a directory that cannot be listed, counts as a stop. Files are opened without following
//! symlinks and without blocking, so a FIFO or a device planted there cannot hang mcec.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use mcec_rules::stop_record::{self, MAX_RECORD_BYTES, Observation, Scope};

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
    /// For the user running this process and the display in `DISPLAY`.
    pub fn for_this_process() -> StopRecords {
        let dir = mcec_sessions::user_home::home_from_user_database().map(|home| home.join(RECORD_DIR));
        StopRecords { dir, scope: this_desktop() }
    }

    #[cfg(test)]
    fn at(dir: PathBuf, scope: Scope) -> StopRecords {
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

    /// What the applicable record says now.
    pub fn observe(&self) -> Observation {
        let dir = match &self.dir {
            Ok(dir) => dir,
            Err(why) => return Observation::Unreadable(format!("no home directory to keep it in: {why}")),
        };
        match (&self.scope, self.scope.file_name()) {
            (Scope::NoDisplay, _) => Observation::Absent,
            (_, Some(name)) => read_record(&dir.join(name)),
            (_, None) => observe_all(dir),
        }
    }

    /// Record a stop that engaged for `reason` at `wall` (written atomically, mode 0600).
    pub fn record(&self, reason: &str, wall: SystemTime) -> Result<(), String> {
        if self.scope == Scope::NoDisplay {
            return Ok(());
        }
        let dir = self.dir.as_ref().map_err(Clone::clone)?;
        mcec_sessions::os::private_dir(DirBuilder::new().recursive(true))
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let secs = wall.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let text = stop_record::render(reason, secs, std::process::id());
        mcec_sessions::atomic::write_atomic(dir, &self.own_file_name(), text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", dir.join(self.own_file_name()).display()))
    }

    /// Remove this process's record after a physical re-arm. A record that is already gone
    /// is fine; one that cannot be removed is an error (and keeps the stop for everyone).
    pub fn clear(&self) -> Result<(), String> {
        if self.scope == Scope::NoDisplay {
            return Ok(());
        }
        let Some(path) = self.path() else {
            return Err(self.dir.clone().err().unwrap_or_default());
        };
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("cannot remove {}: {e}; delete it by hand", path.display())),
        }
    }
}

/// The desktop this process acts on: the X display in `DISPLAY`.
#[cfg(unix)]
fn this_desktop() -> Scope {
    scope_of(std::env::var("DISPLAY").ok().as_deref())
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
        Err(e) => return Observation::Unreadable(format!("cannot list {}: {e}", dir.display())),
    };
    let mut seen = Vec::new();
    for entry in entries {
        match entry {
            // Names starting with a dot are the atomic writer's temporary files.
            Ok(entry) if entry.file_name().as_encoded_bytes().starts_with(b".") => {}
            Ok(entry) => seen.push(read_record(&entry.path())),
            Err(e) => seen.push(Observation::Unreadable(format!("cannot list {}: {e}", dir.display()))),
        }
    }
    stop_record::strongest(seen)
}

fn read_record(path: &Path) -> Observation {
    let file = mcec_sessions::os::open_no_follow(path, OpenOptions::new().read(true));
    let file = match file {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Observation::Absent,
        Err(e) => return Observation::Unreadable(format!("cannot open {}: {e}", path.display())),
    };
    match read_regular(file) {
        Ok(bytes) => match stop_record::parse(&bytes) {
            Observation::Unreadable(why) => Observation::Unreadable(format!("{}: {why}", path.display())),
            seen => seen,
        },
        Err(why) => Observation::Unreadable(format!("{}: {why}", path.display())),
    }
}

fn read_regular(file: File) -> Result<Vec<u8>, String> {
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.take(MAX_RECORD_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
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
        mine.record("operator pressed Ctrl+Alt+Shift+S", SystemTime::now()).expect("record");
        assert_eq!(
            mine.observe(),
            Observation::Stopped { reason: "operator pressed Ctrl+Alt+Shift+S".into() }
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
    fn anything_but_a_readable_record_is_a_stop() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mine = records(tmp.path(), Scope::Display(3));
        let path = mine.path().expect("path");
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");

        std::fs::write(&path, "garbage").expect("write");
        assert!(matches!(mine.observe(), Observation::Unreadable(w) if w.contains("does not start with")));
        std::fs::remove_file(&path).expect("rm");

        std::os::unix::fs::symlink("/dev/zero", &path).expect("symlink");
        assert!(matches!(mine.observe(), Observation::Unreadable(_)));
        std::fs::remove_file(&path).expect("rm");

        std::fs::create_dir(&path).expect("mkdir");
        assert!(matches!(mine.observe(), Observation::Unreadable(w) if w.contains("not a regular file")));
        assert!(mine.clear().is_err(), "a directory in the record's place is not silently kept");
        std::fs::remove_dir(&path).expect("rmdir");

        let fifo = std::process::Command::new("mkfifo").arg(&path).status().expect("mkfifo");
        assert!(fifo.success());
        assert!(matches!(mine.observe(), Observation::Unreadable(w) if w.contains("not a regular file")));
        std::fs::remove_file(&path).expect("rm");

        assert_eq!(mine.observe(), Observation::Absent, "the positive control: nothing there, no stop");
        let nowhere = StopRecords { dir: Err("no passwd entry".into()), scope: Scope::Display(3) };
        assert!(matches!(nowhere.observe(), Observation::Unreadable(_)));
        assert!(nowhere.record("r", SystemTime::now()).is_err());
        let headless = records(tmp.path(), Scope::NoDisplay);
        std::fs::write(&path, "garbage").expect("write");
        assert_eq!(headless.observe(), Observation::Absent, "no display, no record applies");
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
}
