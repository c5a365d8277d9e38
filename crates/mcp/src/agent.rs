//! The agent-facing state of one mcec process: what the gates read on every call and what
//! the tools run against. One `Agent` lives behind an `Arc` for the process's life and is
//! shared by the stdio server, every HTTP request and the stop worker.

use std::sync::{Mutex, PoisonError, RwLock};
use std::time::SystemTime;

use mcec_rules::StopFlag;
use mcec_rules::gates::{CallState, DesktopGate};
use mcec_rules::record::SessionRecord;
use mcec_rules::settings::Commands;

/// Told about each admitted call, e.g. to narrate it on the operator's overlay.
pub trait CallObserver: Send + Sync {
    fn on_call(&self, tool: &str, summary: &str);
}

/// Everything fixed at start-up.
pub struct AgentConfig {
    pub session_id: String,
    pub stop: StopFlag,
    pub installed_copy: bool,
    /// False when `AgentCommandsEnabled` is false *or* a settings file failed to parse.
    pub agent_commands_enabled: bool,
    pub commands: Commands,
    pub desktop_gate: DesktopGate,
    /// Said to the agent after the usual instructions (what the operator must do first).
    pub instructions_note: Option<String>,
}

pub struct Agent {
    pub session_id: String,
    /// The emergency-stop latch's flag: set only by the stop, cleared only by re-arm.
    pub stop: StopFlag,
    /// A child of `stop`, set when this process is going away (its client hung up, a
    /// signal): calls in flight stop at their next step and nothing queued runs, without
    /// tripping the emergency stop.
    hands: StopFlag,
    pub installed_copy: bool,
    pub agent_commands_enabled: bool,
    pub commands: Commands,
    desktop_gate: RwLock<DesktopGate>,
    record: Mutex<SessionRecord>,
    observer: Option<Box<dyn CallObserver>>,
    pub tools: crate::tools::ToolServices,
    pub instructions_note: Option<String>,
}

impl Agent {
    pub fn new(config: AgentConfig, tools: crate::tools::ToolServices) -> Self {
        Agent {
            record: Mutex::new(SessionRecord::new(config.session_id.clone(), SystemTime::now())),
            session_id: config.session_id,
            hands: config.stop.child(),
            stop: config.stop,
            installed_copy: config.installed_copy,
            agent_commands_enabled: config.agent_commands_enabled,
            commands: config.commands,
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

    /// What gates 1–5 see for this call.
    pub fn call_state(&self) -> CallState<'_> {
        CallState {
            stopped: self.stop.is_set(),
            installed_copy: self.installed_copy,
            agent_commands_enabled: self.agent_commands_enabled,
            commands: &self.commands,
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

    /// Run `f` on the session record (counters, stop stamps).
    pub fn with_record<T>(&self, f: impl FnOnce(&mut SessionRecord) -> T) -> T {
        f(&mut self.record.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub(crate) fn observe(&self, tool: &str, summary: &str) {
        if let Some(observer) = &self.observer {
            observer.on_call(tool, summary);
        }
    }
}
