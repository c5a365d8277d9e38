//! The agent-facing state of one mcec process: what the gates read on every call and what
//! the tools run against. One `Agent` lives behind an `Arc` for the process's life and is
//! shared by the stdio server, every HTTP request and the stop worker.
//!
//! What the agent may call can change while the process runs: the operator's edits of
//! `mcec.settings`/`mcec.commands` are reloaded ([`Agent::set_surface`]), and the operator can
//! grant commands through `request-command-access` (the [`ConsentBook`], in memory only).
//! Either way every connected client is told `notifications/tools/list_changed`.

use std::sync::{Mutex, PoisonError, RwLock};
use std::time::SystemTime;

use mcec_rules::StopFlag;
use mcec_rules::consent::{ConsentBook, Outcome};
use mcec_rules::gates::{CallState, DesktopGate};
use mcec_rules::record::RunRecord;
use mcec_rules::settings::Commands;
use rmcp::{Peer, RoleServer};

/// Told about each admitted call, e.g. to narrate it on the operator's overlay.
pub trait CallObserver: Send + Sync {
    /// `summary` is the call in plain words (`mcec_rules::narration::describe`): no typed
    /// text, clipboard contents or tokens.
    fn on_call(&self, tool: &str, summary: &str);
}

/// Puts a `request-command-access` to the operator: shows the prompt and blocks until it is
/// answered, times out, or `stop` is set (the emergency stop, the client's cancel). The binary
/// implements it over the operator windows and the provenance monitor.
pub trait ConsentAsker: Send + Sync {
    fn ask(&self, reason: &str, commands: &[String], stop: &StopFlag) -> Outcome;
}

/// What the operator's files allow agents right now.
#[derive(Debug, Clone)]
struct Surface {
    agent_commands_enabled: bool,
    commands: Commands,
}

/// Most client connections told about tool-list changes at once (old ones are dropped first).
const MAX_PEERS: usize = 64;

/// Everything fixed at start-up.
pub struct AgentConfig {
    pub run_id: String,
    pub stop: StopFlag,
    pub installed_copy: bool,
    /// A session copy (never provisions, so `provision-session` is not listed).
    pub session_copy: bool,
    /// False when `AgentCommandsEnabled` is false *or* a settings file failed to parse.
    pub agent_commands_enabled: bool,
    pub commands: Commands,
    pub desktop_gate: DesktopGate,
    /// Said to the agent after the usual instructions (what the operator must do first).
    pub instructions_note: Option<String>,
}

pub struct Agent {
    pub run_id: String,
    /// The emergency-stop latch's flag: set only by the stop, cleared only by re-arm.
    pub stop: StopFlag,
    /// A child of `stop`, set when this process is going away (its client hung up, a
    /// signal): calls in flight stop at their next step and nothing queued runs, without
    /// tripping the emergency stop.
    hands: StopFlag,
    pub installed_copy: bool,
    pub session_copy: bool,
    surface: RwLock<Surface>,
    consent: Mutex<ConsentBook>,
    asker: Option<Box<dyn ConsentAsker>>,
    peers: Mutex<Vec<(Peer<RoleServer>, tokio::runtime::Handle)>>,
    /// The latest client's `clientInfo` name and version from `initialize`.
    client: Mutex<Option<(String, String)>>,
    desktop_gate: RwLock<DesktopGate>,
    record: Mutex<RunRecord>,
    observer: Option<Box<dyn CallObserver>>,
    pub tools: crate::tools::ToolServices,
    pub instructions_note: Option<String>,
}

impl Agent {
    pub fn new(config: AgentConfig, tools: crate::tools::ToolServices) -> Self {
        Agent {
            record: Mutex::new(RunRecord::new(config.run_id.clone(), SystemTime::now())),
            run_id: config.run_id,
            hands: config.stop.child(),
            stop: config.stop,
            installed_copy: config.installed_copy,
            session_copy: config.session_copy,
            surface: RwLock::new(Surface {
                agent_commands_enabled: config.agent_commands_enabled,
                commands: config.commands,
            }),
            consent: Mutex::new(ConsentBook::default()),
            asker: None,
            peers: Mutex::new(Vec::new()),
            client: Mutex::new(None),
            desktop_gate: RwLock::new(config.desktop_gate),
            observer: None,
            tools,
            instructions_note: config.instructions_note,
        }
    }

    pub fn with_observer(mut self, observer: Box<dyn CallObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Who puts `request-command-access` to the operator; without one it answers
    /// `consent-unavailable`.
    pub fn with_consent_asker(mut self, asker: Box<dyn ConsentAsker>) -> Self {
        self.asker = Some(asker);
        self
    }

    /// What gates 1–5 see for this call; `commands` is [`Agent::commands`], sampled by the caller.
    pub fn call_state<'a>(&self, commands: &'a Commands) -> CallState<'a> {
        CallState {
            stopped: self.stop.is_set(),
            installed_copy: self.installed_copy,
            session_copy: self.session_copy,
            agent_commands_enabled: self.agent_commands_enabled(),
            commands,
            consent_pending: self.with_consent(|book| book.is_asking()),
        }
    }

    /// `AgentCommandsEnabled`, false while a settings file is broken.
    pub fn agent_commands_enabled(&self) -> bool {
        self.surface.read().unwrap_or_else(PoisonError::into_inner).agent_commands_enabled
    }

    /// What `mcec.commands` enables now.
    pub fn file_commands(&self) -> Commands {
        self.surface.read().unwrap_or_else(PoisonError::into_inner).commands.clone()
    }

    /// What is enabled now: `mcec.commands` plus the operator's grants.
    pub fn commands(&self) -> Commands {
        let file = self.file_commands();
        self.with_consent(|book| book.effective(&file))
    }

    /// The operator's files changed (live reload): apply them and tell every client.
    pub fn set_surface(&self, agent_commands_enabled: bool, commands: Commands) {
        *self.surface.write().unwrap_or_else(PoisonError::into_inner) =
            Surface { agent_commands_enabled, commands };
        self.tools_changed();
    }

    /// Run `f` on this process's consent book.
    pub fn with_consent<T>(&self, f: impl FnOnce(&mut ConsentBook) -> T) -> T {
        f(&mut self.consent.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub(crate) fn consent_asker(&self) -> Option<&dyn ConsentAsker> {
        self.asker.as_deref()
    }

    /// The latest client's name and version, as its `initialize` gave them (the operator's
    /// windows name the agent by them).
    pub fn client(&self) -> Option<(String, String)> {
        self.client.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Remember the client's `clientInfo` from its `initialize` (over HTTP each request may be
    /// served by a fresh handler, so this is the one moment every transport shares).
    pub(crate) fn set_client(&self, info: &rmcp::model::Implementation) {
        let name = mcec_rules::text::ellipsize(info.name.trim(), 64);
        let version = mcec_rules::text::ellipsize(info.version.trim(), 32);
        *self.client.lock().unwrap_or_else(PoisonError::into_inner) = Some((name, version));
    }

    /// The client is gone for good (the operator ended it): no name to show.
    pub fn forget_client(&self) {
        *self.client.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Remember a client connection, to tell it when the tool list changes.
    pub(crate) fn add_peer(&self, peer: Peer<RoleServer>) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|(p, _)| !p.is_transport_closed());
        if peers.len() >= MAX_PEERS {
            peers.remove(0);
        }
        peers.push((peer, handle));
    }

    /// Send `notifications/tools/list_changed` to every client still connected (where the
    /// transport can carry it: stdio; HTTP in JSON-response mode has no stream to carry it).
    pub fn tools_changed(&self) {
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|(p, _)| !p.is_transport_closed());
        for (peer, handle) in peers.iter() {
            let peer = peer.clone();
            handle.spawn(async move {
                if let Err(e) = peer.notify_tool_list_changed().await {
                    tracing::debug!("cannot send tools/list_changed: {e}");
                }
            });
        }
    }

    /// A fresh flag for one call: set by the emergency stop, by [`Agent::shut_down`], or by
    /// whoever holds it (the transport, when the client cancels the call or hangs up).
    pub fn call_flag(&self) -> StopFlag {
        self.hands.child()
    }

    /// Stop every call in flight and every call still queued, for good: the process is
    /// going away. The calls release what they hold as they abort.
    pub fn shut_down(&self) {
        self.hands.set();
    }

    pub fn desktop_gate(&self) -> DesktopGate {
        self.desktop_gate.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Called when the stop gets armed (or fails to) after start-up.
    pub fn set_desktop_gate(&self, gate: DesktopGate) {
        *self.desktop_gate.write().unwrap_or_else(PoisonError::into_inner) = gate;
    }

    /// Run `f` on the run record (counters, stop stamps).
    pub fn with_record<T>(&self, f: impl FnOnce(&mut RunRecord) -> T) -> T {
        f(&mut self.record.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub(crate) fn observe(&self, tool: &str, summary: &str) {
        if let Some(observer) = &self.observer {
            observer.on_call(tool, summary);
        }
    }
}
