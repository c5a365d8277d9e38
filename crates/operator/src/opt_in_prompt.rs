//! The confirmation of the Agent tab's provisioning opt-in: a small prompt painted like the
//! re-arm prompt, because the settings window's toolkit cannot say which event ticked its
//! checkbox and this window can.
//!
//! The checkbox only opens it, asking for the other value. `Cancel` is the default
//! (`confirm_dialog.rs`). `Confirm` reports the events that pressed it; the core judges them
//! (`mcec_rules::activation`) and either changes the setting (the prompt closes once the
//! Agent tab shows the new value) or says why not, here. On sway the chord it names confirms
//! instead (`confirm_dialog.rs`).

use std::sync::mpsc::Sender;

use mcec_rules::activation::Activation;

use crate::confirm_dialog::{self, Answer, Status};
use crate::settings_window::ALLOW_PROVISIONING_LABEL;
use crate::state::{OperatorEvent, OperatorState, Snapshot};

pub use crate::confirm_dialog::CANCEL_LABEL;

/// Window title of the opt-in's confirmation prompt.
pub const OPT_IN_TITLE: &str = "mcec: confirm session provisioning";
/// Label of the button that asks the core for the change.
pub const CONFIRM_LABEL: &str = "Confirm";

const SIZE: [f32; 2] = [460.0, 170.0];

/// Whether the prompt should be on screen: asked for, and the core has not made that the value.
pub(crate) fn open(snap: &Snapshot) -> bool {
    snap.opt_in_confirm.is_some_and(|want| want != snap.agent.allow_provisioning)
}

/// Top-left corner and size of the prompt, centred on a monitor of `monitor` size.
pub(crate) fn geometry(monitor: egui::Vec2) -> (egui::Pos2, egui::Vec2) {
    crate::prompt::dialog_geometry(SIZE, monitor)
}

/// Draw the prompt; `by` is what would have pressed a button in this pass.
pub(crate) fn show(ui: &mut egui::Ui, state: &OperatorState, events: &Sender<OperatorEvent>, by: Activation) {
    let snap = state.snapshot();
    let Some(enabled) = snap.opt_in_confirm else {
        return;
    };
    let verb = if enabled { "Turn on" } else { "Turn off" };
    let question = format!("{verb}: {ALLOW_PROVISIONING_LABEL}?");
    let status = Status::of_tab(&snap.agent);
    match confirm_dialog::show(ui, &question, None, CONFIRM_LABEL, snap.chords.opt_in.as_deref(), status) {
        Some(Answer::Cancel) => state.set_opt_in_confirm(None),
        Some(Answer::Confirm) => {
            state.mark_agent_pending();
            crate::state::send(events, OperatorEvent::SetProvisioning { enabled, by });
        }
        None => {}
    }
}
