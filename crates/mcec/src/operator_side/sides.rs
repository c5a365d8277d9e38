//! The small traits the stop and re-arm runners act through, one per thing they touch (the
//! durable record, the audit log, the agent's hands, the operator windows, the session
//! record), and their real implementations. Tests put fakes in their place.

use std::sync::Arc;
use std::time::SystemTime;

use mcec_desktop::DesktopTools;
use mcec_mcp::Agent;
use mcec_operator::OperatorState;

use crate::stop_follower::Keeper;

/// Where this process's own stop is recorded durably.
pub trait RecordStore {
    /// Write the record of the stop this process holds (under a fresh id when it has none).
    /// A failure is the store's to log, audit and show ("not recorded" on the banner,
    /// actuation refused); the stop stays latched whatever happens here.
    fn record_own_stop(&self, reason: &str, wall: SystemTime) -> Result<(), String>;
}

/// The audit log.
pub trait AuditLog {
    fn audit(&self, event: &str, detail: &str);
}

/// The agent's hands on the desktop.
pub trait Hands {
    /// End any recording and release held buttons and modifiers.
    fn release_all(&self) -> Result<(), String>;
}

/// The operator windows (banner and prompts).
pub trait Windows {
    fn show_stopped(&self, reason: &str);
    fn open_prompt(&self);
    fn show_rearmed(&self);
    fn show_refusal(&self, message: &str);
}

/// The session record `session-status` shows.
pub trait SessionStamp {
    fn stamp_stop(&self, wall: SystemTime, reason: &str);
    fn amend_stop(&self, note: &str);
    fn stamp_rearm(&self, at: SystemTime);
}

impl RecordStore for Keeper {
    fn record_own_stop(&self, reason: &str, wall: SystemTime) -> Result<(), String> {
        Keeper::record_own_stop(self, reason, wall)
    }
}

/// The one audit function, `mcec_rules::audit`.
pub struct Audited;

impl AuditLog for Audited {
    fn audit(&self, event: &str, detail: &str) {
        mcec_mcp::audit::audit(event, detail);
    }
}

/// No desktop: nothing is held.
impl Hands for Option<Arc<DesktopTools>> {
    fn release_all(&self) -> Result<(), String> {
        self.as_ref().map_or(Ok(()), |desktop| desktop.emergency_release().map_err(|e| e.to_string()))
    }
}

/// No operator windows: nothing is shown.
impl Windows for Option<OperatorState> {
    fn show_stopped(&self, reason: &str) {
        if let Some(ui) = self {
            ui.set_stopped(reason);
        }
    }

    fn open_prompt(&self) {
        if let Some(ui) = self {
            ui.open_prompt();
        }
    }

    fn show_rearmed(&self) {
        if let Some(ui) = self {
            ui.set_rearmed();
        }
    }

    fn show_refusal(&self, message: &str) {
        if let Some(ui) = self {
            ui.show_refusal(message);
        }
    }
}

impl SessionStamp for Agent {
    fn stamp_stop(&self, wall: SystemTime, reason: &str) {
        self.with_record(|r| r.stamp_stop(wall, reason.to_string()));
    }

    fn amend_stop(&self, note: &str) {
        self.with_record(|r| r.amend_open_stop(note));
    }

    fn stamp_rearm(&self, at: SystemTime) {
        self.with_record(|r| r.stamp_rearm(at));
    }
}
