//! Where a display's guard lives: `<home>/.local/state/mcec/guard/display-<N>-<server>.lock` (the
//! election) and `display-<N>-<server>.sock` (the guard's socket), in a directory only the user may
//! enter (0700). The home comes from the user database, as the stop record's does: two mcec
//! processes of one user on one display must meet there whatever environment each was started
//! with (`XDG_RUNTIME_DIR` is the caller's to set, and a session copy's client may set it
//! differently).
//!
//! A display number outlives its X server (a new login, a test's next server): the names also
//! carry the server's socket (`/tmp/.X11-unix/X<N>`, its inode), so the processes of a new
//! server never join a guard still running for the old one (a process whose display went away
//! keeps running). The guard of a display removes the files of its earlier servers that nobody
//! holds.

use std::fs::DirBuilder;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::PathBuf;

use mcec_rules::stop_record::Scope;

use crate::stop_record::x_display_scope;

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
        let Scope::Display(display) = x_display_scope() else { return None };
        let home = mcec_sessions::user_home::home_from_user_database().ok()?;
        let dir = home.join(GUARD_DIR);
        // No socket file (a server listening elsewhere only): one name for every server.
        let server = std::fs::metadata(format!("/tmp/.X11-unix/X{display}")).map_or(0, |m| m.ino());
        Some(Place {
            display,
            lock: dir.join(format!("display-{display}-{server}.lock")),
            socket: dir.join(format!("display-{display}-{server}.sock")),
        })
    }

    /// Remove the lock and socket of this display's earlier servers that no process holds.
    pub fn remove_earlier_servers(&self) {
        let (Some(dir), Some(own)) = (self.lock.parent(), self.lock.file_name()) else { return };
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let prefix = format!("display-{}-", self.display);
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(text) = name.to_str() else { continue };
            if name == own || !text.starts_with(&prefix) || !text.ends_with(".lock") {
                continue;
            }
            let lock = entry.path();
            // Held: some process of that server still runs; leave it.
            if let Ok(held) = mcec_sessions::InstanceLock::acquire_file(&lock) {
                let socket = lock.with_extension("sock");
                if std::fs::symlink_metadata(&socket).is_ok_and(|m| m.file_type().is_socket()) {
                    let _ = std::fs::remove_file(&socket);
                }
                let _ = std::fs::remove_file(&lock);
                held.release();
            }
        }
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
