//! The one guarded way a session directory is deleted.
//!
//! `end-session`, the reaper, `mcec sessions rm` and the clean-up of a failed provision all come
//! here; nothing else in this crate deletes a directory tree. The guards, in order:
//!
//! 1. Deleters serialise on `<root>/.mcec-sessions.lock`, so two concurrent deletes of one
//!    session give one `Removed` and one `AlreadyGone`, never an error or a false "running".
//! 2. The sessions root is canonicalised and the target is `<root>/<id>` with a parsed
//!    [`SessionId`], so the path cannot name anything but a direct child of the root.
//! 3. The target must be a real directory (a symlink named like a session is refused, never
//!    followed) holding the creation stamp, and its real path must lie inside the root.
//! 4. The session's own instance lock is taken and held during the removal: a running copy is
//!    reported as [`RemoveError::Running`], and a copy cannot start half-way through.
//! 5. The directory is first renamed, in one step, to a tombstone `.mcec-removing-<id>-<random>`
//!    in the root, and only then deleted. A session is therefore either whole under its id or
//!    gone: a deletion that fails half-way (a file appearing in it, a permission) leaves a
//!    tombstone, which the reaper deletes, never a stampless directory nobody can remove.
//! 6. [`std::fs::remove_dir_all`] itself never follows symlinks (it unlinks them and works
//!    through directory descriptors), so a link inside a session pointing elsewhere loses only
//!    the link, never its target.
//!
//! The scratch directories in the root (tombstones, and the `.mcec-building-*` directories a
//! provision fills before renaming them into place) are removed by [`remove_scratch_dir`].

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::id::SessionId;
use crate::lock::{InstanceLock, LockError, lock_file_is_unusable};
use crate::paths::session_id_of_dir;

/// The deleters' lock file in the sessions root.
pub const ROOT_LOCK_FILE: &str = ".mcec-sessions.lock";
/// Prefix of a session directory being deleted.
pub const TOMBSTONE_PREFIX: &str = ".mcec-removing-";
/// Prefix of a session directory being built by a provision.
pub const BUILDING_PREFIX: &str = ".mcec-building-";

/// A scratch name `<prefix><id>-<random>` (or `<prefix><random>`) in the sessions root.
pub(crate) fn scratch_name(prefix: &str, id: Option<&SessionId>) -> std::io::Result<String> {
    let mut suffix = [0u8; 8];
    getrandom::fill(&mut suffix).map_err(|e| std::io::Error::other(format!("no OS randomness: {e}")))?;
    Ok(match id {
        Some(id) => format!("{prefix}{id}-{}", hex::encode(suffix)),
        None => format!("{prefix}{}", hex::encode(suffix)),
    })
}

/// Whether `name` is one of the scratch directories this module may remove.
pub fn is_scratch_name(name: &str) -> bool {
    name.strip_prefix(TOMBSTONE_PREFIX).or_else(|| name.strip_prefix(BUILDING_PREFIX)).is_some_and(|rest| {
        !rest.is_empty()
            && rest.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase() || b == b'-')
    })
}

/// What a successful removal found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// The directory existed and is now gone.
    Removed,
    /// There was nothing to remove.
    AlreadyGone,
}

/// Why a session directory was not removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoveError {
    /// The session's instance holds its lock; stop it first.
    Running(SessionId),
    /// `<root>/<id>` exists but is not a session directory (a symlink, a file, or a
    /// directory without the creation stamp). It is left alone.
    NotASession(SessionId),
    /// The directory resolves outside the sessions root. It is left alone.
    Outside(SessionId),
    /// The sessions root is not a usable directory.
    BadRoot(String),
    /// The file system refused; the removal may be partial (the reaper will try again).
    Io { id: SessionId, error: String },
}

impl fmt::Display for RemoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoveError::Running(id) => {
                write!(f, "session {id} is running (its instance holds the lock); stop it first")
            }
            RemoveError::NotASession(id) => {
                write!(f, "{id} in the sessions root is not a session directory")
            }
            RemoveError::Outside(id) => {
                write!(f, "session {id} resolves outside the sessions root; refusing to remove it")
            }
            RemoveError::BadRoot(why) => write!(f, "{why}"),
            RemoveError::Io { id, error } => write!(f, "could not remove session {id}: {error}"),
        }
    }
}

impl std::error::Error for RemoveError {}

/// Proof that this thread holds the deleters' lock on a canonical sessions root.
pub(crate) struct DeletionGuard {
    root: PathBuf,
    _lock: File,
}

impl DeletionGuard {
    /// Locks the deleters' lock of `sessions_root`, waiting for any other deleter. `Ok(None)`
    /// when the root does not exist (then no session exists either).
    pub(crate) fn lock(sessions_root: &Path) -> Result<Option<DeletionGuard>, RemoveError> {
        let Some(root) = resolve_root(sessions_root)? else {
            return Ok(None);
        };
        let path = root.join(ROOT_LOCK_FILE);
        let bad = |e: std::io::Error| RemoveError::BadRoot(format!("cannot lock {}: {e}", path.display()));
        let file = crate::safe_open::open_regular(
            &path,
            crate::os::private_file(OpenOptions::new().read(true).write(true).create(true)),
        )
        .map_err(bad)?;
        file.lock().map_err(bad)?;
        Ok(Some(DeletionGuard { root, _lock: file }))
    }

    /// Removes `<root>/<id>` under every guard listed in the module doc.
    pub(crate) fn remove(&self, id: &SessionId) -> Result<Removal, RemoveError> {
        let dir = self.root.join(id.as_str());
        let io = |e: std::io::Error| RemoveError::Io { id: *id, error: e.to_string() };
        let meta = match std::fs::symlink_metadata(&dir) {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Removal::AlreadyGone),
            Err(e) => return Err(io(e)),
        };
        if !meta.file_type().is_dir() || session_id_of_dir(&dir) != Some(*id) {
            return Err(RemoveError::NotASession(*id));
        }
        let real = dir.canonicalize().map_err(io)?;
        if real != dir || !real.starts_with(&self.root) {
            return Err(RemoveError::Outside(*id));
        }
        let _instance = match InstanceLock::acquire_for_removal(&dir) {
            Ok(lock) => Some(lock),
            Err(LockError::HeldByOther { .. }) => return Err(RemoveError::Running(*id)),
            Err(LockError::Io { error, .. }) if lock_file_is_unusable(&error) => None,
            Err(LockError::Io { error, .. }) => return Err(io(error)),
        };
        let tombstone = self.root.join(scratch_name(TOMBSTONE_PREFIX, Some(id)).map_err(io)?);
        match std::fs::rename(&dir, &tombstone) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound && !dir.exists() => return Ok(Removal::AlreadyGone),
            Err(e) => return Err(io(e)),
        }
        if let Err(e) = delete_tree(&tombstone) {
            tracing::warn!(session = %id, "session removed, but its tombstone {} is left for the reaper: {e}", tombstone.display());
        } else {
            tracing::debug!(session = %id, "session directory removed");
        }
        Ok(Removal::Removed)
    }

    /// Removes the scratch directory `name` (see [`is_scratch_name`]) from the root. A
    /// directory being built is removed only when no provision holds its lock.
    pub(crate) fn remove_scratch(&self, name: &str) -> std::io::Result<Removal> {
        if !is_scratch_name(name) {
            return Err(std::io::Error::new(
                ErrorKind::InvalidInput,
                format!("{name} is not a scratch name"),
            ));
        }
        let dir = self.root.join(name);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.file_type().is_dir() => {}
            Ok(_) => {
                return Err(std::io::Error::new(
                    ErrorKind::InvalidInput,
                    format!("{name} is not a directory"),
                ));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Removal::AlreadyGone),
            Err(e) => return Err(e),
        }
        if name.starts_with(BUILDING_PREFIX) && building_dir_is_held(&dir) {
            return Err(std::io::Error::new(ErrorKind::WouldBlock, format!("{name} is being built")));
        }
        delete_tree(&dir)?;
        Ok(Removal::Removed)
    }
}

/// The canonical sessions root; `None` when it does not exist.
pub(crate) fn resolve_root(sessions_root: &Path) -> Result<Option<PathBuf>, RemoveError> {
    let root = match sessions_root.canonicalize() {
        Ok(r) => r,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(RemoveError::BadRoot(format!(
                "cannot resolve the sessions root {}: {e}",
                sessions_root.display()
            )));
        }
    };
    if !root.is_dir() {
        return Err(RemoveError::BadRoot(format!("the sessions root {} is not a directory", root.display())));
    }
    Ok(Some(root))
}

/// A provision holds an exclusive lock on the directory it builds (see `provision.rs`).
pub(crate) fn lock_building_dir(dir: &Path) -> std::io::Result<File> {
    crate::os::lock_dir(dir)
}

fn building_dir_is_held(dir: &Path) -> bool {
    crate::os::dir_lock_is_held(dir)
}

/// Deletes the tree at `path`, never following a symlink out of it.
fn delete_tree(path: &Path) -> std::io::Result<()> {
    crate::os::refuse_links_out_of(path)?;
    #[allow(clippy::disallowed_methods, reason = "the one guarded call site")]
    std::fs::remove_dir_all(path)
}

/// Removes the scratch directory `name` from the sessions root under the deleters' lock.
pub fn remove_scratch_dir(sessions_root: &Path, name: &str) -> Result<Removal, String> {
    let guard = DeletionGuard::lock(sessions_root).map_err(|e| e.to_string())?;
    match guard {
        Some(guard) => guard.remove_scratch(name).map_err(|e| format!("cannot remove {name}: {e}")),
        None => Ok(Removal::AlreadyGone),
    }
}

/// Removes the session `id` from `sessions_root`: the single guarded removal (see module doc).
pub fn remove_session_dir(sessions_root: &Path, id: &SessionId) -> Result<Removal, RemoveError> {
    match DeletionGuard::lock(sessions_root)? {
        Some(guard) => guard.remove(id),
        None => Ok(Removal::AlreadyGone),
    }
}

/// The outcome of `mcec sessions rm --all`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoveAllReport {
    pub removed: Vec<SessionId>,
    pub skipped_running: Vec<SessionId>,
    pub errors: Vec<String>,
}

/// Removes every session in `sessions_root` that is not running. Running sessions are named
/// in the report, never touched.
pub fn remove_all_sessions(sessions_root: &Path) -> RemoveAllReport {
    let mut report = RemoveAllReport::default();
    for summary in crate::list::list_sessions(sessions_root) {
        match remove_session_dir(sessions_root, &summary.id) {
            Ok(Removal::Removed) => report.removed.push(summary.id),
            Ok(Removal::AlreadyGone) => {}
            Err(RemoveError::Running(id)) => report.skipped_running.push(id),
            Err(e) => report.errors.push(e.to_string()),
        }
    }
    report
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::paths::STAMP_FILE;

    fn make_session(root: &Path, id: &str) -> (SessionId, PathBuf) {
        let id = SessionId::parse(id).expect("id");
        let dir = root.join(id.as_str());
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::write(dir.join(STAMP_FILE), b"1\n").expect("stamp");
        std::fs::write(dir.join("mcec.settings"), b"McpAuthToken = \"x\"\n").expect("settings");
        (id, dir)
    }

    #[test]
    fn removes_then_reports_gone() {
        let root = tempfile::tempdir().expect("tempdir");
        let (id, dir) = make_session(root.path(), "0123456789ab");
        assert_eq!(remove_session_dir(root.path(), &id), Ok(Removal::Removed));
        assert!(!dir.exists());
        assert_eq!(remove_session_dir(root.path(), &id), Ok(Removal::AlreadyGone));
        let missing = root.path().join("nope");
        assert_eq!(remove_session_dir(&missing, &id), Ok(Removal::AlreadyGone));
    }

    #[test]
    fn refuses_non_sessions_and_symlinked_dirs() {
        let root = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let (_, real) = make_session(outside.path(), "0000000000aa");
        let id = SessionId::parse("0000000000aa").expect("id");
        std::os::unix::fs::symlink(&real, root.path().join(id.as_str())).expect("symlink");
        assert_eq!(remove_session_dir(root.path(), &id), Err(RemoveError::NotASession(id)));
        assert!(real.join(STAMP_FILE).exists(), "target of the symlink untouched");

        let plain = SessionId::parse("0000000000bb").expect("id");
        std::fs::create_dir(root.path().join(plain.as_str())).expect("mkdir");
        assert_eq!(remove_session_dir(root.path(), &plain), Err(RemoveError::NotASession(plain)));
        assert!(root.path().join(plain.as_str()).exists());
    }

    #[test]
    fn running_session_is_kept() {
        let root = tempfile::tempdir().expect("tempdir");
        let (id, dir) = make_session(root.path(), "0123456789ab");
        let held = InstanceLock::acquire(&dir).expect("lock");
        assert_eq!(remove_session_dir(root.path(), &id), Err(RemoveError::Running(id)));
        assert!(dir.join(STAMP_FILE).exists());
        drop(held);
        assert_eq!(remove_session_dir(root.path(), &id), Ok(Removal::Removed));
    }

    #[test]
    fn symlink_lock_file_does_not_block_removal() {
        let root = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let victim = outside.path().join("victim");
        std::fs::write(&victim, b"keep").expect("write");
        let (id, dir) = make_session(root.path(), "0123456789ab");
        std::os::unix::fs::symlink(&victim, dir.join(crate::paths::LOCK_FILE)).expect("link");
        assert_eq!(remove_session_dir(root.path(), &id), Ok(Removal::Removed));
        assert_eq!(std::fs::read(&victim).expect("read"), b"keep");
    }

    #[test]
    fn root_that_is_a_file_is_a_clear_error() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let file = tmp.path().join("sessions");
        std::fs::write(&file, b"").expect("write");
        let id = SessionId::parse("0123456789ab").expect("id");
        match remove_session_dir(&file, &id) {
            Err(RemoveError::BadRoot(why)) => assert!(why.contains("not a directory"), "{why}"),
            other => panic!("expected BadRoot, got {other:?}"),
        }
    }

    #[test]
    fn remove_all_skips_running() {
        let root = tempfile::tempdir().expect("tempdir");
        let (a, _) = make_session(root.path(), "00000000000a");
        let (b, bdir) = make_session(root.path(), "00000000000b");
        let held = InstanceLock::acquire(&bdir).expect("lock");
        let report = remove_all_sessions(root.path());
        assert_eq!(report.removed, vec![a]);
        assert_eq!(report.skipped_running, vec![b]);
        assert!(report.errors.is_empty());
        drop(held);
    }

    fn chattr(flag: &str, path: &Path) -> bool {
        std::process::Command::new("chattr").arg(flag).arg(path).status().is_ok_and(|s| s.success())
    }

    #[test]
    fn a_failed_delete_leaves_a_tombstone_the_scratch_removal_takes() {
        let root = tempfile::tempdir().expect("tempdir");
        let (id, dir) = make_session(root.path(), "0123456789ab");
        // An immutable file cannot be unlinked, even by root: the tree deletion fails half-way.
        let pinned = dir.join("pinned");
        std::fs::write(&pinned, b"x").expect("write");
        if !chattr("+i", &pinned) {
            eprintln!("chattr +i is not available here; the failure half of this test did not run");
            return;
        }
        let removed = remove_session_dir(root.path(), &id);
        let left: Vec<String> = std::fs::read_dir(root.path())
            .expect("ls")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != ROOT_LOCK_FILE)
            .collect();
        for name in &left {
            chattr("-i", &root.path().join(name).join("pinned"));
        }
        assert_eq!(removed, Ok(Removal::Removed));
        assert!(!dir.exists(), "the id is free at once: no stampless directory under it");
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left[0].starts_with(TOMBSTONE_PREFIX) && is_scratch_name(&left[0]), "{left:?}");
        assert_eq!(remove_scratch_dir(root.path(), &left[0]), Ok(Removal::Removed));
        assert_eq!(std::fs::read_dir(root.path()).expect("ls").count(), 1, "only the root lock is left");
    }

    #[test]
    fn scratch_removal_takes_only_scratch_names_and_spares_a_held_building_dir() {
        let root = tempfile::tempdir().expect("tempdir");
        for bad in ["0123456789ab", ".mcec-removing-", ".mcec-removing-../x", "other", ".mcec-building-ABC"] {
            assert!(!is_scratch_name(bad), "{bad}");
        }
        let name = scratch_name(BUILDING_PREFIX, None).expect("name");
        let dir = root.path().join(&name);
        std::fs::create_dir(&dir).expect("mkdir");
        let held = lock_building_dir(&dir).expect("lock");
        assert!(remove_scratch_dir(root.path(), &name).is_err(), "held: kept");
        assert!(dir.exists());
        drop(held);
        assert_eq!(remove_scratch_dir(root.path(), &name), Ok(Removal::Removed));
        assert!(!dir.exists());
    }
}
