//! The body the attested confirmations share (the provisioning opt-in's, the token reveal's
//! and the console's End): a question, the rule that only the operator's own click counts, the core's
//! answer to the last attempt, and two buttons of which the harmless one is the default.
//!
//! `Cancel` holds the keyboard focus, and Enter, Esc and the window's close button all
//! cancel, so no key can press the button that asks for something. The dialog only says
//! which button was pressed; its caller sends the events that pressed it to the core.
//!
//! Where a window cannot name the event that pressed its button (sway), the dialog has no
//! button that asks: it names the chord the compositor binds on the physical keyboards while
//! it is shown (`Snapshot::chords`), and the core takes a press of that chord for the answer.

use egui::{self, Color32, RichText};

use crate::agent_model::AgentTab;

/// How the core answered the last attempt: still checking, or refused with this text.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Status<'a> {
    pub pending: bool,
    pub error: Option<&'a str>,
}

impl<'a> Status<'a> {
    /// The Agent tab's pending flag and last error.
    pub fn of_tab(tab: &'a AgentTab) -> Status<'a> {
        let error = tab.message.as_ref().filter(|m| m.is_error).map(|m| m.text.as_str());
        Status { pending: tab.pending, error }
    }
}

/// Label of the default button.
pub const CANCEL_LABEL: &str = "Cancel";

/// What the operator did in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    Confirm,
    Cancel,
}

/// What a dialog says in place of its `confirm` button where `chord` presses it.
pub(crate) fn confirm_by_chord(confirm: &str, chord: &str) -> String {
    format!("To {}, press {chord} on your keyboard.", confirm.to_lowercase())
}

/// Draw the dialog asking `question` (and `detail` below it, when given), with `confirm` on
/// the button that asks the core, or, where `chord` presses it, a line naming the chord
/// instead; `status` says how the last attempt went.
pub(crate) fn show(
    ui: &mut egui::Ui,
    question: &str,
    detail: Option<&str>,
    confirm: &str,
    chord: Option<&str>,
    status: Status<'_>,
) -> Option<Answer> {
    let mut answer = crate::prompt::dismissed(ui).then_some(Answer::Cancel);
    egui::CentralPanel::default_margins().show(ui, |ui| {
        ui.label(RichText::new(question).size(16.0).strong());
        if let Some(detail) = detail {
            ui.label(detail);
        }
        ui.add_space(4.0);
        match chord {
            None => ui.label(format!("Only a click with your own mouse on {confirm} counts.")),
            Some(chord) => ui.label(RichText::new(confirm_by_chord(confirm, chord)).strong()),
        };
        ui.add_space(6.0);
        match (status.error, status.pending) {
            (_, true) => {
                let what = if chord.is_some() { "press" } else { "click" };
                ui.label(RichText::new(format!("Checking that the {what} came from you…")).italics());
            }
            (Some(error), false) => {
                ui.label(RichText::new(error).color(Color32::from_rgb(0xE5, 0x73, 0x73)));
            }
            _ => {
                ui.label(" ");
            }
        }
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            let confirm_button = chord.is_none().then(|| ui.button(RichText::new(confirm).size(16.0)));
            let cancel_button = ui.button(RichText::new(CANCEL_LABEL).size(16.0).strong());
            if ui.memory(|m| m.focused().is_none()) {
                cancel_button.request_focus();
            }
            if cancel_button.clicked() {
                answer = Some(Answer::Cancel);
            } else if confirm_button.is_some_and(|b| b.clicked()) {
                answer = answer.or(Some(Answer::Confirm));
            }
        });
    });
    answer
}
