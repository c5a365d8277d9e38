//! The settings model: `mcec.settings` and `mcec.commands` as typed values.
//!
//! Both files are TOML with PascalCase keys (listed in `docs/contract.md`). A missing file
//! means defaults. A file that does not parse or holds a wrong type is a [`SettingsError`]
//! naming the file, the line and the key; the caller then keeps the agent surface off (fail
//! closed) and never rewrites the file. Unknown keys are warnings. Reading the files from disk is the
//! caller's job: this module only turns text into values.

use std::collections::BTreeMap;
use std::fmt;

use crate::catalog;
use crate::command_lang::RawKind;
use crate::own_display::{self, OwnDisplaySize, SessionDisplay};

mod edit;
mod near;
mod reload;
pub use edit::{EditError, set_key, set_setting};
pub use reload::{KeyReload, Reload, reload_table, restart_only_changes};

/// The operator's settings, with the contract's defaults.
#[derive(Clone, PartialEq, Eq)]
pub struct Settings {
    pub agent_commands_enabled: bool,
    pub mcp_server_enabled: bool,
    pub mcp_bind_address: String,
    pub mcp_http_port: u16,
    /// Empty means "no token". Never printed by `Debug`.
    pub mcp_auth_token: String,
    pub emergency_stop_enabled: bool,
    pub emergency_stop_hotkey: String,
    pub command_overlay_enabled: bool,
    pub allow_session_provisioning: bool,
    pub act_as_server: bool,
    /// Lets agents actuate on a Wayland session's X server, where the stop cannot be armed.
    pub unsafe_allow_actuation_without_stop_on_wayland: bool,
    /// Host names or addresses the HTTP `Host`/`Origin` check accepts besides loopback.
    pub mcp_allowed_hosts: Vec<String>,
    /// A capture with no size argument: its longest side at most this many pixels.
    pub capture_max_long_side: u32,
    /// A capture with no size argument: at most this many pixels in all.
    pub capture_max_pixels: u32,
    /// A capture with no `format`: `auto`, `png` or `jpeg`.
    pub capture_format: CaptureFormat,
    /// `OwnDisplay`: a session copy's own X display (`"WxH"`), written at provisioning;
    /// `None` (absent or `""`): the copy acts on the operator's display.
    pub own_display: Option<OwnDisplaySize>,
    /// `OwnDisplaySessionsMax`: own-display sessions that may exist at once.
    pub own_display_sessions_max: u32,
    /// `SessionDisplay`: where a session provisioned without `ownDisplay` acts.
    pub session_display: SessionDisplay,
}

/// The format of a capture that names none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CaptureFormat {
    /// PNG, or JPEG when the picture is photographic (a PNG of it would run to megabytes).
    #[default]
    Auto,
    Png,
    Jpeg,
}

impl CaptureFormat {
    fn parse(text: &str) -> Option<CaptureFormat> {
        match text {
            "auto" => Some(CaptureFormat::Auto),
            "png" => Some(CaptureFormat::Png),
            "jpeg" => Some(CaptureFormat::Jpeg),
            _ => None,
        }
    }
}

/// The default capture size: what models take as they are (Anthropic's guidance: long side
/// at most 1568 px, about 1.15 megapixels).
pub const DEFAULT_CAPTURE_LONG_SIDE: u32 = 1568;
pub const DEFAULT_CAPTURE_PIXELS: u32 = 1_150_000;
/// Bounds of `CaptureMaxLongSide` and `CaptureMaxPixels`.
const CAPTURE_LONG_SIDE_RANGE: std::ops::RangeInclusive<i64> = 64..=16_384;
const CAPTURE_PIXELS_RANGE: std::ops::RangeInclusive<i64> = 4_096..=67_108_864;

impl Default for Settings {
    fn default() -> Self {
        Settings {
            agent_commands_enabled: false,
            mcp_server_enabled: false,
            mcp_bind_address: "127.0.0.1".into(),
            mcp_http_port: 5151,
            mcp_auth_token: String::new(),
            emergency_stop_enabled: true,
            emergency_stop_hotkey: "Ctrl+Alt+Shift+S".into(),
            command_overlay_enabled: true,
            allow_session_provisioning: false,
            act_as_server: false,
            unsafe_allow_actuation_without_stop_on_wayland: false,
            mcp_allowed_hosts: Vec::new(),
            capture_max_long_side: DEFAULT_CAPTURE_LONG_SIDE,
            capture_max_pixels: DEFAULT_CAPTURE_PIXELS,
            capture_format: CaptureFormat::Auto,
            own_display: None,
            own_display_sessions_max: own_display::DEFAULT_SESSIONS_MAX,
            session_display: SessionDisplay::Shared,
        }
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("agent_commands_enabled", &self.agent_commands_enabled)
            .field("mcp_server_enabled", &self.mcp_server_enabled)
            .field("mcp_bind_address", &self.mcp_bind_address)
            .field("mcp_http_port", &self.mcp_http_port)
            .field("mcp_auth_token", &if self.mcp_auth_token.is_empty() { "<none>" } else { "<redacted>" })
            .field("emergency_stop_enabled", &self.emergency_stop_enabled)
            .field("emergency_stop_hotkey", &self.emergency_stop_hotkey)
            .field("command_overlay_enabled", &self.command_overlay_enabled)
            .field("allow_session_provisioning", &self.allow_session_provisioning)
            .field("act_as_server", &self.act_as_server)
            .field(
                "unsafe_allow_actuation_without_stop_on_wayland",
                &self.unsafe_allow_actuation_without_stop_on_wayland,
            )
            .field("mcp_allowed_hosts", &self.mcp_allowed_hosts)
            .field("capture_max_long_side", &self.capture_max_long_side)
            .field("capture_max_pixels", &self.capture_max_pixels)
            .field("capture_format", &self.capture_format)
            .field("own_display", &self.own_display)
            .field("own_display_sessions_max", &self.own_display_sessions_max)
            .field("session_display", &self.session_display)
            .finish()
    }
}

impl Settings {
    /// The token, if one is configured.
    pub fn auth_token(&self) -> Option<&str> {
        (!self.mcp_auth_token.is_empty()).then_some(self.mcp_auth_token.as_str())
    }
}

/// The operator's explicit, never-default permission to act on a display where the stop
/// cannot be armed (a Wayland session). Named so nobody turns it on by accident.
pub const UNSAFE_WAYLAND_KEY: &str = "UnsafeAllowActuationWithoutStopOnWayland";

/// Why a settings or commands file was rejected. `Display` names file, line and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    pub file: String,
    pub line: Option<usize>,
    pub key: Option<String>,
    pub problem: String,
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ", line {line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ", key `{key}`")?;
        }
        write!(
            f,
            ": {}. The agent surface stays off until the file is fixed; mcec does not rewrite it.",
            self.problem
        )
    }
}

impl std::error::Error for SettingsError {}

/// A parsed file plus the warnings (unknown keys) found on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed<T> {
    pub value: T,
    pub warnings: Vec<String>,
}

enum Field<'a> {
    Bool(&'a mut bool),
    Str(&'a mut String),
    Port(&'a mut u16),
    List(&'a mut Vec<String>),
    Count(&'a mut u32, std::ops::RangeInclusive<i64>),
    Format(&'a mut CaptureFormat),
    Size(&'a mut Option<OwnDisplaySize>),
    Sessions(&'a mut SessionDisplay),
}

/// Every key `mcec.settings` knows; an unknown key close to one of these is an error.
pub const SETTINGS_KEYS: &[&str] = &[
    "AgentCommandsEnabled",
    "McpServerEnabled",
    "McpBindAddress",
    "McpHttpPort",
    "McpAuthToken",
    "McpAllowedHosts",
    "EmergencyStopEnabled",
    "EmergencyStopHotkey",
    "CommandOverlayEnabled",
    "AllowSessionProvisioning",
    "ActAsServer",
    UNSAFE_WAYLAND_KEY,
    "CaptureMaxLongSide",
    "CaptureMaxPixels",
    "CaptureFormat",
    OWN_DISPLAY_KEY,
    "OwnDisplaySessionsMax",
    "SessionDisplay",
];

/// The key a session copy's `mcec.settings` records its own display under.
pub const OWN_DISPLAY_KEY: &str = "OwnDisplay";

/// Parse the text of `mcec.settings`. `file` is only used in messages.
pub fn parse_settings(text: &str, file: &str) -> Result<Parsed<Settings>, SettingsError> {
    let table = parse_table(text, file)?;
    let mut settings = Settings::default();
    let mut warnings = Vec::new();
    for (key, value) in &table {
        let s = &mut settings;
        let field = match key.as_str() {
            "AgentCommandsEnabled" => Field::Bool(&mut s.agent_commands_enabled),
            "McpServerEnabled" => Field::Bool(&mut s.mcp_server_enabled),
            "McpBindAddress" => Field::Str(&mut s.mcp_bind_address),
            "McpHttpPort" => Field::Port(&mut s.mcp_http_port),
            "McpAuthToken" => Field::Str(&mut s.mcp_auth_token),
            "EmergencyStopEnabled" => Field::Bool(&mut s.emergency_stop_enabled),
            "EmergencyStopHotkey" => Field::Str(&mut s.emergency_stop_hotkey),
            "CommandOverlayEnabled" => Field::Bool(&mut s.command_overlay_enabled),
            "AllowSessionProvisioning" => Field::Bool(&mut s.allow_session_provisioning),
            "ActAsServer" => Field::Bool(&mut s.act_as_server),
            UNSAFE_WAYLAND_KEY => Field::Bool(&mut s.unsafe_allow_actuation_without_stop_on_wayland),
            "McpAllowedHosts" => Field::List(&mut s.mcp_allowed_hosts),
            "CaptureMaxLongSide" => Field::Count(&mut s.capture_max_long_side, CAPTURE_LONG_SIDE_RANGE),
            "CaptureMaxPixels" => Field::Count(&mut s.capture_max_pixels, CAPTURE_PIXELS_RANGE),
            "CaptureFormat" => Field::Format(&mut s.capture_format),
            OWN_DISPLAY_KEY => Field::Size(&mut s.own_display),
            "OwnDisplaySessionsMax" => {
                Field::Count(&mut s.own_display_sessions_max, own_display::SESSIONS_MAX_RANGE)
            }
            "SessionDisplay" => Field::Sessions(&mut s.session_display),
            _ => {
                if let Some(known) = near::near_miss(key, SETTINGS_KEYS) {
                    return Err(SettingsError {
                        file: file.to_string(),
                        line: line_of_key(text, key),
                        key: Some(key.clone()),
                        problem: format!("unknown key; did you mean `{known}`?"),
                    });
                }
                warnings.push(format!(
                    "{file}, line {}: unknown key `{key}` ignored",
                    line_of_key(text, key).unwrap_or(0)
                ));
                continue;
            }
        };
        let wrong = |expected: &str| SettingsError {
            file: file.to_string(),
            line: line_of_key(text, key),
            key: Some(key.clone()),
            problem: format!("expected {expected}, found {}", value.type_str()),
        };
        match (field, value) {
            (Field::Bool(slot), toml::Value::Boolean(b)) => *slot = *b,
            (Field::Str(slot), toml::Value::String(v)) => *slot = v.clone(),
            (Field::Port(slot), toml::Value::Integer(n)) => {
                *slot = u16::try_from(*n).ok().filter(|p| *p != 0).ok_or_else(|| SettingsError {
                    problem: format!("port {n} is outside 1..=65535"),
                    ..wrong("a port")
                })?;
            }
            (Field::List(slot), toml::Value::Array(items)) => {
                *slot = items
                    .iter()
                    .map(|item| item.as_str().map(str::to_string).ok_or_else(|| wrong("a list of strings")))
                    .collect::<Result<_, _>>()?;
            }
            (Field::Count(slot, range), toml::Value::Integer(n)) => {
                *slot =
                    u32::try_from(*n).ok().filter(|_| range.contains(n)).ok_or_else(|| SettingsError {
                        problem: format!("{n} is outside {}..={}", range.start(), range.end()),
                        ..wrong("a number")
                    })?;
            }
            (Field::Format(slot), toml::Value::String(v)) => {
                *slot = CaptureFormat::parse(v).ok_or_else(|| SettingsError {
                    problem: format!("`{v}` is not one of \"auto\", \"png\", \"jpeg\""),
                    ..wrong("a format")
                })?;
            }
            (Field::Size(slot), toml::Value::String(v)) => {
                *slot = match v.trim() {
                    "" => None,
                    text => Some(
                        OwnDisplaySize::parse(text)
                            .map_err(|problem| SettingsError { problem, ..wrong("WIDTHxHEIGHT") })?,
                    ),
                };
            }
            (Field::Sessions(slot), toml::Value::String(v)) => {
                *slot = SessionDisplay::parse(v).ok_or_else(|| SettingsError {
                    problem: format!("`{}` is not \"shared\" or \"own\"", crate::text::ellipsize(v, 32)),
                    ..wrong("\"shared\" or \"own\"")
                })?;
            }
            (Field::Sessions(_), _) => return Err(wrong("\"shared\" or \"own\"")),
            (Field::Size(_), _) => return Err(wrong("a string WIDTHxHEIGHT (e.g. \"1280x800\")")),
            (Field::List(_), _) => return Err(wrong("a list of strings")),
            (Field::Count(..), _) => return Err(wrong("an integer")),
            (Field::Format(_), _) => return Err(wrong("\"auto\", \"png\" or \"jpeg\"")),
            (Field::Bool(_), _) => return Err(wrong("true or false")),
            (Field::Str(_), _) => return Err(wrong("a string")),
            (Field::Port(_), _) => return Err(wrong("an integer port")),
        }
    }
    Ok(Parsed { value: settings, warnings })
}

/// Which commands (tools) `mcec.commands` enables. Anything not listed is disabled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commands {
    enabled: BTreeMap<String, bool>,
}

impl Commands {
    pub fn is_enabled(&self, name: &str) -> bool {
        self.enabled.get(name).copied().unwrap_or(false)
    }

    /// A set with exactly these names enabled (tests and provisioning).
    pub fn enabling<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        Commands { enabled: names.into_iter().map(|n| (n.to_string(), true)).collect() }
    }

    /// Turn one name on or off (a session copy turns `launch` off; grants turn names on).
    pub fn set(&mut self, name: &str, on: bool) {
        self.enabled.insert(name.to_string(), on);
    }

    /// The names switched on, in name order.
    pub fn enabled_names(&self) -> impl Iterator<Item = &str> {
        self.enabled.iter().filter(|(_, on)| **on).map(|(name, _)| name.as_str())
    }

    /// Render as TOML, one table per command, in name order.
    pub fn to_toml(&self) -> String {
        self.enabled.iter().map(|(name, on)| format!("[{name}]\nEnabled = {on}\n\n")).collect()
    }
}

/// Parse the text of `mcec.commands`: `[name]` tables with `Enabled = true|false`, and for
/// `send_command` one sub-table per raw command kind (`[send_command.chars]` and so on).
pub fn parse_commands(text: &str, file: &str) -> Result<Parsed<Commands>, SettingsError> {
    let table = parse_table(text, file)?;
    let mut commands = Commands::default();
    let mut warnings = Vec::new();
    for (name, value) in &table {
        let at = |key: &str| SettingsError {
            file: file.to_string(),
            line: line_of_table(text, name),
            key: Some(key.to_string()),
            problem: String::new(),
        };
        let toml::Value::Table(body) = value else {
            return Err(SettingsError {
                problem: format!("expected a table `[{name}]`, found {}", value.type_str()),
                line: line_of_key(text, name),
                ..at(name)
            });
        };
        if !catalog::is_command(name) {
            warnings.push(format!("{file}: unknown command `[{name}]` ignored"));
            continue;
        }
        for (key, v) in body {
            match (key.as_str(), v) {
                ("Enabled", toml::Value::Boolean(b)) => {
                    commands.enabled.insert(name.clone(), *b);
                }
                ("Enabled", other) => {
                    return Err(SettingsError {
                        problem: format!("expected true or false, found {}", other.type_str()),
                        ..at(&format!("{name}.Enabled"))
                    });
                }
                ("read", toml::Value::Table(inner)) if name == CLIPBOARD => {
                    parse_raw_kind(inner, CLIPBOARD_READ, file, text, &mut commands, &mut warnings)?;
                }
                (sub, toml::Value::Table(inner))
                    if name == SEND_COMMAND && RawKind::from_name(sub).is_some() =>
                {
                    let kind = RawKind::from_name(sub).map_or_else(String::new, RawKind::setting);
                    parse_raw_kind(inner, &kind, file, text, &mut commands, &mut warnings)?;
                }
                _ => warnings.push(format!("{file}: unknown key `{name}.{key}` ignored")),
            }
        }
    }
    Ok(Parsed { value: commands, warnings })
}

const SEND_COMMAND: &str = "send_command";
const CLIPBOARD: &str = "clipboard";
/// `[clipboard.read]`: reading the clipboard has its own switch, off unless listed.
pub const CLIPBOARD_READ: &str = "clipboard.read";

/// `[send_command.<kind>]` (and `[clipboard.read]`): the `Enabled` of one sub-switch, stored
/// under its dotted name.
fn parse_raw_kind(
    body: &toml::Table,
    kind: &str,
    file: &str,
    text: &str,
    commands: &mut Commands,
    warnings: &mut Vec<String>,
) -> Result<(), SettingsError> {
    for (key, v) in body {
        match (key.as_str(), v) {
            ("Enabled", toml::Value::Boolean(b)) => {
                commands.enabled.insert(kind.to_string(), *b);
            }
            ("Enabled", other) => {
                return Err(SettingsError {
                    file: file.to_string(),
                    line: line_of_table(text, kind),
                    key: Some(format!("{kind}.Enabled")),
                    problem: format!("expected true or false, found {}", other.type_str()),
                });
            }
            _ => warnings.push(format!("{file}: unknown key `{kind}.{key}` ignored")),
        }
    }
    Ok(())
}

fn parse_table(text: &str, file: &str) -> Result<toml::Table, SettingsError> {
    text.parse::<toml::Table>().map_err(|e| SettingsError {
        file: file.to_string(),
        line: e.span().map(|span| line_at(text, span.start)),
        key: None,
        problem: format!("not valid TOML ({})", e.message().trim()),
    })
}

fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn line_of_key(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            l.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

fn line_of_table(text: &str, name: &str) -> Option<usize> {
    let header = format!("[{name}]");
    text.lines().position(|l| l.trim() == header).map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_means_defaults() {
        let p = parse_settings("", "mcec.settings").unwrap();
        assert_eq!(p.value, Settings::default());
        assert!(p.warnings.is_empty());
        assert!(!p.value.agent_commands_enabled);
        assert_eq!(p.value.mcp_http_port, 5151);
        assert_eq!(p.value.emergency_stop_hotkey, "Ctrl+Alt+Shift+S");
    }

    #[test]
    fn every_key_is_read() {
        let text = r#"
AgentCommandsEnabled = true
McpServerEnabled = true
McpBindAddress = "0.0.0.0"
McpHttpPort = 6000
McpAuthToken = "abc"
EmergencyStopEnabled = false
EmergencyStopHotkey = "Pause"
CommandOverlayEnabled = false
AllowSessionProvisioning = true
ActAsServer = true
UnsafeAllowActuationWithoutStopOnWayland = true
"#;
        let s = parse_settings(text, "f").unwrap().value;
        assert!(s.agent_commands_enabled && s.mcp_server_enabled && s.allow_session_provisioning);
        assert!(s.act_as_server && !s.emergency_stop_enabled && !s.command_overlay_enabled);
        assert_eq!(s.mcp_bind_address, "0.0.0.0");
        assert_eq!(s.mcp_http_port, 6000);
        assert_eq!(s.auth_token(), Some("abc"));
        assert_eq!(s.emergency_stop_hotkey, "Pause");
        assert!(s.unsafe_allow_actuation_without_stop_on_wayland);
        assert!(!Settings::default().unsafe_allow_actuation_without_stop_on_wayland);
    }

    #[test]
    fn wrong_type_names_file_line_and_key() {
        let err = parse_settings("McpHttpPort = 5151\nAgentCommandsEnabled = \"yes\"\n", "/x/mcec.settings")
            .unwrap_err();
        assert_eq!(err.line, Some(2));
        assert_eq!(err.key.as_deref(), Some("AgentCommandsEnabled"));
        let msg = err.to_string();
        assert!(msg.contains("/x/mcec.settings, line 2, key `AgentCommandsEnabled`"), "{msg}");
        assert!(msg.contains("expected true or false, found string"), "{msg}");
    }

    #[test]
    fn port_out_of_range_is_an_error() {
        for bad in ["McpHttpPort = 0", "McpHttpPort = 70000", "McpHttpPort = -1"] {
            let err = parse_settings(bad, "f").unwrap_err();
            assert_eq!(err.key.as_deref(), Some("McpHttpPort"), "{bad}");
        }
        assert!(parse_settings("McpHttpPort = \"80\"", "f").is_err());
    }

    #[test]
    fn capture_keys_are_checked() {
        let p = parse_settings(
            "CaptureMaxLongSide = 1024\nCaptureMaxPixels = 500000\nCaptureFormat = \"png\"",
            "f",
        )
        .unwrap();
        assert_eq!(
            (p.value.capture_max_long_side, p.value.capture_max_pixels, p.value.capture_format),
            (1024, 500_000, CaptureFormat::Png)
        );
        let d = Settings::default();
        assert_eq!((d.capture_max_long_side, d.capture_format), (1568, CaptureFormat::Auto));
        for (bad, key, says) in [
            ("CaptureMaxLongSide = 10", "CaptureMaxLongSide", "outside 64..=16384"),
            ("CaptureMaxLongSide = \"big\"", "CaptureMaxLongSide", "expected an integer"),
            ("CaptureMaxPixels = 100000000", "CaptureMaxPixels", "outside 4096..=67108864"),
            ("CaptureFormat = \"gif\"", "CaptureFormat", "not one of"),
            ("CaptureFormat = 1", "CaptureFormat", "expected \"auto\""),
        ] {
            let err = parse_settings(bad, "f").unwrap_err();
            assert_eq!(err.key.as_deref(), Some(key), "{bad}");
            assert!(err.to_string().contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn syntax_error_names_the_line() {
        let err = parse_settings("AgentCommandsEnabled = true\nthis is not toml\n", "f").unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.to_string().contains("not valid TOML"));
    }

    #[test]
    fn unknown_keys_are_warnings() {
        let p = parse_settings("Colour = \"blue\"\nAgentCommandsEnabled = true", "f").unwrap();
        assert!(p.value.agent_commands_enabled);
        assert_eq!(p.warnings.len(), 1);
        assert!(p.warnings[0].contains("`Colour`"));
    }

    #[test]
    fn debug_never_shows_the_token() {
        let s = Settings { mcp_auth_token: "s3cr3t-token".into(), ..Settings::default() };
        assert!(!format!("{s:?}").contains("s3cr3t"));
    }

    #[test]
    fn commands_default_to_disabled() {
        let c = parse_commands("", "c").unwrap().value;
        assert!(!c.is_enabled("click"));
    }

    #[test]
    fn commands_are_read_and_unknown_ones_warned() {
        let p = parse_commands(
            "[click]\nEnabled = true\n[capture]\nEnabled = false\n[frobnicate]\nEnabled = true\n",
            "c",
        )
        .unwrap();
        assert!(p.value.is_enabled("click"));
        assert!(!p.value.is_enabled("capture"));
        assert!(!p.value.is_enabled("frobnicate"));
        assert_eq!(p.warnings.len(), 1);
    }

    #[test]
    fn commands_wrong_type_is_an_error() {
        let err = parse_commands("[click]\nEnabled = 1\n", "c").unwrap_err();
        assert_eq!(err.key.as_deref(), Some("click.Enabled"));
        assert_eq!(err.line, Some(1));
        assert!(parse_commands("click = true", "c").is_err());
    }

    #[test]
    fn reading_the_clipboard_has_its_own_switch() {
        let on = parse_commands("[clipboard]\nEnabled = true\n", "c").unwrap().value;
        assert!(on.is_enabled("clipboard") && !on.is_enabled(CLIPBOARD_READ), "read is off unless listed");
        let read =
            parse_commands("[clipboard]\nEnabled = true\n[clipboard.read]\nEnabled = true\n", "c").unwrap();
        assert!(read.value.is_enabled(CLIPBOARD_READ) && read.warnings.is_empty());
        assert_eq!(parse_commands(&read.value.to_toml(), "c").unwrap().value, read.value);
    }

    #[test]
    fn raw_command_kinds_have_their_own_switch() {
        let text = "[send_command]\nEnabled = true\n[send_command.chars]\nEnabled = true\n\
                    [send_command.mouse]\nEnabled = false\n[send_command.shell]\nEnabled = true\n";
        let p = parse_commands(text, "c").unwrap();
        assert!(p.value.is_enabled("send_command"));
        assert!(p.value.is_enabled("send_command.chars"));
        assert!(!p.value.is_enabled("send_command.mouse"));
        assert!(!p.value.is_enabled("send_command.key"), "default off");
        assert!(!p.value.is_enabled("send_command.shell"));
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        assert_eq!(parse_commands(&p.value.to_toml(), "c").unwrap().value, p.value);

        let err = parse_commands("[send_command.key]\nEnabled = \"yes\"\n", "c").unwrap_err();
        assert_eq!(err.key.as_deref(), Some("send_command.key.Enabled"));
        assert_eq!(err.line, Some(1));
        let only_kind = parse_commands("[send_command.pause]\nEnabled = true\n", "c").unwrap().value;
        assert!(only_kind.is_enabled("send_command.pause") && !only_kind.is_enabled("send_command"));
    }

    #[test]
    fn commands_round_trip_through_toml() {
        let c = Commands::enabling(["click", "capture"]);
        assert_eq!(parse_commands(&c.to_toml(), "c").unwrap().value, c);
    }

    #[test]
    fn a_near_miss_of_a_known_key_fails_closed_with_did_you_mean() {
        for (line, known) in [
            ("McpAuthtoken = \"x\"", "McpAuthToken"),
            ("mcpauthtoken = \"x\"", "McpAuthToken"),
            ("McpAuthTokn = \"x\"", "McpAuthToken"),
            ("McpBindAdress = \"0.0.0.0\"", "McpBindAddress"),
            ("AgentCommandEnabled = true", "AgentCommandsEnabled"),
            ("EmergencyStopEnabeld = false", "EmergencyStopEnabled"),
        ] {
            let err = parse_settings(&format!("AgentCommandsEnabled = true\n{line}\n"), "f").unwrap_err();
            assert_eq!(err.line, Some(2), "{line}");
            assert!(err.to_string().contains(&format!("did you mean `{known}`?")), "{line}: {err}");
        }
        // Far from every key: still only a warning.
        assert_eq!(parse_settings("Colour = 1\nMcpZZZZZZZZ = 2\n", "f").unwrap().warnings.len(), 2);
    }

    #[test]
    fn allowed_hosts_is_a_list_of_strings() {
        let s = parse_settings("McpAllowedHosts = [\"desk.lan\", \"10.0.0.5\"]\n", "f").unwrap().value;
        assert_eq!(s.mcp_allowed_hosts, vec!["desk.lan", "10.0.0.5"]);
        assert!(parse_settings("McpAllowedHosts = \"desk.lan\"\n", "f").is_err());
        assert!(parse_settings("McpAllowedHosts = [1]\n", "f").is_err());
    }
}
