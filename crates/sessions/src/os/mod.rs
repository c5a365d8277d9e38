//! Everything in this crate whose form differs between Unix and Windows, so the rest of the
//! crate says *what* it wants (a private file, an open that never follows a link, a rename that
//! never replaces, the user's home) once, with no `cfg` of its own: this module is where the
//! platform is chosen, and `unix.rs`/`windows.rs` are its two halves.
//!
//! Unix: modes 0600/0700, `O_NOFOLLOW | O_NONBLOCK`, `renameat2(RENAME_NOREPLACE)`, `flock` on
//! a directory descriptor. Windows: the user's profile ACL keeps files private (no mode to
//! set), `FILE_FLAG_OPEN_REPARSE_POINT` opens a symlink or junction itself instead of its
//! target (and the caller then refuses it as not a regular file), `MoveFileExW` without
//! `MOVEFILE_REPLACE_EXISTING`, and `LockFileEx` (through `File::try_lock`) on the lock files.
//! Where only one step differs (what a directory lock locks), the rest is written once here
//! and the platform file gives the step. Each half's `places.rs` says where things are: the
//! executable's name, the base directories (XDG on Unix, known folders on Windows), the
//! prefixes of an installed copy, and the home from the user database (`getpwuid_r`) or the
//! shell's profile folder. The launch line's quoting is here too, and the session's copy of
//! the executable: a reflink (`FICLONE`) where Linux can make one, else the bytes; Windows
//! copies the bytes (ReFS block cloning is left out).

use std::fs::File;
use std::io::{self, ErrorKind};
use std::path::Path;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

/// An exclusive lock for the directory `dir`, held until the file is dropped; never follows a
/// symlink. `WouldBlock` when another holds it. What is locked is the platform's
/// ([`open_dir_lock`]): the directory itself on Unix, its `.mcec.lock` on Windows.
pub fn lock_dir(dir: &Path) -> io::Result<File> {
    let file = open_dir_lock(dir)?;
    file.try_lock().map_err(|e| match e {
        std::fs::TryLockError::WouldBlock => io::Error::new(ErrorKind::WouldBlock, "held"),
        std::fs::TryLockError::Error(e) => e,
    })?;
    Ok(file)
}

/// Whether another process holds [`lock_dir`] on `dir`.
pub fn dir_lock_is_held(dir: &Path) -> bool {
    match lock_dir(dir) {
        Ok(file) => {
            let _ = file.unlock();
            false
        }
        Err(_) => true,
    }
}

/// How [`clone_or_copy`] made a session's executable: `Reflink` shares the installed binary's
/// blocks copy-on-write (no data written, and writing either file never changes the other);
/// `Copy` wrote the bytes out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyWay {
    Reflink,
    Copy,
}

impl CopyWay {
    /// The word the audit line and the debug log use.
    pub fn as_str(self) -> &'static str {
        match self {
            CopyWay::Reflink => "reflink",
            CopyWay::Copy => "copy",
        }
    }
}
