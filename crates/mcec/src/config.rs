//! Loading `mcec.settings` and `mcec.commands` from this copy's config directory. A file
//! that does not parse leaves the agent surface off (fail closed) and is never rewritten.
//! Files are opened through `mcec_sessions::safe_open`: a symlink, FIFO, socket, device or
//! directory in their place is an error at once, never a hang.

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
}

impl Loaded {
    /// Whether the agent tool surface may be on.
    pub fn agent_commands_enabled(&self) -> bool {
        self.error.is_none() && self.settings.agent_commands_enabled
    }
}

pub fn load(settings_file: &Path, commands_file: &Path) -> Loaded {
    let mut warnings = Vec::new();
    let mut error = None;
    let settings = read(settings_file, settings::parse_settings, &mut warnings, &mut error);
    let commands = read(commands_file, settings::parse_commands, &mut warnings, &mut error);
    Loaded { settings, commands, error, warnings }
}

fn read<T: Default>(
    path: &Path,
    parse: fn(&str, &str) -> Result<Parsed<T>, SettingsError>,
    warnings: &mut Vec<String>,
    error: &mut Option<SettingsError>,
) -> T {
    let shown = path.display().to_string();
    let text = match mcec_sessions::safe_open::read_regular(path, MAX_CONFIG_BYTES) {
        Ok(None) => return T::default(),
        Ok(Some(bytes)) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => {
                error.get_or_insert(SettingsError {
                    file: shown,
                    line: None,
                    key: None,
                    problem: "the file is not valid UTF-8".into(),
                });
                return T::default();
            }
        },
        Err(e) => {
            error.get_or_insert(SettingsError {
                file: shown,
                line: None,
                key: None,
                problem: format!("cannot read it: {e}"),
            });
            return T::default();
        }
    };
    match parse(&text, &shown) {
        Ok(parsed) => {
            warnings.extend(parsed.warnings);
            parsed.value
        }
        Err(e) => {
            error.get_or_insert(e);
            T::default()
        }
    }
}
