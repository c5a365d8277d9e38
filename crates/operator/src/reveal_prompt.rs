//! The confirmation that shows a provisioned session's bearer token in the Agent tab: a small
//! prompt painted like the re-arm prompt, because the settings window's toolkit cannot say
//! which event pressed its `Reveal token…` and this window can.
//!
//! The token opens the session's HTTP endpoint, and the tab is a window an agent driving the
//! desktop could capture or click: it shows the token masked until the operator's own click
//! here asks the core to show it. `Cancel` is the default (`confirm_dialog.rs`); `Reveal`
//! reports the events that pressed it, the core judges them (`mcec_rules::activation`) and
//! either hands the tab the clear text (the prompt closes) or says why not, here. On sway the
//! chord it names reveals instead (`confirm_dialog.rs`).

use std::sync::mpsc::Sender;

use mcec_rules::activation::Activation;

use crate::confirm_dialog::{self, Answer, Status};
use crate::state::{OperatorEvent, OperatorState, Snapshot};

/// Window title of the reveal's confirmation prompt.
pub const REVEAL_TITLE: &str = "mcec: show the session token";
/// Label of the button that asks the core to show the token.
pub const REVEAL_LABEL: &str = "Reveal";

const SIZE: [f32; 2] = [460.0, 170.0];

/// Whether the prompt should be on screen: asked for, and the token is still hidden.
pub(crate) fn open(snap: &Snapshot) -> bool {
    snap.reveal_confirm && snap.agent.handoff.as_ref().is_some_and(|h| h.token_hidden)
}

/// Top-left corner and size of the prompt, centred on a monitor of `monitor` size.
pub(crate) fn geometry(monitor: egui::Vec2) -> (egui::Pos2, egui::Vec2) {
    crate::prompt::dialog_geometry(SIZE, monitor)
}

/// Draw the prompt; `by` is what would have pressed a button in this pass.
pub(crate) fn show(ui: &mut egui::Ui, state: &OperatorState, events: &Sender<OperatorEvent>, by: Activation) {
    let snap = state.snapshot();
    let question = "Show the session's bearer token in the Agent tab?";
    let status = Status::of_tab(&snap.agent);
    match confirm_dialog::show(ui, question, None, REVEAL_LABEL, snap.chords.reveal.as_deref(), status) {
        Some(Answer::Cancel) => state.set_reveal_confirm(false),
        Some(Answer::Confirm) => {
            state.mark_agent_pending();
            crate::state::send(events, OperatorEvent::RevealToken { by });
        }
        None => {}
    }
}
