//! The few file-system calls (and the launch line's quoting) whose form differs between Unix and Windows, so the rest of the
//! crate says *what* it wants (a private file, an open that never follows a link, a rename that
//! never replaces) once, with no `cfg` of its own.
//!
//! Unix: modes 0600/0700, `O_NOFOLLOW | O_NONBLOCK`, `renameat2(RENAME_NOREPLACE)`, `flock` on
//! a directory descriptor. Windows: the user's profile ACL keeps files private (no mode to
//! set), `FILE_FLAG_OPEN_REPARSE_POINT` opens a symlink or junction itself instead of its
//! target (and the caller then refuses it as not a regular file), `MoveFileExW` without
//! `MOVEFILE_REPLACE_EXISTING`, and `LockFileEx` (through `File::try_lock`) on the lock files.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
