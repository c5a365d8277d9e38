//! The consent prompt: an agent's `request-command-access`, put to the operator.
//!
//! It shows the exact commands asked for and the agent's reason (already made one clean line
//! by `mcec_rules::consent::sanitize_reason`, and drawn inside a frame labelled as the agent's
//! words, so it cannot pass for mcec's own text or buttons). `Deny` is the default: it holds
//! the keyboard focus, and Enter, Esc and the window's close button all mean Deny. `Allow`
//! only reports the click and the events that made it; the core asks the provenance monitor whether a hand
//! made it, as for a re-arm, and either grants (the prompt closes) or shows the refusal here
//! and keeps waiting. The core closes the prompt on a timeout or an emergency stop. Where a
//! window cannot name the event behind a click (sway), there is no `Allow` button: the prompt
//! names the chord that allows, bound on the physical keyboards while it is shown.

use std::sync::mpsc::Sender;

use egui::{self, Color32, RichText};

use mcec_rules::activation::Activation;

use crate::state::{OperatorEvent, OperatorState};

/// Window title of the consent prompt.
pub const CONSENT_TITLE: &str = "mcec: an agent asks for more access";
/// Label of the button that grants.
pub const ALLOW_LABEL: &str = "Allow";
/// Label of the default button.
pub const DENY_LABEL: &str = "Deny";

const CONSENT_SIZE: [f32; 2] = [560.0, 380.0];

/// Top-left corner and size of the consent prompt, centred on a monitor of `monitor` size.
pub(crate) fn geometry(monitor: egui::Vec2) -> (egui::Pos2, egui::Vec2) {
    crate::prompt::dialog_geometry(CONSENT_SIZE, monitor)
}

/// What the prompt says in place of `Allow` where `chord` allows.
pub fn allow_by_chord(chord: &str) -> String {
    format!("To allow, press {chord} on your keyboard.")
}

/// Draw the prompt; `by` is what would have pressed a button in this pass.
pub(crate) fn show(ui: &mut egui::Ui, state: &OperatorState, events: &Sender<OperatorEvent>, by: Activation) {
    let mut deny = crate::prompt::dismissed(ui);
    let mut allow = false;
    let snap = state.snapshot();
    let Some(view) = snap.consent else {
        return;
    };
    let chord = snap.chords.allow;
    egui::Panel::bottom("mcec-consent-buttons").show(ui, |ui| {
        ui.add_space(8.0);
        if let Some(refusal) = &view.refusal {
            ui.label(RichText::new(refusal).color(Color32::from_rgb(0xE5, 0x73, 0x73)));
        } else if view.checking {
            ui.label(RichText::new("Checking that the click came from you…").italics());
        } else if chord.is_none() {
            ui.label("Allow counts only when you click it with your own mouse.");
        } else {
            ui.label(" ");
        }
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            let allow_button = chord.is_none().then(|| ui.button(RichText::new(ALLOW_LABEL).size(16.0)));
            let deny_button = ui.button(RichText::new(DENY_LABEL).size(16.0).strong());
            if let Some(chord) = &chord {
                ui.label(RichText::new(allow_by_chord(chord)).strong());
            }
            if ui.memory(|m| m.focused().is_none()) {
                deny_button.request_focus();
            }
            allow = allow_button.is_some_and(|b| b.clicked());
            deny |= deny_button.clicked();
        });
        ui.add_space(8.0);
    });
    egui::CentralPanel::default_margins().show(ui, |ui| {
        let who = view.agent.as_deref().map_or_else(|| "An agent".to_owned(), |a| format!("Agent {a}"));
        let more = if view.behind > 0 { format!(" ({} more waiting)", view.behind) } else { String::new() };
        let heading = RichText::new(format!("{who} asks you to enable:{more}")).size(17.0).strong();
        ui.add(egui::Label::new(heading).truncate());
        ui.add_space(2.0);
        for name in &view.commands {
            ui.label(RichText::new(format!("• {name}")).monospace().size(14.0));
        }
        ui.add_space(6.0);
        ui.label("Its reason, in the agent's own words:");
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.set_width(ui.available_width());
            let reason = if view.reason.is_empty() { "(no reason given)" } else { view.reason.as_str() };
            let text = RichText::new(reason).italics().color(ui.visuals().strong_text_color());
            ui.add(egui::Label::new(text).wrap());
        });
        ui.add_space(6.0);
        ui.label(
            RichText::new(
                "Allow enables these for this mcec process only, until it exits; mcec.commands is not changed.",
            )
            .small(),
        );
    });

    if deny {
        // Reported once per prompt, however many frames see the close request.
        if state.close_consent() {
            crate::state::send(events, OperatorEvent::ConsentDeny);
        }
    } else if allow {
        state.mark_consent_checking();
        crate::state::send(events, OperatorEvent::ConsentAllow { by });
    }
}
