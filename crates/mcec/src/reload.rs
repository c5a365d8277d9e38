//! Live reload: the operator's edits of `mcec.settings` and `mcec.commands` take effect while
//! mcec runs.
//!
//! A thread looks at both files every [`POLL`] (modification time, size and inode: no
//! inotify, so a file replaced by rename, a file created later and an editor's in-place write
//! are all seen the same way, at no cost worth measuring). On a change both files are read
//! again through `config::load`, exactly as at start. What a reload changes is the agent
//! surface: `AgentCommandsEnabled` and `mcec.commands`; a file that does not parse turns the
//! surface off (fail closed, the error logged with its file and line) until it is fixed.
//! Every change is audited and announced to clients (`notifications/tools/list_changed`).
//! A reload never turns `AllowSessionProvisioning` on (only the physically attested opt-in
//! does); it turns it off when the file does. Other keys (port, hotkey, overlay...) are read
//! at start only, and a change to them is logged as such: which is which is the table in
//! `mcec_rules::settings::reload_table`, where a new setting must be classified.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use mcec_mcp::Agent;
use mcec_mcp::audit::audit;
use mcec_rules::catalog::LAUNCH;
use mcec_rules::settings::{Commands, Settings, restart_only_changes};

use crate::config::{self, Loaded};

/// How often the files are looked at.
pub const POLL: Duration = Duration::from_millis(500);

/// What the reload thread needs.
pub struct Watch {
    pub settings_file: PathBuf,
    pub commands_file: PathBuf,
    /// A session copy: `launch` is only ever enabled by the operator's consent.
    pub session_copy: bool,
    /// The flag `provision-session` reads.
    pub allow_provisioning: Arc<AtomicBool>,
}

/// The agent surface a loaded configuration gives: whether agent commands are on, and which
/// commands. In a session copy `launch` is off whatever the file says (the agent can
/// write its copy's files; only `request-command-access` grants `launch` there), and a
/// missing settings file is not "ask" mode (an agent could delete its copy's file).
pub fn surface(loaded: &Loaded, session_copy: bool) -> (bool, Commands) {
    let mut commands = loaded.commands.clone();
    if session_copy && commands.is_enabled(LAUNCH) {
        tracing::warn!(
            "`launch` is enabled in this session copy's mcec.commands; ignored (only the operator's consent enables it here)"
        );
        commands.set(LAUNCH, false);
    }
    let on = loaded.agent_commands_enabled() && !(session_copy && loaded.ask_first);
    (on, commands)
}

/// Start the reload thread; `at_start` is what the process started with.
pub fn spawn(watch: Watch, agent: Arc<Agent>, at_start: Settings) {
    let spawned = std::thread::Builder::new().name("mcec-reload".into()).spawn(move || {
        let mut seen = stamps(&watch);
        let mut settings = at_start;
        loop {
            std::thread::sleep(POLL);
            let now = stamps(&watch);
            if now != seen {
                seen = now;
                settings = apply(&watch, &agent, &settings);
            }
        }
    });
    if let Err(e) = spawned {
        tracing::error!("cannot start the settings reload thread ({e}); edits take effect at restart");
    }
}

type Stamp = Option<(SystemTime, u64, (u64, u64))>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len(), mcec_sessions::os::file_identity(&meta)))
}

fn stamps(watch: &Watch) -> (Stamp, Stamp) {
    (stamp(&watch.settings_file), stamp(&watch.commands_file))
}

/// Read both files again and apply what changed; returns the settings now in force.
fn apply(watch: &Watch, agent: &Agent, before: &Settings) -> Settings {
    let loaded = config::load(&watch.settings_file, &watch.commands_file);
    for warning in &loaded.warnings {
        tracing::warn!("{warning}");
    }
    if let Some(error) = &loaded.error {
        tracing::error!("{error}");
        audit("settings-error", &format!("on reload; agent surface off until the file is fixed: {error}"));
    }
    if loaded.error.is_some() || !loaded.settings.allow_session_provisioning {
        watch.allow_provisioning.store(false, Ordering::SeqCst);
    }
    let (enabled, commands) = surface(&loaded, watch.session_copy);
    if enabled != agent.agent_commands_enabled() || commands != agent.file_commands() {
        let names: Vec<&str> = commands.enabled_names().collect();
        audit(
            "settings-reloaded",
            &format!(
                "AgentCommandsEnabled={enabled} enabled={}",
                if names.is_empty() { "-".into() } else { names.join(",") }
            ),
        );
        agent.set_surface(enabled, commands);
    }
    if loaded.error.is_some() {
        return before.clone();
    }
    let restart_only = restart_only_changes(before, &loaded.settings);
    if !restart_only.is_empty() {
        tracing::info!(
            "{} changed in mcec.settings; takes effect when mcec restarts",
            restart_only.join(", ")
        );
    }
    loaded.settings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(commands: Commands, error: bool) -> Loaded {
        Loaded {
            settings: Settings { agent_commands_enabled: true, ..Settings::default() },
            commands,
            error: error.then(|| mcec_rules::settings::SettingsError {
                file: "mcec.commands".into(),
                line: Some(2),
                key: None,
                problem: "not valid TOML".into(),
            }),
            warnings: Vec::new(),
            ask_first: false,
        }
    }

    #[test]
    fn a_session_copy_never_enables_launch_from_its_file() {
        let file = Commands::enabling(["launch", "click"]);
        let (on, commands) = surface(&loaded(file.clone(), false), true);
        assert!(on && commands.is_enabled("click") && !commands.is_enabled(LAUNCH));
        let (_, operator) = surface(&loaded(file, false), false);
        assert!(operator.is_enabled(LAUNCH), "the operator's own copy keeps it");
    }

    #[test]
    fn a_broken_file_turns_the_surface_off() {
        let (on, _) = surface(&loaded(Commands::enabling(["click"]), true), false);
        assert!(!on);
    }
}
