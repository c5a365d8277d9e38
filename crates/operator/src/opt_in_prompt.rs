//! The confirmation of the Agent tab's provisioning opt-in: a small prompt painted like the
//! re-arm prompt, because the settings window's toolkit cannot say which event ticked its
//! checkbox and this window can.
//!
//! The checkbox only opens it, asking for the other value. `Cancel` is the default: it holds
//! the keyboard focus, and Enter, Esc and the window's close button all cancel. `Confirm`
//! reports the events that pressed it; the core judges them (`mcec_rules::activation`) and
//! either changes the setting (the prompt closes once the Agent tab shows the new value) or
//! says why not, here.

use std::sync::mpsc::Sender;

use egui::{self, Color32, RichText};
use mcec_rules::activation::Activation;

use crate::settings_window::ALLOW_PROVISIONING_LABEL;
use crate::state::{OperatorEvent, OperatorState, Snapshot};

/// Window title of the opt-in's confirmation prompt.
pub const OPT_IN_TITLE: &str = "mcec: confirm session provisioning";
/// Label of the button that asks the core for the change.
pub const CONFIRM_LABEL: &str = "Confirm";
/// Label of the default button.
pub const CANCEL_LABEL: &str = "Cancel";

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
    let mut cancel = crate::prompt::dismissed(ui);
    let mut confirm = false;
    let snap = state.snapshot();
    let Some(enabled) = snap.opt_in_confirm else {
        return;
    };
    egui::CentralPanel::default_margins().show(ui, |ui| {
        let verb = if enabled { "Turn on" } else { "Turn off" };
        ui.label(RichText::new(format!("{verb}: {ALLOW_PROVISIONING_LABEL}?")).size(16.0).strong());
        ui.add_space(4.0);
        ui.label("Only a click with your own mouse on Confirm counts.");
        ui.add_space(6.0);
        match (&snap.agent.message, snap.agent.pending) {
            (_, true) => {
                ui.label(RichText::new("Checking that the click came from you…").italics());
            }
            (Some(m), false) if m.is_error => {
                ui.label(RichText::new(&m.text).color(Color32::from_rgb(0xE5, 0x73, 0x73)));
            }
            _ => {
                ui.label(" ");
            }
        }
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            let confirm_button = ui.button(RichText::new(CONFIRM_LABEL).size(16.0));
            let cancel_button = ui.button(RichText::new(CANCEL_LABEL).size(16.0).strong());
            if ui.memory(|m| m.focused().is_none()) {
                cancel_button.request_focus();
            }
            confirm = confirm_button.clicked();
            cancel |= cancel_button.clicked();
        });
    });
    if cancel {
        state.set_opt_in_confirm(None);
    } else if confirm {
        state.mark_agent_pending();
        crate::state::send(events, OperatorEvent::SetProvisioning { enabled, by });
    }
}
