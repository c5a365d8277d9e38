//! Where a display's guard lives: `<home>/.local/state/mcec/guard/display-<N>.lock` (the
//! election) and `display-<N>.sock` (the guard's socket), in a directory only the user may
//! enter (0700). The home comes from the user database, as the stop record's does: two mcec
//! processes of one user on one display must meet there whatever environment each was started
//! with (`XDG_RUNTIME_DIR` is the caller's to set, and a session copy's client may set it
//! differently).

use std::fs::DirBuilder;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::PathBuf;

use mcec_rules::stop_record::Scope;

use crate::stop_record::StopRecords;

/// The guard's directory under the home.
const GUARD_DIR: &str = ".local/state/mcec/guard";

/// A display's guard files.
#[derive(Debug, Clone)]
pub struct Place {
    pub display: u32,
    pub lock: PathBuf,
    pub socket: PathBuf,
}

impl Place {
    /// This process's display, when it names one display (a guard for "some display" would
    /// bring processes of different displays together).
    pub fn for_this_process() -> Option<Place> {
        let Scope::Display(display) = StopRecords::for_this_process().scope().clone() else { return None };
        let home = mcec_sessions::user_home::home_from_user_database().ok()?;
        let dir = home.join(GUARD_DIR);
        Some(Place {
            display,
            lock: dir.join(format!("display-{display}.lock")),
            socket: dir.join(format!("display-{display}.sock")),
        })
    }

    /// Make the directory (0700), and refuse one that is not a real directory of mode 0700.
    pub fn prepare(&self) -> Result<(), String> {
        let dir = self.lock.parent().ok_or("the guard's lock has no directory")?;
        mcec_sessions::os::private_dir(DirBuilder::new().recursive(true))
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if !meta.is_dir() || meta.permissions().mode() & 0o077 != 0 {
            return Err(format!("{} is not a directory only this user may enter", dir.display()));
        }
        Ok(())
    }

    /// Remove a socket left by a guard that died (the caller holds the lock, so no live guard
    /// listens there); anything but a socket is left alone.
    pub fn remove_stale_socket(&self) {
        if std::fs::symlink_metadata(&self.socket).is_ok_and(|m| m.file_type().is_socket()) {
            let _ = std::fs::remove_file(&self.socket);
        }
    }
}
