//! Loading `mcec.settings` and `mcec.commands` from this copy's config directory. A file
//! that does not parse leaves the agent surface off (fail closed) and is never rewritten.
//! Files are opened through `mcec_sessions::safe_open`: a symlink, FIFO, socket, device or
//! directory in their place is an error at once, never a hang.
//!
//! No `mcec.settings` at all is "ask" mode: the agent surface is on with nothing enabled
//! (unless `mcec.commands` enables something), so a first run works without editing a file,
//! and the agent asks the operator for each command through `request-command-access`.
//! `AgentCommandsEnabled = false` written in the file turns the surface off as before.

use std::path::Path;

use mcec_rules::settings::{self, Commands, Parsed, Settings, SettingsError};

/// Largest settings or commands file read.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The settings this process runs with, and what went wrong reading them.
pub struct Loaded {
    pub settings: Settings,
    pub commands: Commands,
    /// The first error, if any file was broken. When set, the agent surface stays off.
    pub error: Option<SettingsError>,
    pub warnings: Vec<String>,
    /// There is no settings file: the surface is on and the agent asks for what it needs.
    pub ask_first: bool,
}

impl Loaded {
    /// Whether the agent tool surface may be on.
    pub fn agent_commands_enabled(&self) -> bool {
        self.error.is_none() && (self.settings.agent_commands_enabled || self.ask_first)
    }
}

pub fn load(settings_file: &Path, commands_file: &Path) -> Loaded {
    let mut warnings = Vec::new();
    let mut error = None;
    let (settings, settings_there) = read(settings_file, settings::parse_settings, &mut warnings, &mut error);
    let (commands, _) = read(commands_file, settings::parse_commands, &mut warnings, &mut error);
    let ask_first = !settings_there;
    Loaded { settings, commands, error, warnings, ask_first }
}

/// The file's value (defaults when it is missing or broken) and whether the file is there.
fn read<T: Default>(
    path: &Path,
    parse: fn(&str, &str) -> Result<Parsed<T>, SettingsError>,
    warnings: &mut Vec<String>,
    error: &mut Option<SettingsError>,
) -> (T, bool) {
    let shown = path.display().to_string();
    let mut fail = |problem: String| {
        error.get_or_insert(SettingsError { file: shown.clone(), line: None, key: None, problem });
        (T::default(), true)
    };
    let text = match mcec_sessions::safe_open::read_regular(path, MAX_CONFIG_BYTES) {
        Ok(None) => return (T::default(), false),
        Ok(Some(bytes)) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => return fail("the file is not valid UTF-8".into()),
        },
        Err(e) => return fail(format!("cannot read it: {e}")),
    };
    match parse(&text, &shown) {
        Ok(parsed) => {
            warnings.extend(parsed.warnings);
            (parsed.value, true)
        }
        Err(e) => {
            error.get_or_insert(e);
            (T::default(), true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_in(settings: Option<&str>, commands: Option<&str>) -> Loaded {
        let dir = tempfile::tempdir().expect("temp dir");
        let (s, c) = (dir.path().join("mcec.settings"), dir.path().join("mcec.commands"));
        if let Some(text) = settings {
            std::fs::write(&s, text).expect("settings");
        }
        if let Some(text) = commands {
            std::fs::write(&c, text).expect("commands");
        }
        load(&s, &c)
    }

    #[test]
    fn no_settings_file_is_ask_mode_and_a_written_false_is_off() {
        let fresh = load_in(None, None);
        assert!(fresh.ask_first && fresh.agent_commands_enabled());
        assert_eq!(fresh.commands.enabled_names().count(), 0, "ask mode enables nothing");

        let with_commands = load_in(None, Some("[capture]\nEnabled = true\n"));
        assert!(with_commands.agent_commands_enabled() && with_commands.commands.is_enabled("capture"));

        let off = load_in(Some("AgentCommandsEnabled = false\n"), Some("[capture]\nEnabled = true\n"));
        assert!(!off.ask_first && !off.agent_commands_enabled());

        let silent = load_in(Some("CommandOverlayEnabled = true\n"), None);
        assert!(!silent.ask_first && !silent.agent_commands_enabled(), "a file without the key keeps it off");

        let broken = load_in(None, Some("[capture]\nEnabled = \"yes\"\n"));
        assert!(!broken.agent_commands_enabled(), "a broken commands file still fails closed");
    }
}
