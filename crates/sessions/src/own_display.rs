//! Own-display sessions on disk: which sessions were provisioned with a display of their own
//! (`OwnDisplay` in their `mcec.settings`), for the operator's listing and the
//! `OwnDisplaySessionsMax` limit checked before provisioning another, under a lock
//! ([`RoomLock`]) so two provisionings at once cannot both take the last place.

use std::fs::{File, OpenOptions};
use std::path::Path;

use crate::paths::{SETTINGS_FILE, session_id_of_dir};

/// Largest session `mcec.settings` read (the one provisioning writes is far smaller).
const MAX_SETTINGS_BYTES: u64 = 64 * 1024;

/// The lock file, in the sessions root, held from the count to the new session's placing.
pub const ROOM_LOCK_FILE: &str = ".mcec-own-display.lock";

/// Held by a provisioning of an own-display session from counting the others until its own
/// directory is in place (released on drop).
pub struct RoomLock(#[allow(dead_code, reason = "held for its lock")] File);

impl RoomLock {
    /// Waits for any other own-display provisioning of `sessions_root` to finish.
    pub fn take(sessions_root: &Path) -> Result<RoomLock, String> {
        let path = sessions_root.join(ROOM_LOCK_FILE);
        let bad = |e: std::io::Error| format!("cannot lock {}: {e}", path.display());
        let file = crate::safe_open::open_regular(
            &path,
            crate::os::private_file(OpenOptions::new().read(true).write(true).create(true)),
        )
        .map_err(bad)?;
        file.lock().map_err(bad)?;
        Ok(RoomLock(file))
    }
}

/// Sessions in `sessions_root` whose settings record an own display. Unreadable settings do
/// not count (such a session cannot start its copy anyway).
pub fn count_own_display_sessions(sessions_root: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(sessions_root) else { return 0 };
    entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|dir| session_id_of_dir(dir).is_some())
        .filter(|dir| has_own_display(dir))
        .count()
}

/// Whether the session in `dir` records an own display.
pub fn has_own_display(dir: &Path) -> bool {
    own_display_of(dir).is_some()
}

/// The size (`"WxH"`) of the own display the session in `dir` records, if it records one.
pub fn own_display_of(dir: &Path) -> Option<String> {
    let bytes = crate::safe_open::read_regular(&dir.join(SETTINGS_FILE), MAX_SETTINGS_BYTES).ok()??;
    let table = String::from_utf8_lossy(&bytes).parse::<toml::Table>().ok()?;
    match table.get(mcec_rules::settings::OWN_DISPLAY_KEY) {
        Some(toml::Value::String(size)) if !size.trim().is_empty() => Some(size.trim().to_string()),
        _ => None,
    }
}
