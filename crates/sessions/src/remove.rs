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
//! 5. [`std::fs::remove_dir_all`] itself never follows symlinks (it unlinks them and works
//!    through directory descriptors), so a link inside a session pointing elsewhere loses only
//!    the link, never its target.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::id::SessionId;
use crate::lock::{InstanceLock, LockError, lock_file_is_unusable};
use crate::paths::session_id_of_dir;

/// The deleters' lock file in the sessions root.
pub const ROOT_LOCK_FILE: &str = ".mcec-sessions.lock";

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
    /// `<root>/<id>` exists but is not a provisioned session directory (a symlink, a file, or a
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
                write!(f, "{id} in the sessions root is not a provisioned session directory")
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
            return Err(RemoveError::BadRoot(format!(
                "the sessions root {} is not a directory",
                root.display()
            )));
        }
        let path = root.join(ROOT_LOCK_FILE);
        let bad = |e: std::io::Error| RemoveError::BadRoot(format!("cannot lock {}: {e}", path.display()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(bad)?;
        file.lock().map_err(bad)?;
        Ok(Some(DeletionGuard { root, _lock: file }))
    }

    /// The canonical sessions root.
    pub(crate) fn root(&self) -> &Path {
        &self.root
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
        #[allow(clippy::disallowed_methods, reason = "the one guarded call site")]
        let removed = std::fs::remove_dir_all(&dir);
        match removed {
            Ok(()) => {
                tracing::debug!(session = %id, "session directory removed");
                Ok(Removal::Removed)
            }
            Err(e) if e.kind() == ErrorKind::NotFound && !dir.exists() => Ok(Removal::AlreadyGone),
            Err(e) => Err(io(e)),
        }
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

#[cfg(test)]
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
}
