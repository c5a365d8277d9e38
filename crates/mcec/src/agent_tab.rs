//! The core behind the host settings window's Agent tab: it decides what the tab's clicks do.
//!
//! The opt-in (`AllowSessionProvisioning`) is the one permission an agent must never grant
//! itself, and the settings window cannot tell a hand from a program, so its checkbox only
//! opens an attested confirmation prompt, and a change is honoured only when the provenance
//! monitor saw the very click (or key) that pressed `Confirm` come from a physical device,
//! never inside a session copy (`mcec_rules::opt_in`, `crate::attest`). An honoured change rewrites only that key's line
//! of `mcec.settings` (atomically; a file that does not parse is never rewritten) and flips
//! the flag `provision-session` reads, so it applies without a restart. Every decision is
//! audited. Delete, Delete all and Provision new… do what `mcec sessions rm` and `mcec
//! provision` do, through the same functions. The handoff is offered in every client's format
//! (`mcec provision --client`'s texts); a Copy puts the chosen one on the clipboard (X11's
//! CLIPBOARD, or the Win32 clipboard) through the clipboard the `clipboard` tool uses
//! (`platform/a11y.rs`).
//!
//! The handoff's bearer token stays here: the tab gets the handoff with the token masked
//! (`HandoffView::masked`) until the operator reveals it through the attested confirmation,
//! judged like re-arm; closing the settings window masks it again. An entry that holds the
//! token is copied only while it is revealed (docs/decisions.md: copying is showing). While
//! the settings window is open the sessions are listed again every [`REFRESH_EVERY`], each
//! copy's state read from its own lock and marks (`mcec_sessions::list::session_state`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use clap::ValueEnum;
use mcec_mcp::audit::audit;
use mcec_operator::{
    AgentMessage, AgentTab, ClientHandoff, HandoffPart, HandoffView, OperatorEvent, OperatorState, SessionRow,
};
use mcec_rules::activation::Activation;
use mcec_rules::opt_in::opt_in_verdict;
use mcec_rules::own_display::SessionDisplay;
use mcec_rules::settings::{EditError, set_setting};
use mcec_sessions::id::SessionId;
use mcec_sessions::list::list_sessions;
use mcec_sessions::paths::SETTINGS_FILE;
use mcec_sessions::provision::provision;
use mcec_sessions::remove::{Removal, RemoveError, remove_all_sessions, remove_session_dir};

use crate::attest::Attestor;
use crate::client_snippets::Client;
use crate::handoff;
use crate::sessions_cli::{age, size};

const KEY: &str = "AllowSessionProvisioning";

/// How often the open settings window's session list is read again.
pub const REFRESH_EVERY: Duration = Duration::from_secs(2);

/// The last provisioning's handoff as it really is, token and all; the tab sees it masked
/// until `revealed`.
struct Secret {
    view: HandoffView,
    token: String,
    revealed: bool,
}

impl Secret {
    /// What the tab may show now.
    fn shown(&self) -> HandoffView {
        if self.revealed { self.view.clone() } else { self.view.masked(&self.token) }
    }
}

/// What the tab needs from start-up.
pub struct AgentTabConfig {
    pub config_dir: PathBuf,
    pub sessions_root: PathBuf,
    pub exe: PathBuf,
    pub in_session_copy: bool,
    /// The flag `provision-session` reads; shared with the agent's `SessionServices`.
    pub allow_provisioning: Arc<AtomicBool>,
    pub operator_hotkey: String,
    /// Why the settings file could not be read at start, if it could not.
    pub settings_error: Option<String>,
    /// `SessionDisplay` and `OwnDisplaySessionsMax`: the display of the sessions it provisions.
    pub session_display: SessionDisplay,
    pub own_display_sessions_max: u32,
}

/// The Agent tab's core. It runs on its own `mcec-agent-tab` thread (started in
/// `operator_side.rs`), which the re-arm handler hands the tab's events to.
pub struct AgentTabCore {
    config: AgentTabConfig,
    ui: OperatorState,
    attestor: Attestor,
    secret: Mutex<Option<Secret>>,
}

impl AgentTabCore {
    pub fn new(config: AgentTabConfig, ui: OperatorState, attestor: Attestor) -> Self {
        let core = AgentTabCore { config, ui, attestor, secret: Mutex::new(None) };
        let message = core.config.settings_error.as_ref().map(|e| AgentMessage::error(e.clone()));
        core.ui.update_agent_tab(|tab| {
            *tab = AgentTab {
                allow_provisioning: core.config.allow_provisioning.load(Ordering::SeqCst),
                in_session_copy: core.config.in_session_copy,
                sessions_root: core.config.sessions_root.display().to_string(),
                message,
                ..AgentTab::default()
            }
        });
        core.refresh();
        core
    }

    /// Serve the tab's events until the windows stop sending them; between events, while the
    /// settings window is open, list the sessions again every [`REFRESH_EVERY`].
    pub fn serve(&self, events: Receiver<OperatorEvent>) {
        loop {
            match events.recv_timeout(REFRESH_EVERY) {
                Ok(event) => self.handle(event),
                Err(RecvTimeoutError::Timeout) => self.tick(),
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    fn handle(&self, event: OperatorEvent) {
        match event {
            OperatorEvent::SetProvisioning { enabled, by } => self.set_provisioning(enabled, &by),
            OperatorEvent::DeleteSession { id } => self.delete(&id),
            OperatorEvent::DeleteAllSessions => self.delete_all(),
            OperatorEvent::ProvisionNew => self.provision_new(),
            OperatorEvent::RefreshSessions => self.refresh(),
            OperatorEvent::CopyHandoff { client, part } => self.copy(&client, part),
            OperatorEvent::RevealToken { by } => self.reveal(&by),
            _ => {}
        }
    }

    /// The time-driven part: a fresh list while the window is open; once it is closed, the
    /// token masked again.
    pub fn tick(&self) {
        if self.ui.snapshot().settings_open {
            self.refresh();
        } else {
            self.hide_token();
        }
    }

    fn secret(&self) -> std::sync::MutexGuard<'_, Option<Secret>> {
        self.secret.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Show the handoff's token, if the events `by` names were the operator's own hand.
    pub fn reveal(&self, by: &Activation) {
        let judgement = self.attestor.judge(by);
        let detail = judgement.detail;
        if let Err(refusal) = judgement.verdict {
            audit("token-reveal-refused", &format!("reason={}; {detail}", refusal.code()));
            return self.finish(AgentMessage::error(format!("Not shown: {refusal}")));
        }
        let shown = {
            let mut secret = self.secret();
            secret.as_mut().map(|s| {
                s.revealed = true;
                s.shown()
            })
        };
        let Some(shown) = shown else {
            return self.finish(AgentMessage::error("There is no token to show."));
        };
        audit("token-revealed", &format!("by=operator; {detail}"));
        self.ui.update_agent_tab(|tab| tab.handoff = Some(shown));
        self.finish(AgentMessage::info("The token is shown until this window closes."));
    }

    /// Mask the token again (the settings window closed).
    fn hide_token(&self) {
        let shown = {
            let mut secret = self.secret();
            secret.as_mut().filter(|s| s.revealed).map(|s| {
                s.revealed = false;
                s.shown()
            })
        };
        if let Some(shown) = shown {
            self.ui.update_agent_tab(|tab| tab.handoff = Some(shown));
        }
    }

    /// The operator confirmed the opt-in asking for `enabled`, by the events `by` names.
    pub fn set_provisioning(&self, enabled: bool, by: &Activation) {
        let judgement = self.attestor.judge(by);
        let detail = judgement.detail;
        if let Err(refusal) = opt_in_verdict(judgement.verdict, self.config.in_session_copy) {
            audit(
                "provisioning-opt-in-refused",
                &format!("reason={}; wanted {KEY}={enabled}; {detail}", refusal.code()),
            );
            let text = format!("Not changed: {refusal}");
            self.ui.update_agent_tab(|tab| {
                tab.pending = false;
                tab.message = Some(AgentMessage::error(text));
            });
            return;
        }
        let new_text = match self.edited_settings(enabled) {
            Ok(text) => text,
            Err((code, why)) => return self.refuse(enabled, code, &why),
        };
        if let Err(e) =
            mcec_sessions::atomic::write_atomic(&self.config.config_dir, SETTINGS_FILE, new_text.as_bytes())
        {
            return self.refuse(enabled, "write-failed", &format!("cannot write {SETTINGS_FILE}: {e}"));
        }
        self.config.allow_provisioning.store(enabled, Ordering::SeqCst);
        audit("provisioning-opt-in", &format!("{KEY}={enabled}; by=operator; {detail}"));
        let text = if enabled {
            "Agents may now provision session copies (saved to mcec.settings)."
        } else {
            "Agents may no longer provision copies (saved to mcec.settings)."
        };
        self.ui.update_agent_tab(|tab| {
            tab.allow_provisioning = enabled;
            tab.pending = false;
            tab.message = Some(AgentMessage::info(text));
        });
    }

    fn edited_settings(&self, enabled: bool) -> Result<String, (&'static str, String)> {
        let path = self.config.config_dir.join(SETTINGS_FILE);
        let text = match mcec_sessions::safe_open::read_regular(&path, 1024 * 1024) {
            Ok(Some(bytes)) => String::from_utf8(bytes).map_err(|_| {
                ("settings-unparsable", format!("{} is not valid UTF-8; fix it by hand", path.display()))
            })?,
            Ok(None) => String::new(),
            Err(e) => return Err(("settings-unreadable", format!("cannot read {}: {e}", path.display()))),
        };
        let shown = path.display().to_string();
        set_setting(&text, &shown, KEY, enabled, |s, v| s.allow_session_provisioning = v).map_err(|e| match e
        {
            EditError::Unparsable(e) => {
                let line = e.line.map(|l| format!(", line {l}")).unwrap_or_default();
                let key = e.key.map(|k| format!(", key `{k}`")).unwrap_or_default();
                let why = format!(
                    "{}{line}{key} does not parse ({}); fix it by hand: mcec never rewrites a settings file it cannot read",
                    e.file, e.problem
                );
                ("settings-unparsable", why)
            }
            e @ EditError::Unexpected(_) => ("settings-uneditable", e.to_string()),
        })
    }

    fn refuse(&self, enabled: bool, code: &str, why: &str) {
        audit("provisioning-opt-in-refused", &format!("reason={code}; wanted {KEY}={enabled}; {why}"));
        let text = format!("Not changed: {why}");
        self.ui.update_agent_tab(|tab| {
            tab.pending = false;
            tab.message = Some(AgentMessage::error(text));
        });
    }

    /// List the sessions again.
    pub fn refresh(&self) {
        let rows = list_sessions(&self.config.sessions_root)
            .into_iter()
            .map(|s| SessionRow {
                id: s.id.as_str().to_string(),
                age: age(s.age_secs),
                size: size(s.size_bytes),
                running: s.running,
                state: s.state.words().to_string(),
            })
            .collect();
        self.ui.update_agent_tab(|tab| tab.sessions = rows);
    }

    pub fn delete(&self, raw: &str) {
        let message = match SessionId::parse(raw) {
            Err(e) => AgentMessage::error(format!("{raw} is not a session id: {e}")),
            Ok(id) => match remove_session_dir(&self.config.sessions_root, &id) {
                Ok(Removal::Removed) => {
                    audit("session-removed", &format!("session={} by=operator-ui", id.as_str()));
                    AgentMessage::info(format!("Deleted session {}.", id.as_str()))
                }
                Ok(Removal::AlreadyGone) => {
                    AgentMessage::info(format!("Session {} was already gone.", id.as_str()))
                }
                Err(RemoveError::Running(_)) => {
                    AgentMessage::error(format!("Session {} is running: stop it first.", id.as_str()))
                }
                Err(e) => AgentMessage::error(format!("Session {} was not deleted: {e}", id.as_str())),
            },
        };
        self.finish(message);
    }

    pub fn delete_all(&self) {
        let report = remove_all_sessions(&self.config.sessions_root);
        for id in &report.removed {
            audit("session-removed", &format!("session={} by=operator-ui", id.as_str()));
        }
        let mut text = format!("Deleted {} session(s).", report.removed.len());
        let running: Vec<&str> = report.skipped_running.iter().map(|id| id.as_str()).collect();
        if !running.is_empty() {
            text.push_str(&format!(" Skipped (running, stop them first): {}.", running.join(", ")));
        }
        for e in &report.errors {
            text.push_str(&format!(" Error: {e}."));
        }
        let clean = running.is_empty() && report.errors.is_empty();
        self.finish(if clean { AgentMessage::info(text) } else { AgentMessage::error(text) });
    }

    /// Provision a session for the operator, as `mcec provision` does (the opt-in is needed).
    pub fn provision_new(&self) {
        let why = if self.config.in_session_copy {
            Some("this is a session copy, which never provisions")
        } else if !self.config.allow_provisioning.load(Ordering::SeqCst) {
            Some("AllowSessionProvisioning is off")
        } else {
            None
        };
        if let Some(why) = why {
            audit("provision-refused", &format!("reason=provisioning-not-authorized; by=operator-ui; {why}"));
            return self.finish(AgentMessage::error(
                "Provisioning is off: tick the checkbox above (with your own mouse) first.",
            ));
        }
        let request = handoff::request(
            &self.config.sessions_root,
            &self.config.exe,
            &self.config.operator_hotkey,
            true,
            None,
        )
        .with_own_display(self.config.session_display.own_display(None), self.config.own_display_sessions_max)
        .by("operator-ui");
        match provision(request) {
            Ok(h) => {
                let secret = Secret { view: handoff_view(&h), token: h.token.clone(), revealed: false };
                let shown = secret.shown();
                *self.secret() = Some(secret);
                self.ui.update_agent_tab(|tab| tab.handoff = Some(shown));
                self.finish(AgentMessage::info(format!("Provisioned session {}.", h.session_id.as_str())));
            }
            Err(e) => self.finish(AgentMessage::error(format!("Provisioning failed: {e}"))),
        }
    }

    /// Put one entry of the shown handoff on the clipboard of this process's desktop.
    pub fn copy(&self, client: &str, part: HandoffPart) {
        let shown = match part {
            HandoffPart::Stdio => "stdio",
            HandoffPart::Http => "HTTP",
        };
        // Copying the token is showing it: an entry holding it is copied only once revealed.
        let (text, hidden) = {
            let secret = self.secret();
            let found = secret.as_ref().and_then(|s| Some((s.view.text(client, part)?.to_string(), s)));
            match found {
                Some((text, s)) => {
                    let hidden = !s.revealed && !s.token.is_empty() && text.contains(&s.token);
                    (Some(text), hidden)
                }
                None => (None, false),
            }
        };
        if hidden {
            audit(
                "handoff-copy-refused",
                &format!("client={client}; part={shown}; reason=token-hidden; by=operator-ui"),
            );
            return self.finish(AgentMessage::error(format!(
                "Not copied: the {shown} entry holds the token; reveal it first (Reveal token…)."
            )));
        }
        let Some(text) = text else {
            return self
                .finish(AgentMessage::error(format!("There is no {shown} entry for {client} to copy.")));
        };
        let message = match crate::platform::copy_for_operator(text) {
            Ok(()) => {
                audit("handoff-copied", &format!("client={client}; part={shown}; by=operator-ui"));
                AgentMessage::info(format!("Copied the {client} {shown} entry to the clipboard."))
            }
            Err(e) => AgentMessage::error(format!("Not copied: {}", e.detail)),
        };
        self.finish(message);
    }

    fn finish(&self, message: AgentMessage) {
        self.ui.update_agent_tab(|tab| {
            tab.pending = false;
            tab.message = Some(message);
        });
        self.refresh();
    }
}

/// The handoff as the tab shows it: the generic JSON first, then each client's own entries.
fn handoff_view(h: &mcec_sessions::provision::Handoff) -> HandoffView {
    let text = handoff::handoff_text(h);
    let mut clients = vec![ClientHandoff {
        label: "JSON".into(),
        place: "any client that reads mcpServers JSON".into(),
        stdio: text.stdio_json,
        http: text.http_json,
        note: None,
    }];
    for &client in Client::value_variants() {
        let (label, place) = client.place();
        let entry = match handoff::client_entries(h, client) {
            Ok(entries) => {
                let (http, why_not) = match entries.http {
                    Some(Ok(http)) => (Some(http), None),
                    Some(Err(why)) => (None, Some(why)),
                    None => (None, None),
                };
                ClientHandoff {
                    label: label.into(),
                    place: place.into(),
                    stdio: entries.stdio,
                    http,
                    note: why_not.or(entries.token_note),
                }
            }
            Err(why) => ClientHandoff {
                label: label.into(),
                place: place.into(),
                note: Some(why),
                ..Default::default()
            },
        };
        clients.push(entry);
    }
    HandoffView { summary: text.summary.join("\n"), clients, token_hidden: false }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::Path;
    use std::sync::Mutex;

    use mcec_desktop::monitor::LastPhysicalInput;
    use mcec_rules::StopFlag;
    use mcec_rules::latch::Latch;

    use super::*;

    fn core(root: &Path, allow: bool, in_session_copy: bool) -> (AgentTabCore, OperatorState) {
        let exe = root.join("source-mcec");
        std::fs::write(&exe, b"not really mcec").expect("source exe");
        let config = AgentTabConfig {
            config_dir: root.join("config"),
            sessions_root: root.join("sessions"),
            exe,
            in_session_copy,
            allow_provisioning: Arc::new(AtomicBool::new(allow)),
            operator_hotkey: "Ctrl+Alt+Shift+S".into(),
            settings_error: None,
            session_display: SessionDisplay::Shared,
            own_display_sessions_max: mcec_rules::own_display::DEFAULT_SESSIONS_MAX,
        };
        let ui = OperatorState::new();
        let attestor = Attestor {
            ledger: LastPhysicalInput::new(),
            latch: Latch::new(StopFlag::new()),
            monitored: true,
        };
        let core = AgentTabCore::new(config, ui.clone(), attestor);
        (core, ui)
    }

    /// The session directories under `root/sessions` (none when it does not exist).
    fn sessions(root: &Path) -> Vec<String> {
        std::fs::read_dir(root.join("sessions"))
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default()
    }

    /// The `AGENT-AUDIT:` lines `f` writes on this thread.
    fn audited(f: impl FnOnce()) -> Vec<String> {
        struct Sink(Arc<Mutex<Vec<u8>>>);
        impl Write for Sink {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().expect("sink").extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let sink = buffer.clone();
        let subscriber =
            tracing_subscriber::fmt().with_writer(move || Sink(sink.clone())).with_ansi(false).finish();
        tracing::subscriber::with_default(subscriber, f);
        let text = String::from_utf8(buffer.lock().expect("sink").clone()).expect("utf-8");
        text.lines().filter_map(|l| l.find("AGENT-AUDIT: ").map(|at| l[at..].to_string())).collect()
    }

    #[test]
    fn provision_new_is_refused_and_audited_while_the_opt_in_is_off_or_in_a_session_copy() {
        for (allow, in_session_copy, why) in [
            (false, false, "AllowSessionProvisioning is off"),
            (false, true, "session copy"),
            (true, true, "session copy"),
        ] {
            let dir = tempfile::tempdir().expect("tempdir");
            let (core, ui) = core(dir.path(), allow, in_session_copy);
            let audit = audited(|| core.provision_new());
            let case = format!("allow={allow} in_session_copy={in_session_copy}");
            assert_eq!(sessions(dir.path()), Vec::<String>::new(), "{case}: nothing provisioned");
            let refused: Vec<_> =
                audit.iter().filter(|l| l.starts_with("AGENT-AUDIT: provision-refused;")).collect();
            assert_eq!(refused.len(), 1, "{case}: {audit:?}");
            assert!(
                refused[0].contains("provisioning-not-authorized") && refused[0].contains(why),
                "{case}: {audit:?}"
            );
            assert!(!audit.iter().any(|l| l.contains("session-provisioned")), "{case}: {audit:?}");
            let tab = ui.snapshot().agent;
            assert!(tab.handoff.is_none(), "{case}: no handoff shown");
            assert!(tab.message.is_some_and(|m| m.text.contains("Provisioning is off")), "{case}");
        }
        // Positive control: with the opt-in on, in the operator's own copy, it provisions.
        let dir = tempfile::tempdir().expect("tempdir");
        let (core, ui) = core(dir.path(), true, false);
        let audit = audited(|| core.provision_new());
        assert_eq!(sessions(dir.path()).len(), 1, "{audit:?}");
        assert!(
            audit.iter().any(|l| l.contains("session-provisioned") && l.contains("by=operator-ui")),
            "{audit:?}"
        );
        assert!(ui.snapshot().agent.handoff.is_some());
    }

    /// A click on a button shown a second ago, `physical` or injected as the ledger saw it.
    fn click(core: &AgentTabCore, physical: bool) -> Activation {
        use mcec_desktop::monitor::RawInput;
        use mcec_rules::activation::{ActivationEvents, InputEventId, Pressed, Provenance};
        let now = std::time::Instant::now();
        let provenance = if physical { Provenance::Physical } else { Provenance::Injected };
        // Each click at its own server times, as a real server's would be.
        let base = if physical { 5000 } else { 1000 };
        let (press, release) = (
            InputEventId { time: base, what: Pressed::Button(1), down: true },
            InputEventId { time: base + 80, what: Pressed::Button(1), down: false },
        );
        for (id, ago) in [(press, 80), (release, 1)] {
            let at = now - Duration::from_millis(ago);
            core.attestor.ledger.record(RawInput {
                time: id.time,
                what: id.what,
                down: id.down,
                provenance,
                at,
            });
        }
        Activation {
            events: Some(ActivationEvents::Click { press, release }),
            shown_at: Some(now - Duration::from_secs(1)),
        }
    }

    #[test]
    fn the_token_is_masked_until_a_physical_click_reveals_it_and_copies_wait_for_that() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (core, ui) = core(dir.path(), true, false);
        core.provision_new();
        let token = core.secret().as_ref().map(|s| s.token.clone()).expect("a handoff");
        assert_eq!(token.len(), 64);
        let shown = |ui: &OperatorState| format!("{:?}", ui.snapshot().agent.handoff);
        assert!(!shown(&ui).contains(&token) && shown(&ui).contains(&mask(&token)), "{}", shown(&ui));
        assert!(ui.snapshot().agent.handoff.is_some_and(|h| h.token_hidden));

        // The entry holding the token is not copied while it is hidden; the stdio one would be
        // (it holds none: it is refused here only for want of a clipboard, not of a reveal).
        let audit = audited(|| core.copy("JSON", HandoffPart::Http));
        assert!(
            audit.iter().any(|l| l.contains("handoff-copy-refused") && l.contains("reason=token-hidden")),
            "{audit:?}"
        );
        assert!(audit.iter().all(|l| !l.contains(&token)), "{audit:?}");

        // An injected click reveals nothing.
        let by = click(&core, false);
        let audit = audited(|| core.reveal(&by));
        assert!(audit.iter().any(|l| l.starts_with("AGENT-AUDIT: token-reveal-refused;")), "{audit:?}");
        assert!(!shown(&ui).contains(&token));

        // The operator's own click does; closing the settings window masks it again.
        ui.open_settings();
        let by = click(&core, true);
        let audit = audited(|| core.reveal(&by));
        assert!(audit.iter().any(|l| l.starts_with("AGENT-AUDIT: token-revealed;")), "{audit:?}");
        assert!(audit.iter().all(|l| !l.contains(&token)), "the audit never holds the token: {audit:?}");
        assert!(shown(&ui).contains(&token));
        assert!(ui.snapshot().agent.handoff.is_some_and(|h| !h.token_hidden));
        core.tick();
        assert!(shown(&ui).contains(&token), "still open: still shown");
        ui.close_settings();
        core.tick();
        assert!(!shown(&ui).contains(&token), "closed: masked again");
    }

    fn mask(token: &str) -> String {
        mcec_operator::mask_token(token)
    }

    #[test]
    fn a_just_provisioned_copy_is_listed_as_not_started_and_the_list_follows_its_lock() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (core, ui) = core(dir.path(), true, false);
        core.provision_new();
        let rows = ui.snapshot().agent.sessions;
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].state.as_str(), rows[0].running), ("not started", false));
        let session = dir.path().join("sessions").join(&rows[0].id);
        let lock = mcec_sessions::lock::InstanceLock::acquire(&session).expect("lock");
        ui.open_settings();
        core.tick();
        let rows = ui.snapshot().agent.sessions;
        assert_eq!((rows[0].state.as_str(), rows[0].running), ("running", true), "the tick listed it again");
        drop(lock);
        core.tick();
        assert_eq!(ui.snapshot().agent.sessions[0].state, "not running");
    }
}
