//! The body both attested confirmations share (the provisioning opt-in's and the token
//! reveal's): a question, the rule that only the operator's own click counts, the core's
//! answer to the last attempt, and two buttons of which the harmless one is the default.
//!
//! `Cancel` holds the keyboard focus, and Enter, Esc and the window's close button all
//! cancel, so no key can press the button that asks for something. The dialog only says
//! which button was pressed; its caller sends the events that pressed it to the core.

use egui::{self, Color32, RichText};

use crate::agent_model::AgentTab;

/// Label of the default button.
pub const CANCEL_LABEL: &str = "Cancel";

/// What the operator did in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    Confirm,
    Cancel,
}

/// Draw the dialog asking `question`, with `confirm` on the button that asks the core; the
/// Agent tab's pending flag and last error say how the last attempt went.
pub(crate) fn show(ui: &mut egui::Ui, question: &str, confirm: &str, tab: &AgentTab) -> Option<Answer> {
    let mut answer = crate::prompt::dismissed(ui).then_some(Answer::Cancel);
    egui::CentralPanel::default_margins().show(ui, |ui| {
        ui.label(RichText::new(question).size(16.0).strong());
        ui.add_space(4.0);
        ui.label(format!("Only a click with your own mouse on {confirm} counts."));
        ui.add_space(6.0);
        match (&tab.message, tab.pending) {
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
            let confirm_button = ui.button(RichText::new(confirm).size(16.0));
            let cancel_button = ui.button(RichText::new(CANCEL_LABEL).size(16.0).strong());
            if ui.memory(|m| m.focused().is_none()) {
                cancel_button.request_focus();
            }
            if cancel_button.clicked() {
                answer = Some(Answer::Cancel);
            } else if confirm_button.clicked() {
                answer = answer.or(Some(Answer::Confirm));
            }
        });
    });
    answer
}
