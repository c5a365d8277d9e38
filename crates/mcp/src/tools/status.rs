//! `session-status`: this process's run record, plus the state of the operator's
//! emergency stop in the words the operator's log uses (never "armed" when it is not), and
//! the `commandAccess` map (what is enabled, what may be requested).

use mcec_rules::gates::DesktopGate;
use mcec_rules::{StopFlag, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Invocation, ToolOutput};
use crate::agent::Agent;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionStatus {}

impl Invocation for SessionStatus {
    fn run(self: Box<Self>, agent: &Agent, _stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        let stopped = agent.stop.is_set();
        let mut status = agent.with_record(|r| r.to_json(stopped));
        status["emergencyStop"] = stop_json(&agent.desktop_gate());
        status["commandAccess"] = super::consent::command_access(agent);
        Ok(ToolOutput::json(status))
    }
}

fn stop_json(gate: &DesktopGate) -> Value {
    json!({
        "armed": gate.stop_armed(),
        "actuationAllowed": gate.actuation_allowed(),
        "status": gate.stop_line(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_never_says_armed_without_a_stop() {
        let why = "this is a Wayland session; the X11 stop cannot see your keyboard here";
        for (gate, armed, acts) in [
            (DesktopGate::Ready, true, true),
            (DesktopGate::stopless_display(why, false), false, false),
            (DesktopGate::stopless_display(why, true), false, true),
            (DesktopGate::NoDesktop { detail: "DISPLAY is not set".into() }, false, false),
        ] {
            let v = stop_json(&gate);
            assert_eq!((v["armed"].as_bool(), v["actuationAllowed"].as_bool()), (Some(armed), Some(acts)));
            let line = v["status"].as_str().unwrap_or_default();
            assert_eq!(line == "emergency stop: armed", armed, "{line}");
            if matches!(gate, DesktopGate::StopUnavailable { .. } | DesktopGate::NotArmed { .. }) {
                assert!(line.contains(why), "{line}");
            }
        }
    }
}
