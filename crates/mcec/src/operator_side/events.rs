//! The operator's clicks, as the windows report them: the host window's Stop trips the latch
//! (stopping is always allowed, so nothing about the click is judged), a re-arm goes to
//! [`Rearm::attempt`], the console's End to `end.rs` (judged the same way), a consent click to
//! the waiting request, the Agent tab's work to a thread
//! of its own (so a re-arm never waits behind a copy of the executable), Quit ends the process.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};

use mcec_mcp::audit::audit;
use mcec_operator::OperatorEvent;
use mcec_rules::latch::StopReason;

use super::end::{AgentEnd, end_pressed};
use super::guard::GuardLink;
use super::rearm::Rearm;
use super::ui::{UiShutdown, exit_after_ui};
use crate::agent_tab::AgentTabCore;
use crate::consent::ConsentClick;

/// Why the stop engaged when the operator pressed the host window's Stop (the banner, the
/// audit line and the stop record say it).
const STOP_BUTTON_REASON: &str = "the operator pressed Stop in the mcec window";

/// Operator clicks from the windows. A re-arm is honoured only when the monitor saw the very
/// click (or key) that pressed `Re-arm` come from a physical device, the prompt had been on
/// screen a moment before it, and no tampering was seen recently.
pub(super) fn rearm_handler(
    events: Receiver<OperatorEvent>,
    rearm: Rearm,
    guard: Option<GuardLink>,
    agent_tab: Option<Sender<OperatorEvent>>,
    consent: Option<Sender<ConsentClick>>,
    ui_thread: Option<UiShutdown>,
    end: Arc<AgentEnd>,
) {
    for event in events {
        match event {
            OperatorEvent::StopPressed => {
                tracing::info!("{STOP_BUTTON_REASON}");
                // The stop worker writes the record, the audit line and the banner.
                rearm.latch.trip(StopReason::Control(STOP_BUTTON_REASON.into()));
            }
            OperatorEvent::RearmClicked { by } | OperatorEvent::MenuRearm { by } => {
                match guard.as_ref().filter(|g| g.leads_others()) {
                    // One re-arm for the display: this process's own, then each member judges
                    // the same event against its own monitor.
                    Some(guard) => {
                        let counted = if rearm.latch.is_stopped() {
                            rearm.attempt("by the operator", &by)
                        } else {
                            rearm.judge_for_others(&by)
                        };
                        if counted {
                            guard.claim_rearm(&by);
                        }
                    }
                    None => {
                        rearm.attempt("by the operator", &by);
                    }
                }
            }
            OperatorEvent::EndAgent { whose, by } => end_pressed(whose, &by, &rearm, guard.as_ref(), &end),
            OperatorEvent::LeaveStopped => audit("rearm-prompt", "dismissed; still stopped"),
            OperatorEvent::ConsentAllow { .. } | OperatorEvent::ConsentDeny => {
                let click = match event {
                    OperatorEvent::ConsentAllow { by } => ConsentClick::Allow(by),
                    _ => ConsentClick::Deny,
                };
                if consent.as_ref().is_none_or(|tx| tx.send(click).is_err()) {
                    tracing::warn!("a consent prompt click arrived but no request is waiting");
                }
            }
            OperatorEvent::Quit => {
                tracing::info!("the operator quit mcec from the host window");
                exit_after_ui(ui_thread.as_ref(), 0);
            }
            // The Agent tab's work (disk, provisioning) runs on its own thread so a re-arm
            // never waits behind a copy of the executable.
            tab_event @ (OperatorEvent::SetProvisioning { .. }
            | OperatorEvent::DeleteSession { .. }
            | OperatorEvent::DeleteAllSessions
            | OperatorEvent::ProvisionNew
            | OperatorEvent::RefreshSessions
            | OperatorEvent::CopyHandoff { .. }
            | OperatorEvent::RevealToken { .. }) => match &agent_tab {
                Some(tab) if tab.send(tab_event).is_ok() => {}
                _ => tracing::warn!("an Agent tab event arrived but this process has no Agent tab"),
            },
        }
    }
}

pub(super) fn agent_tab_worker(events: Receiver<OperatorEvent>, core: AgentTabCore) {
    core.serve(events);
}
