//! The headless re-arm prompt, opened the moment the stop engages in `mcec mcp`.
//!
//! `Leave stopped` is the fail-safe default: it holds the keyboard focus, and Enter, Esc and
//! the window's close button all mean the same. `Re-arm` only reports the click and the events
//! that made it (their platform identity, [`Activation`]) to the core, which checks that a
//! physical device produced those very events; the prompt then shows the refusal, or closes
//! when the core re-arms. The host's menu re-arms through this same prompt.
//!
//! Where a window cannot name the event that pressed its button (sway: the prompt is an X11
//! window on the session's XWayland, and no client learns which device pressed what), the
//! prompt has no `Re-arm` button: it names the chord that re-arms instead, which the
//! compositor binds on the physical keyboards while the prompt is shown (`Snapshot::chords`).

use std::sync::mpsc::Sender;

use egui::{self, Color32, Key, Modifiers, RichText};

use mcec_rules::activation::Activation;

use crate::glyph::{Sign, signed_text};
use crate::state::{Mode, OperatorEvent, OperatorState};

/// Window title of the re-arm prompt.
pub const PROMPT_TITLE: &str = "mcec: emergency stop";

/// Label of the button that asks the core to re-arm.
pub const REARM_LABEL: &str = "Re-arm";

/// Label of the default button.
pub const LEAVE_LABEL: &str = "Leave stopped";

const PROMPT_SIZE: [f32; 2] = [460.0, 175.0];

/// Top-left corner and size of the re-arm prompt, centred on a monitor of `monitor` size.
pub(crate) fn geometry(monitor: egui::Vec2) -> (egui::Pos2, egui::Vec2) {
    dialog_geometry(PROMPT_SIZE, monitor)
}

/// Top-left corner and size of an operator dialog `size` big, centred on a monitor of
/// `monitor` size.
pub(crate) fn dialog_geometry(size: [f32; 2], monitor: egui::Vec2) -> (egui::Pos2, egui::Vec2) {
    let size = egui::Vec2::from(size);
    (((monitor - size) / 2.0).max(egui::Vec2::ZERO).to_pos2(), size)
}

/// What the prompt says in place of `Re-arm` where `chord` re-arms.
pub fn rearm_by_chord(chord: &str) -> String {
    format!("To re-arm, press {chord} on your keyboard.")
}

/// What the operator did in one frame of the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Rearm,
    Leave,
}

/// Whether Enter, Esc or the window's close button dismissed a dialog this frame. Enter and
/// Esc are consumed before any button sees them, so Enter can never activate the button that
/// asks for something.
pub(crate) fn dismissed(ui: &mut egui::Ui) -> bool {
    let (enter, esc, close) = ui.input_mut(|i| {
        (
            i.consume_key(Modifiers::NONE, Key::Enter),
            i.consume_key(Modifiers::NONE, Key::Escape),
            i.viewport().close_requested(),
        )
    });
    enter || esc || close
}

/// Draw the prompt; `by` is what would have pressed a button in this pass.
pub(crate) fn show(ui: &mut egui::Ui, state: &OperatorState, events: &Sender<OperatorEvent>, by: Activation) {
    // Enter and Esc dismiss, whatever has the focus: consume them before any button sees them,
    // so Enter can never activate `Re-arm`.
    let mut choice = dismissed(ui).then_some(Choice::Leave);

    let snap = state.snapshot();
    egui::CentralPanel::default_margins().show(ui, |ui| {
        let red = Color32::from_rgb(0xE5, 0x39, 0x35);
        let sign = Sign::Stop { disc: red, bar: Color32::WHITE };
        signed_text(ui, sign, "Emergency stop engaged", 20.0, red);
        ui.add_space(4.0);
        // One line, whoever is stopped: the button stays where the operator expects it.
        let headline = snap.display_count().map(mcec_rules::guard::headline);
        let line = match (&snap.mode, headline) {
            (Mode::Stopped { reason, .. }, None) => format!("Stopped by: {reason}."),
            (Mode::Stopped { reason, .. }, Some(all)) => format!("Stopped by: {reason}; {all}."),
            (_, Some(all)) => format!("{all}."),
            (_, None) => " ".into(),
        };
        ui.add(egui::Label::new(line).truncate());
        ui.label(
            "Every agent tool call is refused until you re-arm. \
             Anything the agent was doing has been dropped and will not resume.",
        );
        ui.add_space(6.0);
        if let Some(refusal) = &snap.refusal {
            ui.label(RichText::new(refusal).color(Color32::from_rgb(0xE5, 0x73, 0x73)));
        } else if snap.rearm_pending {
            ui.label(RichText::new("Checking that the click came from you…").italics());
        } else {
            ui.label(" ");
        }
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            let rearm = match &snap.chords.rearm {
                None => Some(ui.button(RichText::new(REARM_LABEL).size(16.0))),
                Some(_) => None,
            };
            let leave = ui.button(RichText::new(LEAVE_LABEL).size(16.0).strong());
            if let Some(chord) = &snap.chords.rearm {
                ui.label(RichText::new(rearm_by_chord(chord)).strong());
            }
            if ui.memory(|m| m.focused().is_none()) {
                leave.request_focus();
            }
            if rearm.is_some_and(|r| r.clicked()) {
                choice = choice.or(Some(Choice::Rearm));
            }
            if leave.clicked() {
                choice = Some(Choice::Leave);
            }
        });
    });

    match choice {
        // Reported once per dismissal, however many frames see the close request.
        Some(Choice::Leave) if state.close_prompt() => {
            crate::state::send(events, OperatorEvent::LeaveStopped);
        }
        Some(Choice::Rearm) => {
            state.mark_rearm_pending();
            crate::state::send(events, OperatorEvent::RearmClicked { by });
        }
        Some(Choice::Leave) | None => {}
    }
}
