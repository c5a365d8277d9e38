//! The instance lock: how "this copy is running" is signalled on Linux.
//!
//! A running executable is not locked on Linux, so a running mcec holds an exclusive `flock`
//! on `<its dir>/.mcec.lock` for its whole life (through [`std::fs::File::try_lock`], no
//! `unsafe`). The kernel drops the lock when the last descriptor closes, which includes a
//! crash or `kill -9`: the signal can never outlive the process.
//!
//! `flock` locks belong to an *open file description*, so two separate `File::open`s of the
//! lock file conflict even inside one process; the tests rely on that.
//!
//! The lock file is opened through [`crate::safe_open`]: a symlink, FIFO, socket or directory
//! planted at `.mcec.lock` is never followed or waited on, no instance can lock it, and every
//! probe answers at once.

use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::paths::LOCK_FILE;

/// How many times, and how far apart, a starting instance tries again when it finds its lock
/// held: a listing ([`is_locked`]; the host's Agent tab lists every 2 s) holds it for an
/// instant while it probes, and that must not make the copy refuse to start.
const PROBE_RETRIES: u32 = 5;
const PROBE_PAUSE: Duration = Duration::from_millis(10);

/// A held instance lock. Keep it alive for as long as the instance runs; dropping it (or the
/// process dying) releases the lock.
#[derive(Debug)]
pub struct InstanceLock {
    file: File,
    path: PathBuf,
}

/// Why the lock could not be taken.
#[derive(Debug)]
pub enum LockError {
    /// Another open lock file (normally another running instance) holds it. `pid` is the
    /// process id the holder wrote into the file, when it could be read.
    HeldByOther { path: PathBuf, pid: Option<u32> },
    /// The lock file could not be opened or locked.
    Io { path: PathBuf, error: std::io::Error },
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::HeldByOther { path, pid: Some(pid) } => write!(
                f,
                "another mcec instance (pid {pid}) is already running from this directory (it holds {})",
                path.display()
            ),
            LockError::HeldByOther { path, pid: None } => write!(
                f,
                "another mcec instance is already running from this directory (it holds {})",
                path.display()
            ),
            LockError::Io { path, error } => {
                write!(f, "cannot take the instance lock {}: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for LockError {}

fn open_lock_file(path: &Path, create: bool) -> std::io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    if create {
        crate::os::private_file(opts.write(true).create(true));
    }
    crate::safe_open::open_regular(path, &mut opts)
}

impl InstanceLock {
    /// Takes the exclusive lock on `<dir>/.mcec.lock`, creating the file (mode 0600) if needed,
    /// and records this process id in it for diagnostics. Never blocks.
    pub fn acquire(dir: &Path) -> Result<InstanceLock, LockError> {
        Self::take(dir, true)
    }

    /// Takes the lock only to delete the directory: no pid is written. (Truncating the file
    /// makes its close flush to disk, which was most of the reaper's time per session.)
    pub(crate) fn acquire_for_removal(dir: &Path) -> Result<InstanceLock, LockError> {
        Self::take(dir, false)
    }

    /// Takes the exclusive lock on the file at `path` (not an instance directory's: the guard
    /// of a display, for one), as [`InstanceLock::acquire`] does. Never blocks.
    pub fn acquire_file(path: &Path) -> Result<InstanceLock, LockError> {
        Self::take_path(path.to_path_buf(), true)
    }

    fn take(dir: &Path, record_pid: bool) -> Result<InstanceLock, LockError> {
        Self::take_path(dir.join(LOCK_FILE), record_pid)
    }

    fn take_path(path: PathBuf, record_pid: bool) -> Result<InstanceLock, LockError> {
        let io_err = |error| LockError::Io { path: path.clone(), error };
        let mut file = open_lock_file(&path, true).map_err(io_err)?;
        // Only an instance's start waits out a probe; a removal treats a held lock as running.
        let retries = if record_pid { PROBE_RETRIES } else { 0 };
        match retry_while_busy(retries, PROBE_PAUSE, || file.try_lock()) {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let pid = read_pid(&mut file);
                return Err(LockError::HeldByOther { path, pid });
            }
            Err(TryLockError::Error(error)) => return Err(LockError::Io { path, error }),
        }
        if record_pid {
            // The pid is only a hint for error messages; failing to write it is harmless.
            let _ = file
                .set_len(0)
                .and_then(|()| file.seek(SeekFrom::Start(0)))
                .and_then(|_| writeln!(file, "{}", std::process::id()))
                .and_then(|()| file.flush());
        }
        Ok(InstanceLock { file, path })
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Releases the lock now (dropping the value does the same).
    pub fn release(self) {
        let _ = self.file.unlock();
    }
}

/// `attempt`, and up to `retries` more times `pause` apart while it answers `WouldBlock`.
fn retry_while_busy(
    retries: u32,
    pause: Duration,
    mut attempt: impl FnMut() -> Result<(), TryLockError>,
) -> Result<(), TryLockError> {
    let mut left = retries;
    loop {
        match attempt() {
            Err(TryLockError::WouldBlock) if left > 0 => {
                left -= 1;
                std::thread::sleep(pause);
            }
            other => return other,
        }
    }
}

/// Whether `error` (from opening a lock file) shows that the path can never be locked by an
/// instance: it is not a regular file (a symlink, FIFO, socket, device or directory).
pub(crate) fn lock_file_is_unusable(error: &std::io::Error) -> bool {
    crate::safe_open::is_not_regular(error)
}

fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// The process that holds the lock on the file at `path`, as the kernel's lock table says
/// (`crate::os::kernel_lock_holder`), never as the pid written in the file says: any process of
/// the user can write the file. `None` when nobody holds it or the table cannot be read.
pub fn holder_pid(path: &Path) -> Option<u32> {
    crate::os::kernel_lock_holder(&open_lock_file(path, false).ok()?)
}

/// Whether some instance holds the lock in `dir`. Probes by taking and releasing the lock, so
/// an instance starting in that instant would see it held and refuse to start; callers use
/// this for display and pre-checks only. A missing lock file means "not locked"; any other
/// failure to probe counts as locked, so a doubtful session is never treated as stopped.
pub fn is_locked(dir: &Path) -> bool {
    let path = dir.join(LOCK_FILE);
    let file = match open_lock_file(&path, false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        // No instance can hold anything but a regular file: `acquire` refuses the rest.
        Err(e) if lock_file_is_unusable(&e) => return false,
        Err(_) => return true,
    };
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(TryLockError::WouldBlock) => true,
        Err(TryLockError::Error(_)) => true,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn second_acquire_conflicts_until_release() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(!is_locked(dir.path()));
        let held = InstanceLock::acquire(dir.path()).expect("first lock");
        assert!(is_locked(dir.path()));
        match InstanceLock::acquire(dir.path()) {
            Err(LockError::HeldByOther { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected HeldByOther, got {other:?}"),
        }
        // A probe does not steal the lock.
        assert!(is_locked(dir.path()));
        held.release();
        assert!(!is_locked(dir.path()));
        let again = InstanceLock::acquire(dir.path()).expect("relock");
        drop(again);
        assert!(!is_locked(dir.path()));
    }

    #[test]
    fn a_lock_busy_for_an_instant_is_tried_again_and_a_held_one_is_given_up() {
        let mut calls = 0;
        let brief = retry_while_busy(5, Duration::ZERO, || {
            calls += 1;
            if calls < 3 { Err(TryLockError::WouldBlock) } else { Ok(()) }
        });
        assert!(brief.is_ok() && calls == 3, "taken on the third try, {calls} tries");
        let mut calls = 0;
        let held = retry_while_busy(5, Duration::ZERO, || {
            calls += 1;
            Err(TryLockError::WouldBlock)
        });
        assert!(matches!(held, Err(TryLockError::WouldBlock)) && calls == 6, "{calls} tries");
        let mut calls = 0;
        let broken = retry_while_busy(5, Duration::ZERO, || {
            calls += 1;
            Err(TryLockError::Error(std::io::Error::other("broken")))
        });
        assert!(matches!(broken, Err(TryLockError::Error(_))) && calls == 1, "an error is not retried");
    }

    #[test]
    fn a_named_lock_file_is_held_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("guard-display-3.lock");
        let held = InstanceLock::acquire_file(&path).expect("first lock");
        assert!(matches!(InstanceLock::acquire_file(&path), Err(LockError::HeldByOther { .. })));
        held.release();
        assert!(InstanceLock::acquire_file(&path).is_ok());
    }

    #[test]
    fn the_holder_is_the_kernels_word_not_the_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("guard-display-3.lock");
        assert_eq!(holder_pid(&path), None);
        let held = InstanceLock::acquire_file(&path).expect("first lock");
        assert_eq!(holder_pid(&path), Some(std::process::id()));
        std::fs::write(&path, "1\n").expect("another process of the user writes the file");
        assert_eq!(holder_pid(&path), Some(std::process::id()), "the file's pid is not believed");
        held.release();
        assert_eq!(holder_pid(&path), None, "a pid in the file of a lock nobody holds names nobody");
    }

    #[test]
    fn separate_open_in_same_process_conflicts() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(LOCK_FILE);
        let a = File::create(&path).expect("create");
        a.try_lock().expect("lock a");
        let b = File::open(&path).expect("open");
        assert!(matches!(b.try_lock(), Err(TryLockError::WouldBlock)));
        assert!(is_locked(dir.path()));
    }

    #[test]
    fn symlinked_lock_file_is_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let target = outside.path().join("victim");
        std::fs::write(&target, b"keep").expect("write");
        std::os::unix::fs::symlink(&target, dir.path().join(LOCK_FILE)).expect("symlink");
        assert!(matches!(InstanceLock::acquire(dir.path()), Err(LockError::Io { .. })));
        assert!(!is_locked(dir.path()), "nobody can hold a symlinked lock");
        assert_eq!(std::fs::read(&target).expect("read"), b"keep");
    }

    #[test]
    fn error_messages_name_the_lock() {
        let e = LockError::HeldByOther { path: PathBuf::from("/s/.mcec.lock"), pid: Some(7) };
        let text = e.to_string();
        assert!(text.contains("pid 7") && text.contains("/s/.mcec.lock"), "{text}");
    }

    #[test]
    fn a_special_lock_file_answers_at_once_and_never_counts_as_held() {
        for kind in crate::safe_open::tests::KINDS {
            let dir = tempfile::tempdir().expect("tempdir");
            crate::safe_open::tests::plant(&dir.path().join(LOCK_FILE), kind);
            assert!(!is_locked(dir.path()), "{kind}");
            match InstanceLock::acquire(dir.path()) {
                Err(LockError::Io { error, .. }) => assert!(lock_file_is_unusable(&error), "{kind}: {error}"),
                other => panic!("{kind}: expected an unusable lock file, got {other:?}"),
            }
        }
    }
}
