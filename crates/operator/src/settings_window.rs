//! The host's settings window (`mcec settings`), opened from the host menu's `Settings…`.
//!
//! Its **Agent** tab is the operator's side of session provisioning: the opt-in checkbox,
//! the session copies with per-row **Delete** and **Delete all**, and **Provision
//! new…** with the handoff ready to copy in the format of the client the operator picks. Like every operator window it decides nothing: the
//! checkbox draws the value the core confirmed and a click only opens the attested
//! confirmation (`opt_in_prompt.rs`), whose `Confirm` the core judges on the event that
//! pressed it; the handoff's token is masked until `Reveal token…` opens the attested
//! confirmation of `reveal_prompt.rs` and the core shows it, and an entry that holds the
//! token cannot be copied before that;
//! the buttons ask the core to act and the tab shows what the core reports back. The core
//! lists the sessions again every few seconds while the window is open, so ages and states
//! move by themselves.

use std::sync::mpsc::Sender;

use crate::agent_model::{AgentTab, ClientHandoff, HandoffPart, HandoffView};
use crate::host::send;
use crate::state::{OperatorEvent, OperatorState};
use egui::{self, Color32, RichText};

/// Window title of the settings window.
pub const SETTINGS_TITLE: &str = "mcec settings";

/// Label of the opt-in checkbox.
pub const ALLOW_PROVISIONING_LABEL: &str = "Allow agents to provision session copies";

/// Label of the button that provisions a session for the operator.
pub const PROVISION_NEW_LABEL: &str = "Provision new…";

/// Before the row of client names that picks which entries the handoff shows.
pub const CLIENT_CHOICE_LABEL: &str = "Client:";

/// The handoff's Copy buttons.
pub const COPY_STDIO_LABEL: &str = "Copy stdio entry";
pub const COPY_HTTP_LABEL: &str = "Copy HTTP entry";

/// The button that opens the token reveal's confirmation, beside the Copy buttons.
pub const REVEAL_TOKEN_LABEL: &str = "Reveal token…";

/// Logged when the disabled opt-in checkbox of a session copy is clicked.
const IGNORED_OPT_IN_CLICK: &str =
    "the opt-in checkbox was clicked in a session copy; ignored (a copy never provisions)";

/// Logged when the disabled `Provision new…` (opt-in off, or a session copy) is clicked.
const IGNORED_PROVISION_CLICK: &str =
    "Provision new… was clicked while provisioning is off; ignored (the button is disabled)";

/// Shown under the disabled checkbox inside a session copy.
pub const SESSION_COPY_NOTE: &str = "This is a session copy: it can never provision further copies.";

const SIZE: [f32; 2] = [640.0, 560.0];
/// Room for three lines of the core's last message.
const MESSAGE_HEIGHT: f32 = 54.0;
/// Room for the session list and the line under it, so the handoff below never moves.
const SESSIONS_HEIGHT: f32 = 150.0;
const ERROR_RED: Color32 = Color32::from_rgb(0xE5, 0x73, 0x73);
const OK_GREEN: Color32 = Color32::from_rgb(0x81, 0xC7, 0x84);

/// The settings window's tabs; only the Agent tab exists so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tab {
    Agent,
}

/// Top-left corner and size of the settings window, centred on a monitor of `monitor` size.
pub(crate) fn geometry(monitor: egui::Vec2) -> (egui::Pos2, egui::Vec2) {
    crate::prompt::dialog_geometry(SIZE, monitor)
}

/// Draw the settings window; runs as the deferred viewport's callback.
pub(crate) fn show(ui: &mut egui::Ui, state: &OperatorState, events: &Sender<OperatorEvent>) {
    if ui.input(|i| i.viewport().close_requested()) {
        state.close_settings();
        return;
    }
    let snap = state.snapshot();
    let mut tab = Tab::Agent;
    egui::Panel::top("mcec-settings-tabs").show(ui, |ui| {
        ui.horizontal(|ui| {
            if ui.selectable_label(tab == Tab::Agent, "Agent").clicked() {
                tab = Tab::Agent;
            }
        });
    });
    egui::CentralPanel::default_margins().show(ui, |ui| match tab {
        Tab::Agent => agent_tab(ui, &snap.agent, state, events),
    });
}

fn agent_tab(ui: &mut egui::Ui, tab: &AgentTab, state: &OperatorState, events: &Sender<OperatorEvent>) {
    // The checkbox shows the confirmed value; toggling the local copy only asks for a change.
    let mut shown = tab.allow_provisioning;
    let checkbox = egui::Checkbox::new(&mut shown, ALLOW_PROVISIONING_LABEL);
    let response = ui.add_enabled(!tab.in_session_copy, checkbox);
    if response.clicked() && !tab.in_session_copy {
        // This toolkit cannot say which event clicked; the confirmation prompt can.
        state.set_opt_in_confirm(Some(!tab.allow_provisioning));
    }
    if tab.in_session_copy && response.contains_pointer() && ui.input(|i| i.pointer.primary_released()) {
        // Nothing reaches the core from here; the line lets a test see the click arrived.
        tracing::info!("{IGNORED_OPT_IN_CLICK}");
    }
    if tab.in_session_copy {
        ui.label(RichText::new(SESSION_COPY_NOTE).italics());
    } else {
        ui.label(
            RichText::new(
                "Agents then get session copies of mcec, never this one. Only a click with your own mouse counts.",
            )
            .small(),
        );
    }
    // A fixed-height area, so the buttons below stay where they are whatever the message.
    let size = egui::vec2(ui.available_width(), MESSAGE_HEIGHT);
    ui.allocate_ui_with_layout(size, egui::Layout::top_down(egui::Align::Min), |ui| {
        ui.set_min_height(MESSAGE_HEIGHT);
        match (&tab.message, tab.pending) {
            (_, true) => {
                ui.label(RichText::new("Working… (checking that the click came from you)").italics());
            }
            (Some(message), false) => {
                let color = if message.is_error { ERROR_RED } else { OK_GREEN };
                ui.label(RichText::new(&message.text).color(color));
            }
            (None, false) => {}
        }
    });
    ui.separator();
    sessions(ui, tab, state, events);
    ui.separator();
    provisioning(ui, tab, state, events);
}

fn sessions(ui: &mut egui::Ui, tab: &AgentTab, state: &OperatorState, events: &Sender<OperatorEvent>) {
    // One row of buttons at a fixed place, whatever the list holds.
    ui.horizontal(|ui| {
        ui.label(RichText::new(format!("Provisioned sessions ({})", tab.sessions.len())).strong());
        if ui.button("Refresh").clicked() {
            send(events, OperatorEvent::RefreshSessions);
        }
        let any = !tab.sessions.is_empty();
        if ui.add_enabled(any, egui::Button::new("Delete all")).clicked() {
            state.mark_agent_pending();
            send(events, OperatorEvent::DeleteAllSessions);
        }
        let allowed = tab.allow_provisioning && !tab.in_session_copy;
        let response = ui.add_enabled(allowed, egui::Button::new(PROVISION_NEW_LABEL));
        if response.clicked() {
            state.mark_agent_pending();
            send(events, OperatorEvent::ProvisionNew);
        }
        if !allowed && response.contains_pointer() && ui.input(|i| i.pointer.primary_released()) {
            // Nothing reaches the core from here; the line lets a test see the click arrived.
            tracing::info!("{IGNORED_PROVISION_CLICK}");
        }
    });
    let size = egui::vec2(ui.available_width(), SESSIONS_HEIGHT);
    ui.allocate_ui_with_layout(size, egui::Layout::top_down(egui::Align::Min), |ui| {
        ui.set_min_height(SESSIONS_HEIGHT);
        if tab.sessions.is_empty() {
            ui.label(RichText::new("No session copies.").italics());
        } else {
            egui::ScrollArea::vertical().id_salt("mcec-sessions").max_height(SESSIONS_HEIGHT - 24.0).show(
                ui,
                |ui| {
                    egui::Grid::new("mcec-sessions-grid").num_columns(5).striped(true).show(ui, |ui| {
                        for header in ["Session", "Age", "Size", "State", ""] {
                            ui.label(RichText::new(header).strong());
                        }
                        ui.end_row();
                        for row in &tab.sessions {
                            ui.monospace(&row.id);
                            ui.label(&row.age);
                            ui.label(&row.size);
                            let words = RichText::new(&row.state);
                            ui.label(if row.running { words.color(OK_GREEN) } else { words });
                            if ui.button("Delete").clicked() {
                                state.mark_agent_pending();
                                send(events, OperatorEvent::DeleteSession { id: row.id.clone() });
                            }
                            ui.end_row();
                        }
                    });
                },
            );
        }
        if !tab.sessions_root.is_empty() {
            ui.label(RichText::new(format!("in {}", tab.sessions_root)).small());
        }
    });
}

/// The handoff of the last `Provision new…`, or how to get one.
fn provisioning(ui: &mut egui::Ui, tab: &AgentTab, state: &OperatorState, events: &Sender<OperatorEvent>) {
    match &tab.handoff {
        Some(handoff) => handoff_view(ui, handoff, state, events),
        None if !tab.allow_provisioning || tab.in_session_copy => {
            ui.label(
                RichText::new("Allow provisioning above to create a session with Provision new….").small(),
            );
        }
        None => {
            ui.label(
                RichText::new("Provision new… creates a session and shows how to connect to it.").small(),
            );
        }
    }
}

/// The client choice, the two Copy buttons at fixed places, then the chosen client's entries.
fn handoff_view(
    ui: &mut egui::Ui,
    handoff: &HandoffView,
    state: &OperatorState,
    events: &Sender<OperatorEvent>,
) {
    let Some(first) = handoff.clients.first() else {
        ui.label(&handoff.summary);
        return;
    };
    // The choice is the window's own: it only picks which of the core's texts to show.
    let memory = egui::Id::unique("mcec-handoff-client");
    let remembered: Option<String> = ui.data(|d| d.get_temp(memory));
    let mut chosen =
        remembered.and_then(|label| handoff.clients.iter().find(|c| c.label == label)).unwrap_or(first);
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(CLIENT_CHOICE_LABEL).strong());
        for client in &handoff.clients {
            if ui.selectable_label(client.label == chosen.label, &client.label).clicked() {
                chosen = client;
            }
        }
    });
    ui.data_mut(|d| d.insert_temp(memory, chosen.label.clone()));
    ui.horizontal(|ui| {
        // An entry that holds the token is copied only once the operator revealed it.
        let copyable = |text: Option<&str>| text.is_some_and(|t| !handoff.hides_token_in(t));
        copy_button(ui, chosen, HandoffPart::Stdio, copyable(Some(&chosen.stdio)), events);
        copy_button(ui, chosen, HandoffPart::Http, copyable(chosen.http.as_deref()), events);
        if handoff.token_hidden && ui.button(REVEAL_TOKEN_LABEL).clicked() {
            // This toolkit cannot say which event clicked; the confirmation prompt can.
            state.set_reveal_confirm(true);
        }
    });
    egui::ScrollArea::vertical().id_salt("mcec-handoff").show(ui, |ui| {
        ui.label(RichText::new(format!("{}: {}", chosen.label, chosen.place)).small());
        if let Some(note) = &chosen.note {
            ui.label(RichText::new(note).italics());
        }
        entry(ui, "stdio (the client starts the copy):", &chosen.stdio, "stdio");
        if let Some(http) = &chosen.http {
            entry(ui, "HTTP (start the copy first):", http, "http");
        }
        ui.label(&handoff.summary);
    });
}

fn copy_button(
    ui: &mut egui::Ui,
    client: &ClientHandoff,
    part: HandoffPart,
    enabled: bool,
    events: &Sender<OperatorEvent>,
) {
    let label = match part {
        HandoffPart::Stdio => COPY_STDIO_LABEL,
        HandoffPart::Http => COPY_HTTP_LABEL,
    };
    if ui.add_enabled(enabled, egui::Button::new(label)).clicked() {
        // The core owns the clipboard (and the token); the window only says which text.
        send(events, OperatorEvent::CopyHandoff { client: client.label.clone(), part });
    }
}

fn entry(ui: &mut egui::Ui, title: &str, text: &str, salt: &str) {
    ui.label(RichText::new(title).strong());
    let mut shown = text;
    ui.add(
        egui::TextEdit::multiline(&mut shown)
            .id_salt(salt)
            .code_editor()
            .desired_rows(text.lines().count().min(10))
            .desired_width(f32::INFINITY),
    );
}
