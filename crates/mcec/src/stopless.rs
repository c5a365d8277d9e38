//! A display where the stop cannot be armed: a Wayland session's X server (XWayland), where
//! the X11 stop cannot see the operator's keyboard (`mcec_desktop::monitor::wayland`), or a
//! wlroots compositor without sway's IPC, which has no per-device binding to carry it
//! (`mcec_desktop_wayland::choice`).
//!
//! There actuation is refused, unless the operator's `UnsafeAllowActuationWithoutStopOnWayland`
//! lets agents act anyway; that is audited at start, and each actuation tool's first use is
//! audited again, with a warning kept on the overlay. Nothing here ever says "armed".

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use mcec_mcp::audit::audit;
use mcec_operator::OperatorState;
use mcec_rules::catalog::{self, ToolKind};
use mcec_rules::gates::DesktopGate;

/// The gate on a Wayland session's X server or a wlroots compositor without sway's IPC, or
/// `None` for a plain X server and on sway. A probe that
/// fails refuses actuation (fail closed).
pub fn stopless_display(unsafe_allowed: bool) -> Option<DesktopGate> {
    let why = match crate::platform::wayland_session() {
        Ok(None) => return None,
        Ok(Some(session)) => session,
        Err(e) => {
            tracing::error!(
                "cannot tell whether this is a Wayland session: {e}; actuation tools are refused"
            );
            audit("emergency-stop-unavailable", &e.to_string());
            return Some(DesktopGate::StopUnavailable { why: e.to_string() });
        }
    };
    let gate = DesktopGate::stopless_display(&why, unsafe_allowed);
    if unsafe_allowed {
        tracing::warn!("{}", gate.stop_line());
        audit("unsafe-actuation-without-stop", &gate.stop_line());
    } else {
        tracing::error!("{}", gate.stop_line());
        audit("emergency-stop-unavailable", &gate.stop_line());
    }
    Some(gate)
}

/// Watches admitted calls while actuation runs with no stop armed.
pub struct NoStopWatch {
    why: String,
    used: Mutex<BTreeSet<String>>,
}

/// The overlay line that stays while agents act without a stop.
const WARNING: &str = "⚠ emergency stop NOT armed";

impl NoStopWatch {
    /// A watch when `gate` lets agents act without a stop.
    pub fn for_gate(gate: &DesktopGate) -> Option<NoStopWatch> {
        match gate {
            DesktopGate::NotArmed { why } => Some(NoStopWatch { why: why.clone(), used: Mutex::default() }),
            _ => None,
        }
    }

    /// Audits the first use of each actuation tool and keeps the warning among the overlay's
    /// narrated lines, however many calls push older ones out.
    pub fn on_call(&self, tool: &str, ui: Option<&OperatorState>) {
        let why = &self.why;
        if catalog::find(tool).is_some_and(|s| s.kind == ToolKind::Actuation)
            && self.used.lock().unwrap_or_else(PoisonError::into_inner).insert(tool.to_string())
        {
            audit("actuation-without-stop", &format!("first use of {tool}; emergency stop NOT armed: {why}"));
        }
        if let Some(ui) = ui
            && !ui.snapshot().narration.iter().any(|line| line.starts_with(WARNING))
        {
            ui.narrate(format!("{WARNING}: {why}"));
        }
    }
}
