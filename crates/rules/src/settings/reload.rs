//! Which `mcec.settings` keys a running mcec applies when the file changes and which it reads
//! at start only. The table is built from an exhaustive destructure of [`Settings`] (no `..`),
//! so a new setting does not compile until it is classified here: none counts as live by
//! accident.

use super::{OWN_DISPLAY_KEY, Settings, UNSAFE_WAYLAND_KEY};

/// When a change of one key takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reload {
    /// Applied by the running process (the reload thread).
    Live,
    /// Read at start only; a change is logged as taking effect at restart.
    RestartOnly,
}

/// One key of `mcec.settings` between two readings of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyReload {
    pub key: &'static str,
    pub reload: Reload,
    pub changed: bool,
}

/// Every key, with its class and whether it differs between `before` and `after`.
pub fn reload_table(before: &Settings, after: &Settings) -> Vec<KeyReload> {
    use Reload::{Live, RestartOnly};
    let Settings {
        agent_commands_enabled,
        mcp_server_enabled,
        mcp_bind_address,
        mcp_http_port,
        mcp_auth_token,
        emergency_stop_enabled,
        emergency_stop_hotkey,
        command_overlay_enabled,
        allow_session_provisioning,
        act_as_server,
        unsafe_allow_actuation_without_stop_on_wayland,
        mcp_allowed_hosts,
        capture_max_long_side,
        capture_max_pixels,
        capture_format,
        own_display,
        own_display_sessions_max,
        session_display,
    } = before;
    let row = |key, reload, changed| KeyReload { key, reload, changed };
    vec![
        row("AgentCommandsEnabled", Live, *agent_commands_enabled != after.agent_commands_enabled),
        row(
            "AllowSessionProvisioning",
            Live,
            *allow_session_provisioning != after.allow_session_provisioning,
        ),
        row("McpServerEnabled", RestartOnly, *mcp_server_enabled != after.mcp_server_enabled),
        row("McpBindAddress", RestartOnly, *mcp_bind_address != after.mcp_bind_address),
        row("McpHttpPort", RestartOnly, *mcp_http_port != after.mcp_http_port),
        row("McpAuthToken", RestartOnly, *mcp_auth_token != after.mcp_auth_token),
        row("McpAllowedHosts", RestartOnly, *mcp_allowed_hosts != after.mcp_allowed_hosts),
        row("EmergencyStopEnabled", RestartOnly, *emergency_stop_enabled != after.emergency_stop_enabled),
        row("EmergencyStopHotkey", RestartOnly, *emergency_stop_hotkey != after.emergency_stop_hotkey),
        row("CommandOverlayEnabled", RestartOnly, *command_overlay_enabled != after.command_overlay_enabled),
        row("ActAsServer", RestartOnly, *act_as_server != after.act_as_server),
        row("CaptureMaxLongSide", RestartOnly, *capture_max_long_side != after.capture_max_long_side),
        row("CaptureMaxPixels", RestartOnly, *capture_max_pixels != after.capture_max_pixels),
        row("CaptureFormat", RestartOnly, *capture_format != after.capture_format),
        // The copy's X server is started once, with the copy.
        row(OWN_DISPLAY_KEY, RestartOnly, *own_display != after.own_display),
        // Read at every provisioning from the file, by the provisioning process.
        row(
            "OwnDisplaySessionsMax",
            RestartOnly,
            *own_display_sessions_max != after.own_display_sessions_max,
        ),
        row("SessionDisplay", RestartOnly, *session_display != after.session_display),
        row(
            UNSAFE_WAYLAND_KEY,
            RestartOnly,
            *unsafe_allow_actuation_without_stop_on_wayland
                != after.unsafe_allow_actuation_without_stop_on_wayland,
        ),
    ]
}

/// The keys read only at start whose values differ, in the table's order.
pub fn restart_only_changes(before: &Settings, after: &Settings) -> Vec<&'static str> {
    reload_table(before, after)
        .into_iter()
        .filter(|row| row.changed && row.reload == Reload::RestartOnly)
        .map(|row| row.key)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{SETTINGS_KEYS, parse_settings};

    /// A value other than the default for every key, as the file would say it.
    const CHANGED: &[(&str, &str)] = &[
        ("AgentCommandsEnabled", "true"),
        ("McpServerEnabled", "true"),
        ("McpBindAddress", "\"0.0.0.0\""),
        ("McpHttpPort", "6000"),
        ("McpAuthToken", "\"a-long-enough-token-for-the-test\""),
        ("McpAllowedHosts", "[\"desk.example\"]"),
        ("EmergencyStopEnabled", "false"),
        ("EmergencyStopHotkey", "\"Pause\""),
        ("CommandOverlayEnabled", "false"),
        ("AllowSessionProvisioning", "true"),
        ("ActAsServer", "true"),
        (UNSAFE_WAYLAND_KEY, "true"),
        ("CaptureMaxLongSide", "1000"),
        ("CaptureMaxPixels", "500000"),
        ("CaptureFormat", "\"png\""),
        (OWN_DISPLAY_KEY, "\"1024x768\""),
        ("OwnDisplaySessionsMax", "2"),
        ("SessionDisplay", "\"own\""),
    ];

    #[test]
    fn every_key_is_classified_once_and_only_two_are_live() {
        let table = reload_table(&Settings::default(), &Settings::default());
        let mut keys: Vec<&str> = table.iter().map(|row| row.key).collect();
        keys.sort_unstable();
        let mut known = SETTINGS_KEYS.to_vec();
        known.sort_unstable();
        assert_eq!(keys, known);
        assert!(table.iter().all(|row| !row.changed), "the same settings: nothing changed");
        let live: Vec<&str> = table.iter().filter(|row| row.reload == Reload::Live).map(|r| r.key).collect();
        assert_eq!(live, ["AgentCommandsEnabled", "AllowSessionProvisioning"]);
    }

    /// Each key's row compares that key's field: a file changing one key changes one row.
    #[test]
    fn a_change_of_one_key_is_seen_on_its_row_only() {
        assert_eq!(CHANGED.len(), SETTINGS_KEYS.len());
        let before = Settings::default();
        for (key, value) in CHANGED {
            let after = parse_settings(&format!("{key} = {value}\n"), "mcec.settings").expect(key).value;
            let changed: Vec<&str> =
                reload_table(&before, &after).iter().filter(|row| row.changed).map(|row| row.key).collect();
            assert_eq!(changed, [*key]);
        }
    }

    #[test]
    fn keys_read_only_at_start_are_named() {
        let a = Settings::default();
        let b = Settings { mcp_http_port: 6000, emergency_stop_hotkey: "Pause".into(), ..a.clone() };
        assert_eq!(restart_only_changes(&a, &b), ["McpHttpPort", "EmergencyStopHotkey"]);
        let c = Settings { agent_commands_enabled: true, allow_session_provisioning: true, ..a.clone() };
        assert!(restart_only_changes(&a, &c).is_empty(), "these two are live");
    }
}
