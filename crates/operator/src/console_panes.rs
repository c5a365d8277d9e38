//! The host window's console panes (issue 25): **Agents**, every mcec serving an agent on
//! this display with its client, copy, transport, age, calls, last action and state; and
//! **Activity**, the last actions of all agents, newest first. Drawn from the snapshot only;
//! the words are `mcec_rules::guard`'s and `mcec_rules::narration`'s. Each agent's row has an
//! `End`, which only opens the attested End prompt for that row (`end_prompt.rs`): this
//! window's toolkit cannot say which event pressed it.

use egui::{Color32, RichText};
use mcec_rules::guard::AgentState;

use crate::console_model::now_secs;
use crate::end_prompt::END_LABEL;
use crate::state::{OperatorState, Snapshot};

/// Heading of the Agents pane.
pub const AGENTS_HEADING: &str = "Agents";

/// The Agents pane when every agent has gone (the Activity pane still lists what they did).
const NO_AGENTS: &str = "No agent is connected.";

/// Heading of the Activity pane.
pub const ACTIVITY_HEADING: &str = "Activity";

fn state_colour(state: AgentState) -> Color32 {
    match state {
        AgentState::Acting => Color32::from_rgb(0x64, 0xB5, 0xF6),
        AgentState::Idle => Color32::from_rgb(0x81, 0xC7, 0x84),
        AgentState::Waiting => Color32::from_rgb(0xFF, 0xB3, 0x00),
        AgentState::Stopped => Color32::from_rgb(0xE5, 0x39, 0x35),
    }
}

/// Both panes, below the host window's status; nothing while this process is not the guard
/// or no agent has come.
pub(crate) fn show(ui: &mut egui::Ui, state: &OperatorState, snap: &Snapshot) {
    if snap.agents.is_empty() && snap.activity.is_empty() {
        return;
    }
    let now = now_secs();
    ui.separator();
    ui.label(RichText::new(AGENTS_HEADING).strong().size(16.0));
    if snap.agents.is_empty() {
        ui.label(NO_AGENTS);
    }
    for row in &snap.agents {
        let client = if row.this_process() { format!("{} (this mcec)", row.client()) } else { row.client() };
        ui.horizontal(|ui| {
            ui.label(RichText::new(client).strong());
            // At the row's right end, so the client's name and its End share one line.
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui.button(END_LABEL).clicked() {
                    state.set_end_confirm(Some(row.clone()));
                }
            });
        });
        ui.label(RichText::new(row.details(now)).color(state_colour(row.state)));
        if let Some(action) = &row.last_action {
            ui.label(format!("last: {action}"));
        }
    }
    ui.separator();
    ui.label(RichText::new(ACTIVITY_HEADING).strong().size(16.0));
    egui::ScrollArea::vertical().id_salt("mcec-activity").auto_shrink([false, true]).show(ui, |ui| {
        for line in &snap.activity {
            ui.label(line.text());
        }
    });
}
