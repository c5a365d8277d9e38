//! Own-display sessions on disk: which sessions were provisioned with a display of their own
//! (`OwnDisplay` in their `mcec.settings`), for the operator's listing and the
//! `OwnDisplaySessionsMax` limit checked before provisioning another.

use std::path::Path;

use crate::paths::{SETTINGS_FILE, session_id_of_dir};

/// Largest session `mcec.settings` read (the one provisioning writes is far smaller).
const MAX_SETTINGS_BYTES: u64 = 64 * 1024;

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
