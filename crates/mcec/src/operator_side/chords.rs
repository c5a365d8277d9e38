//! The prompts' chords, where the provenance source answers the operator's prompts instead of
//! their buttons (sway: a window there cannot name the event that pressed it).
//!
//! The source offers a chord per control (`mcec_desktop::monitor::ChordControls`); when it
//! does, the prompts name it in place of their button, the windows tell the source when a
//! prompt is on screen (it binds the chord on the physical keyboards only then), and a press
//! arrives here as the events that pressed the control: sent on as the window's own click
//! would be (`Re-arm` to the re-arm in `events.rs`, `Allow` to the waiting consent request),
//! and judged there by the same rules (`crate::attest`).

use std::sync::mpsc::Sender;

use mcec_desktop::monitor::{ChordControls, Control};
use mcec_operator::{ChordPrompt, OperatorEvent, OperatorState, PromptChords};

/// Wires `controls` to the windows' state and to their event channel `events`, when the
/// provenance source offers chords; otherwise does nothing (the buttons are judged).
pub(super) fn answer_by_chord(controls: &ChordControls, ui: &OperatorState, events: Sender<OperatorEvent>) {
    let (rearm, allow) = (controls.offered(Control::Rearm), controls.offered(Control::Allow));
    if rearm.is_none() && allow.is_none() {
        return;
    }
    let told = controls.clone();
    let chords = PromptChords { rearm: rearm.map(|c| c.to_string()), allow: allow.map(|c| c.to_string()) };
    tracing::info!(
        "the operator's prompts are answered by chord on the physical keyboards: {} re-arms, {} allows",
        chords.rearm.as_deref().unwrap_or("nothing"),
        chords.allow.as_deref().unwrap_or("nothing"),
    );
    ui.set_prompt_chords(chords, move |prompt, at| {
        let control = match prompt {
            ChordPrompt::Rearm => Control::Rearm,
            ChordPrompt::Consent => Control::Allow,
        };
        told.shown(control, at);
    });
    controls.on_press(move |control, by| {
        let event = match control {
            Control::Rearm => OperatorEvent::RearmClicked { by },
            Control::Allow => OperatorEvent::ConsentAllow { by },
        };
        if events.send(event).is_err() {
            tracing::warn!("a prompt's chord was pressed but nothing handles the operator's events");
        }
    });
}
