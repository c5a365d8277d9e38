//! The overlay: a click-through, always-on-top strip at the top centre of the screen.
//!
//! It tells the operator that an agent is driving (with the last few narrated calls), that the
//! emergency stop is latched (a red banner that stays until re-arm), or that they just
//! re-armed. It never takes focus and carries a distinctive title and class so the desktop
//! tools can leave it out of window lists and never target it.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::glyph::{Sign, signed_text};
use crate::state::{Mode, OperatorState, Snapshot};
use egui::{self, Color32, RichText};
use mcec_rules::guard::{DisplayLook, headline};

/// Window title of the overlay.
pub const OVERLAY_TITLE: &str = "mcec overlay";

/// `WM_CLASS` (instance and class) of the overlay, set by `crate::x11_tag` after mapping.
pub use mcec_rules::own_windows::OVERLAY_CLASS;

pub(crate) const OVERLAY_WIDTH: f32 = 640.0;

const STOP_RED: Color32 = Color32::from_rgb(0xC6, 0x28, 0x28);
const ACTING_BG: Color32 = Color32::from_rgb(0x1F, 0x2A, 0x44);
const REARMED_GREEN: Color32 = Color32::from_rgb(0x2E, 0x7D, 0x32);
/// Height of one narrated line: [`NARRATION_SIZE`] text plus the spacing between lines.
const LINE_HEIGHT: f32 = 21.0;
/// Narration is read at a glance: plain words in the UI's proportional font, a size up from
/// the host window's text.
const NARRATION_SIZE: f32 = 15.0;

/// What the overlay should show for `snap` at `now`, or `None` when it should be gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Look {
    Acting,
    Stopped,
    Rearmed,
}

pub(crate) fn look(snap: &Snapshot, now: Instant) -> Option<Look> {
    // As the display's guard: what every agent there is doing, stopped first.
    if let Some(count) = snap.display_count() {
        match count.look() {
            DisplayLook::Stopped | DisplayLook::PartlyStopped => return Some(Look::Stopped),
            DisplayLook::Acting if snap.rearmed_fade(now).is_none() => return Some(Look::Acting),
            DisplayLook::Acting | DisplayLook::Quiet => {}
        }
    }
    match snap.mode {
        Mode::Idle => None,
        Mode::Acting => Some(Look::Acting),
        Mode::Stopped { .. } => Some(Look::Stopped),
        Mode::Rearmed { .. } => snap.rearmed_fade(now).map(|_| Look::Rearmed),
    }
}

/// Lines of the STOPPED banner's "not recorded" warning (it wraps).
const UNRECORDED_LINES: f32 = 3.0;

fn height(look: Look, lines: usize, unrecorded: bool, guard: bool) -> f32 {
    match look {
        Look::Acting => 44.0 + LINE_HEIGHT * lines as f32,
        Look::Stopped => {
            74.0 + LINE_HEIGHT * (lines.min(2) + usize::from(guard)) as f32
                + if unrecorded { LINE_HEIGHT * UNRECORDED_LINES } else { 0.0 }
        }
        Look::Rearmed => 40.0,
    }
}

/// Top-left corner and size of the overlay for `look` over `snap`, centred at the top of a
/// monitor `monitor_width` wide.
pub(crate) fn geometry(look: Look, snap: &Snapshot, monitor_width: f32) -> (egui::Pos2, egui::Vec2) {
    let width = OVERLAY_WIDTH.min(monitor_width);
    let height = height(look, snap.narration.len(), snap.stop_unrecorded.is_some(), snap.others.is_some());
    (egui::pos2(((monitor_width - width) / 2.0).max(0.0), 0.0), egui::vec2(width, height))
}

/// Draw the overlay; runs as the deferred viewport's callback.
pub(crate) fn show(ui: &mut egui::Ui, state: &OperatorState) {
    let snap = state.snapshot();
    let now = Instant::now();
    let Some(look) = look(&snap, now) else {
        return;
    };
    let fill = match look {
        Look::Acting => ACTING_BG,
        Look::Stopped => STOP_RED,
        Look::Rearmed => REARMED_GREEN,
    };
    let frame = egui::Frame::NONE.fill(fill).inner_margin(egui::Margin::symmetric(14, 8));
    egui::CentralPanel::default().frame(frame).show(ui, |ui| {
        ui.vertical_centered(|ui| match look {
            Look::Acting => {
                let title = match snap.display_count() {
                    Some(count) => format!("mcec is controlling your desktop · {}", headline(count)),
                    None => "mcec is controlling your desktop".into(),
                };
                ui.label(RichText::new(title).size(20.0).color(Color32::WHITE));
                narration(ui, &snap.narration, Color32::from_gray(215));
            }
            Look::Stopped => {
                let sign = Sign::Stop { disc: Color32::WHITE, bar: STOP_RED };
                let partly = snap.display_count().is_some_and(|c| c.look() == DisplayLook::PartlyStopped);
                let title = if partly { "PARTLY STOPPED" } else { "STOPPED by operator" };
                signed_text(ui, sign, title, 26.0, Color32::WHITE);
                if let Some(count) = snap.display_count() {
                    ui.label(RichText::new(headline(count)).size(16.0).strong().color(Color32::WHITE));
                }
                if let Mode::Stopped { since, reason } = &snap.mode {
                    ui.label(
                        RichText::new(format!(
                            "{reason} · since {} UTC · re-arm to continue",
                            wall_clock(*since, now)
                        ))
                        .size(14.0)
                        .color(Color32::WHITE),
                    );
                }
                if let Some(why) = &snap.stop_unrecorded {
                    ui.label(
                        RichText::new(format!(
                            "NOT RECORDED: this stop could not be saved, so a relaunched mcec would not know of it ({why})"
                        ))
                        .size(14.0)
                        .strong()
                        .color(Color32::from_rgb(0xFF, 0xEB, 0x3B)),
                    );
                }
                let last = snap.narration.len().saturating_sub(2);
                narration(ui, &snap.narration[last..], Color32::from_gray(235));
            }
            Look::Rearmed => {
                let fade = snap.rearmed_fade(now).unwrap_or(1.0);
                let alpha = (255.0 * (1.0 - fade)).clamp(0.0, 255.0) as u8;
                let white = Color32::from_white_alpha(alpha);
                signed_text(ui, Sign::Check(white), "Re-armed", 20.0, white);
                ui.ctx().request_repaint_after(Duration::from_millis(100));
            }
        });
    });
}

/// The narrated calls, oldest first, left-aligned; the newest is the brightest. Each stays
/// on one line (cut with an ellipsis) so the strip's height is what [`height`] says.
fn narration(ui: &mut egui::Ui, lines: &[String], color: Color32) {
    let newest = lines.len().saturating_sub(1);
    ui.with_layout(egui::Layout::top_down(egui::Align::Min), |ui| {
        for (i, line) in lines.iter().enumerate() {
            let color = if i == newest { Color32::WHITE } else { color };
            ui.add(egui::Label::new(RichText::new(line).size(NARRATION_SIZE).color(color)).truncate());
        }
    });
}

/// `HH:MM:SS` (UTC) of the instant `at`, seen from `now`.
fn wall_clock(at: Instant, now: Instant) -> String {
    let ago = now.saturating_duration_since(at);
    let secs = SystemTime::now()
        .checked_sub(ago)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let day = secs % 86_400;
    format!("{:02}:{:02}:{:02}", day / 3600, day % 3600 / 60, day % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_follows_mode() {
        let st = OperatorState::new();
        let now = Instant::now();
        assert_eq!(look(&st.snapshot(), now), None);
        st.set_acting(true);
        assert_eq!(look(&st.snapshot(), now), Some(Look::Acting));
        st.set_stopped("chord");
        assert_eq!(look(&st.snapshot(), now), Some(Look::Stopped));
        st.set_rearmed();
        let snap = st.snapshot();
        assert_eq!(look(&snap, Instant::now()), Some(Look::Rearmed));
        let later = Instant::now() + crate::state::REARMED_FADE;
        assert_eq!(look(&snap, later), None);
    }

    #[test]
    fn a_guard_shows_stopped_while_any_member_is_and_acting_while_any_acts() {
        use mcec_rules::guard::DisplayCount;
        let st = OperatorState::new();
        let now = Instant::now();
        st.set_others(Some(DisplayCount { agents: 2, acting: 1, stopped: 0 }));
        assert_eq!(look(&st.snapshot(), now), Some(Look::Acting), "the guard itself is idle");
        st.set_others(Some(DisplayCount { agents: 2, acting: 0, stopped: 1 }));
        assert_eq!(look(&st.snapshot(), now), Some(Look::Stopped));
        st.set_stopped("chord");
        st.set_rearmed();
        assert_eq!(
            look(&st.snapshot(), now),
            Some(Look::Stopped),
            "never re-armed while a member is stopped"
        );
        st.set_others(Some(DisplayCount { agents: 2, acting: 0, stopped: 0 }));
        assert_eq!(look(&st.snapshot(), Instant::now()), Some(Look::Rearmed));
    }

    #[test]
    fn height_grows_with_narration() {
        assert!(height(Look::Acting, 5, false, false) > height(Look::Acting, 1, false, false));
        assert!(height(Look::Stopped, 0, false, false) > height(Look::Rearmed, 0, false, false));
        assert!(height(Look::Stopped, 0, true, false) > height(Look::Stopped, 0, false, false));
        assert!(height(Look::Stopped, 0, false, true) > height(Look::Stopped, 0, false, false));
    }

    #[test]
    fn wall_clock_is_hh_mm_ss() {
        let now = Instant::now();
        let text = wall_clock(now, now);
        assert_eq!(text.len(), 8);
        assert_eq!(text.as_bytes()[2], b':');
        assert_eq!(text.as_bytes()[5], b':');
    }
}
