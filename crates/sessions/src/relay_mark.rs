//! The mark of a per-connection session: a session that `mcec mcp --session` provisioned for
//! one client connection and relays to.
//!
//! The relay holds an advisory lock on `<session>/mcec.relay` for as long as it lives. The
//! kernel drops the lock when the relay dies, however it dies (kill -9 included), so a marked
//! session whose mark is not locked belongs to a connection that is over: the reaper removes
//! it at once instead of after [`crate::reaper::REAP_AGE`] (still never while the copy itself
//! runs: removal takes the copy's instance lock). The mark is locked under a temporary name
//! and renamed into place, so no reaper ever sees it unlocked while its relay lives.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{ErrorKind, Write};
use std::path::Path;

use crate::safe_open::open_regular;

/// The mark's file name inside the session directory.
pub const RELAY_FILE: &str = "mcec.relay";

/// Held by the relay for the life of its connection.
#[derive(Debug)]
pub struct RelayMark {
    _file: File,
}

impl RelayMark {
    /// Mark the session in `dir` as relayed by this process.
    pub fn take(dir: &Path) -> std::io::Result<RelayMark> {
        let staged = dir.join(format!(".{RELAY_FILE}-{}", std::process::id()));
        let mut file = open_regular(
            &staged,
            crate::os::private_file(OpenOptions::new().read(true).write(true).create_new(true)),
        )?;
        file.try_lock().map_err(|e| match e {
            TryLockError::WouldBlock => {
                std::io::Error::new(ErrorKind::WouldBlock, "the relay mark is locked")
            }
            TryLockError::Error(e) => e,
        })?;
        writeln!(file, "{}", std::process::id())?;
        std::fs::rename(&staged, dir.join(RELAY_FILE))?;
        Ok(RelayMark { _file: file })
    }
}

/// Whether `dir` is a per-connection session whose relay is gone (marked, mark not locked).
pub fn relay_gone(dir: &Path) -> bool {
    let file = match open_regular(&dir.join(RELAY_FILE), OpenOptions::new().read(true)) {
        Ok(file) => file,
        Err(_) => return false,
    };
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            true
        }
        Err(_) => false,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_held_mark_is_live_and_a_dropped_one_is_gone() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(!relay_gone(dir.path()), "no mark: not a relayed session");
        let mark = RelayMark::take(dir.path()).expect("mark");
        assert!(dir.path().join(RELAY_FILE).is_file());
        assert!(!relay_gone(dir.path()), "the relay lives");
        drop(mark);
        assert!(relay_gone(dir.path()), "the relay is gone");
    }
}
