//! Whether a process arms the emergency stop, and, when it does not, the true reason in the
//! words the host window, the log and the audit give.
//!
//! Two things keep a stop from being armed by choice: the operator's
//! `EmergencyStopEnabled = false`, and a process that serves no agent at all (the host with
//! neither `McpServerEnabled` nor `AgentCommandsEnabled`: nothing there can act, so there is
//! nothing to stop). A stop that was wanted but could not start (no XInput, a Wayland session)
//! is not decided here: the monitor's own error says why.

use crate::gates::DesktopGate;

/// The audit event of a stop the operator turned off.
pub const DISABLED_EVENT: &str = "emergency-stop-disabled";
/// The audit event of a stop that is not armed because nothing here serves agents.
pub const NOT_NEEDED_EVENT: &str = "emergency-stop-not-needed";

/// Whether to arm the stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopPlan {
    /// Arm it: something here serves agents and the operator did not turn it off.
    Arm,
    /// `EmergencyStopEnabled = false`; `serves_agents` says whether it would be needed.
    Disabled { serves_agents: bool },
    /// The stop is on, but nothing in this process serves agents.
    NotNeeded,
}

impl StopPlan {
    /// The plan for the operator's `EmergencyStopEnabled` and whether this process serves
    /// agents (`mcec mcp` always does; the host when `McpServerEnabled` or
    /// `AgentCommandsEnabled` is on).
    pub fn decide(stop_enabled: bool, serves_agents: bool) -> StopPlan {
        match (stop_enabled, serves_agents) {
            (true, true) => StopPlan::Arm,
            (false, serves_agents) => StopPlan::Disabled { serves_agents },
            (true, false) => StopPlan::NotNeeded,
        }
    }

    /// Why the stop is not armed, `None` when it is to be armed.
    pub fn why_not(self) -> Option<&'static str> {
        match self {
            StopPlan::Arm => None,
            StopPlan::Disabled { serves_agents: true } => Some("EmergencyStopEnabled is false"),
            StopPlan::Disabled { serves_agents: false } => Some(
                "EmergencyStopEnabled is false, and nothing here serves agents (McpServerEnabled and AgentCommandsEnabled are both off)",
            ),
            StopPlan::NotNeeded => Some(
                "nothing here serves agents, so there is nothing to stop (McpServerEnabled and AgentCommandsEnabled are both off; it arms when either is on)",
            ),
        }
    }

    /// The audit line of a stop that is not armed: its event and detail.
    pub fn audit(self) -> Option<(&'static str, &'static str)> {
        match self {
            StopPlan::Arm => None,
            StopPlan::Disabled { .. } => Some((
                DISABLED_EVENT,
                "EmergencyStopEnabled = false: the operator turned the stop off; actuation runs with no stop, no chord, no prompt",
            )),
            StopPlan::NotNeeded => Some((
                NOT_NEEDED_EVENT,
                "nothing here serves agents (McpServerEnabled and AgentCommandsEnabled are both off), so no agent can act and no stop is armed",
            )),
        }
    }

    /// The gate of a process that does not arm the stop, `None` when it is to be armed.
    pub fn gate(self) -> Option<DesktopGate> {
        self.why_not().map(|why| DesktopGate::NotArmed { why: why.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_arms_only_when_it_is_on_and_something_serves_agents() {
        assert_eq!(StopPlan::decide(true, true), StopPlan::Arm);
        assert_eq!(StopPlan::decide(false, true), StopPlan::Disabled { serves_agents: true });
        assert_eq!(StopPlan::decide(false, false), StopPlan::Disabled { serves_agents: false });
        assert_eq!(StopPlan::decide(true, false), StopPlan::NotNeeded);
        assert_eq!(StopPlan::Arm.why_not(), None);
        assert_eq!(StopPlan::Arm.gate(), None);
        assert_eq!(StopPlan::Arm.audit(), None);
    }

    /// Issue 25: the host on a default configuration (the stop on, nothing serving agents)
    /// said "EmergencyStopEnabled is false". Each case names its own reason.
    #[test]
    fn each_reason_names_what_is_true() {
        let default_host = StopPlan::decide(true, false);
        let line = default_host.gate().expect("not armed").stop_line();
        assert!(line.contains("nothing here serves agents"), "{line}");
        assert!(line.contains("McpServerEnabled") && line.contains("AgentCommandsEnabled"), "{line}");
        assert!(!line.contains("EmergencyStopEnabled"), "the stop is on: {line}");
        assert_eq!(default_host.audit().map(|(event, _)| event), Some(NOT_NEEDED_EVENT));

        let off = StopPlan::decide(false, true).gate().expect("not armed").stop_line();
        assert!(off.contains("EmergencyStopEnabled is false") && !off.contains("serves agents"), "{off}");
        assert_eq!(StopPlan::decide(false, true).audit().map(|(event, _)| event), Some(DISABLED_EVENT));

        let both = StopPlan::decide(false, false).why_not().expect("not armed");
        assert!(both.contains("EmergencyStopEnabled is false") && both.contains("serves agents"), "{both}");
        for plan in [default_host, StopPlan::decide(false, true), StopPlan::decide(false, false)] {
            let gate = plan.gate().expect("not armed");
            assert!(!gate.stop_armed(), "{plan:?} never claims an armed stop");
        }
    }
}
