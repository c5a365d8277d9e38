//! The host window of plain `mcec`: a status line, a Stop button, a menu, and as the
//! display's guard the console's Agents and Activity panes (`console_panes.rs`), each agent
//! with an `End` that opens the attested End prompt (`end_prompt.rs`).
//!
//! While the stop is armed the window offers `Stop`: a press reports
//! [`OperatorEvent::StopPressed`] and the core trips the latch. Stopping is always allowed, so
//! whoever or whatever pressed it is not asked about. The menu carries
//! `⛔ Re-arm (Emergency Stop)` only while the stop is latched; choosing it
//! opens the re-arm prompt (`prompt.rs`), whose `Re-arm` is judged on the event that pressed
//! it. The host window itself decides nothing: what only the operator may do opens a prompt
//! that is judged on the event that pressed its button. `Settings…` opens the settings window
//! (`settings_window.rs`) and asks the core for a fresh session list. `Quit` (or closing the
//! window) reports [`OperatorEvent::Quit`] and ends the UI.

use std::sync::mpsc::Sender;

use egui::{self, Color32, RichText};

use crate::glyph::{Sign, signed_text};
use crate::state::{Mode, OperatorEvent, OperatorState, Snapshot};

/// Window title of the host window.
pub const HOST_TITLE: &str = "mcec";

/// Label of the host menu's item that opens the settings window.
pub const MENU_SETTINGS_LABEL: &str = "Settings…";

/// Label of the host menu's re-arm item.
pub const MENU_REARM_LABEL: &str = "⛔ Re-arm (Emergency Stop)";

/// Label of the host window's Stop button.
pub const STOP_LABEL: &str = "Stop";

pub(crate) const HOST_SIZE: [f32; 2] = [560.0, 480.0];

/// Top-left corner and size of the host window where the program places it (the CPU
/// painter's surfaces): left of centre, below the banner, so neither covers its menu.
pub(crate) fn geometry(monitor: egui::Vec2) -> (egui::Pos2, egui::Vec2) {
    let size = egui::Vec2::from(HOST_SIZE);
    let pos = egui::pos2(monitor.x / 16.0, ((monitor.y - size.y) / 3.0).max(0.0));
    (pos, size)
}

/// The status word and its colour.
pub(crate) fn status(snap: &Snapshot) -> (&'static str, Color32) {
    match snap.mode {
        Mode::Stopped { .. } => ("⛔ STOPPED", Color32::from_rgb(0xE5, 0x39, 0x35)),
        Mode::Acting => ("Agent acting", Color32::from_rgb(0x64, 0xB5, 0xF6)),
        Mode::Idle | Mode::Rearmed { .. } if !snap.stop_armed => {
            ("Not armed", Color32::from_rgb(0xFF, 0xB3, 0x00))
        }
        Mode::Idle | Mode::Rearmed { .. } => ("Armed", Color32::from_rgb(0x81, 0xC7, 0x84)),
    }
}

/// Whether the window offers `Stop`: only while a stop is armed and not latched (stopped,
/// there is nothing more to stop; with no armed stop there is no latch to trip).
pub(crate) fn offers_stop(snap: &Snapshot) -> bool {
    snap.stop_armed && !snap.is_stopped()
}

/// Draw the host window; `Quit` or closing it ends the UI.
pub(crate) fn show(ui: &mut egui::Ui, state: &OperatorState, events: &Sender<OperatorEvent>) {
    let snap = state.snapshot();
    let mut quit = false;
    egui::Panel::top("mcec-host-menu").show(ui, |ui| {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("mcec", |ui| {
                if snap.is_stopped() && rearm_item(ui).clicked() {
                    state.open_prompt();
                    ui.close();
                }
                if ui.button(MENU_SETTINGS_LABEL).clicked() {
                    state.open_settings();
                    send(events, OperatorEvent::RefreshSessions);
                    ui.close();
                }
                if ui.button("Quit").clicked() {
                    quit = true;
                }
            });
        });
    });
    egui::CentralPanel::default_margins().show(ui, |ui| {
        let (word, color) = status(&snap);
        if snap.is_stopped() {
            let sign = Sign::Stop { disc: color, bar: Color32::WHITE };
            signed_text(ui, sign, "STOPPED", 22.0, color);
        } else {
            ui.label(RichText::new(word).size(22.0).strong().color(color));
        }
        // On the left, below the status: the overlay banner, centred at the top of the
        // screen, never covers it while the window sits in a top corner.
        if offers_stop(&snap) && stop_button(ui).clicked() {
            send(events, OperatorEvent::StopPressed);
        }
        if let Mode::Stopped { reason, .. } = &snap.mode {
            ui.label(format!("Stopped by: {reason}. Re-arm in the prompt (the mcec menu reopens it)."));
        }
        if !snap.front_door.is_empty() {
            ui.label(&snap.front_door);
        }
        if let Some(refusal) = &snap.refusal {
            ui.label(RichText::new(refusal).color(Color32::from_rgb(0xE5, 0x73, 0x73)));
        } else if snap.rearm_pending {
            ui.label(RichText::new("Checking that the click came from you…").italics());
        }
        crate::console_panes::show(ui, state, &snap);
    });
    let closing = ui.input(|i| i.viewport().close_requested());
    if (quit || closing) && state.request_quit() {
        send(events, OperatorEvent::Quit);
    }
}

/// The red `Stop` button.
fn stop_button(ui: &mut egui::Ui) -> egui::Response {
    let text = RichText::new(STOP_LABEL).size(18.0).strong().color(Color32::WHITE);
    ui.add(egui::Button::new(text).fill(Color32::from_rgb(0xC6, 0x28, 0x28)).min_size(egui::vec2(96.0, 32.0)))
}

/// The menu's re-arm item: the painted sign, then a button with the rest of the label.
fn rearm_item(ui: &mut egui::Ui) -> egui::Response {
    let text = MENU_REARM_LABEL.trim_start_matches('⛔').trim_start();
    ui.horizontal(|ui| {
        let sign = Sign::Stop { disc: Color32::from_rgb(0xE5, 0x39, 0x35), bar: Color32::WHITE };
        signed_text(ui, sign, "", 14.0, Color32::WHITE);
        ui.button(text)
    })
    .inner
}

pub(crate) use crate::state::send;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_word_follows_mode() {
        let st = OperatorState::new();
        assert_eq!(status(&st.snapshot()).0, "Armed");
        st.set_acting(true);
        assert_eq!(status(&st.snapshot()).0, "Agent acting");
        st.set_stopped("chord");
        assert_eq!(status(&st.snapshot()).0, "⛔ STOPPED");
        st.set_rearmed();
        assert_eq!(status(&st.snapshot()).0, "Armed");
        st.set_stop_unarmed();
        assert_eq!(status(&st.snapshot()).0, "Not armed", "never `Armed` without a stop");
    }

    #[test]
    fn stop_is_offered_while_armed_only() {
        let st = OperatorState::new();
        assert!(offers_stop(&st.snapshot()), "armed and idle");
        st.set_acting(true);
        assert!(offers_stop(&st.snapshot()), "armed and acting");
        st.set_stopped("chord");
        assert!(!offers_stop(&st.snapshot()), "stopped: nothing more to stop");
        st.set_rearmed();
        assert!(offers_stop(&st.snapshot()), "re-armed");
        st.set_stop_unarmed();
        assert!(!offers_stop(&st.snapshot()), "no armed stop to trip");
    }
}
