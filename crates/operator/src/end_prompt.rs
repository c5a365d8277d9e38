//! The console's End prompt: a small prompt painted like the re-arm prompt, because the host
//! window's toolkit cannot say which event pressed a row's `End` and this window can.
//!
//! A row's `End` only opens it, naming that agent and what ending it does
//! (`mcec_rules::guard::EndEffect`). `Cancel` is the default (`confirm_dialog.rs`); `End`
//! reports the events that pressed it, the core judges them (and a member judges them again
//! with its own monitor) and either the agent ends (the prompt closes) or the prompt says why
//! not. On sway the chord it names ends instead (`confirm_dialog.rs`); a member, whose own
//! monitor never saw that press, refuses it.

use std::sync::mpsc::Sender;

use mcec_rules::activation::Activation;
use mcec_rules::guard::{AgentRow, EndEffect, end_question};

use crate::confirm_dialog::{self, Answer, Status};
use crate::state::{OperatorEvent, OperatorState, Snapshot};

/// Window title of the End prompt.
pub const END_TITLE: &str = "mcec: end an agent";
/// Label of the button that asks the core to end the agent (also each console row's button).
pub const END_LABEL: &str = "End";

const SIZE: [f32; 2] = [520.0, 200.0];

/// The End prompt's model: the agent it asks about and how the core answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndAsk {
    pub row: AgentRow,
    /// `End` was sent and the core has not answered.
    pub pending: bool,
    /// Why the last `End` ended nothing.
    pub refusal: Option<String>,
}

impl EndAsk {
    pub(crate) fn new(row: AgentRow) -> EndAsk {
        EndAsk { row, pending: false, refusal: None }
    }
}

/// Whether the prompt should be on screen.
pub(crate) fn open(snap: &Snapshot) -> bool {
    snap.end_confirm.is_some()
}

/// Top-left corner and size of the prompt, centred on a monitor of `monitor` size.
pub(crate) fn geometry(monitor: egui::Vec2) -> (egui::Pos2, egui::Vec2) {
    crate::prompt::dialog_geometry(SIZE, monitor)
}

/// Draw the prompt; `by` is what would have pressed a button in this pass.
pub(crate) fn show(ui: &mut egui::Ui, state: &OperatorState, events: &Sender<OperatorEvent>, by: Activation) {
    let snap = state.snapshot();
    let Some(ask) = snap.end_confirm else {
        return;
    };
    let effect = EndEffect::of(ask.row.session.is_some(), &ask.row.transport);
    let status = Status { pending: ask.pending, error: ask.refusal.as_deref() };
    let chord = snap.chords.end.as_deref();
    match confirm_dialog::show(ui, &end_question(&ask.row), Some(effect.words()), END_LABEL, chord, status) {
        Some(Answer::Cancel) => state.set_end_confirm(None),
        Some(Answer::Confirm) if !ask.pending => {
            state.mark_end_pending();
            crate::state::send(events, OperatorEvent::EndAgent { whose: ask.row.whose, by });
        }
        _ => {}
    }
}
