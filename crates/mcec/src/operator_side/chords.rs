//! The prompts' chords, where the provenance source answers the operator's prompts instead of
//! their buttons (sway: a window there cannot name the event that pressed it).
//!
//! The source offers a chord per control (`mcec_desktop::monitor::ChordControls`); when it
//! does, the prompts name it in place of their button, the windows tell the source when a
//! prompt is on screen and what it asks (it binds the chord on the physical keyboards only
//! then), and a press arrives here as the events that pressed the control: sent on as the
//! window's own click would be (`Re-arm` to the re-arm in `events.rs`, `Allow` to the waiting
//! consent request, the opt-in's `Confirm` and `Reveal` to the Agent tab, `End` to
//! `end.rs`), and judged there by the same rules (`crate::attest`). A press is taken for what
//! the prompt asked when the showing it answers began (the opt-in's value, the End's agent):
//! a prompt that comes to ask something else is a new showing, with a new binding.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use mcec_desktop::monitor::{CONTROLS, ChordControls, Control};
use mcec_operator::{ChordPrompt, OperatorEvent, OperatorState, PromptChords};
use mcec_rules::activation::Activation;

/// What each control's prompt asked, and since when, as the windows last said.
type Asked = Arc<Mutex<[Option<(Instant, ChordPrompt)>; CONTROLS]>>;

/// Wires `controls` to the windows' state and to their event channel `events`, when the
/// provenance source offers chords; otherwise does nothing (the buttons are judged).
pub(super) fn answer_by_chord(controls: &ChordControls, ui: &OperatorState, events: Sender<OperatorEvent>) {
    let chord = |control| controls.offered(control).map(|c| c.to_string());
    let chords = PromptChords {
        rearm: chord(Control::Rearm),
        allow: chord(Control::Allow),
        opt_in: chord(Control::OptIn),
        end: chord(Control::End),
        reveal: chord(Control::Reveal),
    };
    if chords == PromptChords::default() {
        return;
    }
    let told = controls.clone();
    let named = |c: &Option<String>| c.clone().unwrap_or_else(|| "nothing".into());
    tracing::info!(
        "the operator's prompts are answered by chord on the physical keyboards: {} re-arms, {} allows, \
         {} confirms the provisioning opt-in, {} ends an agent, {} reveals the token",
        named(&chords.rearm),
        named(&chords.allow),
        named(&chords.opt_in),
        named(&chords.end),
        named(&chords.reveal),
    );
    let asked: Asked = Arc::default();
    let telling = asked.clone();
    ui.set_prompt_chords(chords, move |prompt, at| {
        let control = control_of(prompt);
        // Known before the source can bind for this showing, so its presses find it.
        telling.lock().unwrap_or_else(PoisonError::into_inner)[control.index()] = at.map(|at| (at, prompt));
        told.shown(control, at);
    });
    controls.on_press(move |control, by| {
        let shown = asked.lock().unwrap_or_else(PoisonError::into_inner)[control.index()];
        let Some(event) = shown.filter(|(at, _)| Some(*at) == by.shown_at).and_then(|(_, p)| event_of(p, by))
        else {
            tracing::warn!("the {control} chord was pressed for a prompt no longer shown; ignored");
            return;
        };
        if events.send(event).is_err() {
            tracing::warn!("a prompt's chord was pressed but nothing handles the operator's events");
        }
    });
}

/// The control whose chord answers `prompt`.
fn control_of(prompt: ChordPrompt) -> Control {
    match prompt {
        ChordPrompt::Rearm => Control::Rearm,
        ChordPrompt::Consent => Control::Allow,
        ChordPrompt::OptIn { .. } => Control::OptIn,
        ChordPrompt::End { .. } => Control::End,
        ChordPrompt::Reveal => Control::Reveal,
    }
}

/// What the window's own button would have sent for `prompt`, pressed by `by`.
fn event_of(prompt: ChordPrompt, by: Activation) -> Option<OperatorEvent> {
    Some(match prompt {
        ChordPrompt::Rearm => OperatorEvent::RearmClicked { by },
        ChordPrompt::Consent => OperatorEvent::ConsentAllow { by },
        ChordPrompt::OptIn { enabled } => OperatorEvent::SetProvisioning { enabled, by },
        ChordPrompt::End { whose } => OperatorEvent::EndAgent { whose, by },
        ChordPrompt::Reveal => OperatorEvent::RevealToken { by },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcec_rules::guard::Whose;

    #[test]
    fn a_press_is_sent_on_as_its_prompts_own_button_with_what_it_asked() {
        let by = Activation { events: None, shown_at: None };
        for (prompt, control) in [
            (ChordPrompt::Rearm, Control::Rearm),
            (ChordPrompt::Consent, Control::Allow),
            (ChordPrompt::OptIn { enabled: true }, Control::OptIn),
            (ChordPrompt::End { whose: Whose::Member(7) }, Control::End),
            (ChordPrompt::Reveal, Control::Reveal),
        ] {
            assert_eq!(control_of(prompt), control);
        }
        assert_eq!(
            event_of(ChordPrompt::OptIn { enabled: false }, by),
            Some(OperatorEvent::SetProvisioning { enabled: false, by })
        );
        assert_eq!(
            event_of(ChordPrompt::End { whose: Whose::Member(7) }, by),
            Some(OperatorEvent::EndAgent { whose: Whose::Member(7), by })
        );
        assert_eq!(event_of(ChordPrompt::Reveal, by), Some(OperatorEvent::RevealToken { by }));
    }
}
