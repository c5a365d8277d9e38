//! The eframe side's windows (plain `mcec` on X11): each operator window as an egui viewport,
//! its id and its builder. The CPU painter places its windows from the same geometry
//! functions ([`overlay::geometry`], [`host::geometry`], [`settings_window::geometry`]).

use egui::{ViewportBuilder, ViewportId, X11WindowType};

use crate::overlay::{self, Look, OVERLAY_CLASS, OVERLAY_TITLE};
use crate::state::Snapshot;
use crate::{host, settings_window};

pub(crate) fn overlay_id() -> ViewportId {
    ViewportId::from_hash_of("mcec-overlay")
}

/// The overlay window for `look`, centred at the top of a monitor `monitor_width` wide.
pub(crate) fn overlay(look: Look, snap: &Snapshot, monitor_width: f32) -> ViewportBuilder {
    let (pos, size) = overlay::geometry(look, snap, monitor_width);
    ViewportBuilder::default()
        .with_title(OVERLAY_TITLE)
        .with_app_id(OVERLAY_CLASS)
        .with_decorations(false)
        .with_resizable(false)
        .with_transparent(false)
        .with_always_on_top()
        .with_mouse_passthrough(true)
        .with_active(false)
        .with_taskbar(false)
        .with_window_type(X11WindowType::Notification)
        .with_position(pos)
        .with_inner_size(size)
}

/// The host window, the root viewport of the eframe app.
pub(crate) fn host() -> ViewportBuilder {
    ViewportBuilder::default()
        .with_title(host::HOST_TITLE)
        .with_app_id(mcec_rules::own_windows::HOST_CLASS)
        .with_inner_size(host::HOST_SIZE)
        .with_min_inner_size([320.0, 120.0])
}

pub(crate) fn settings_id() -> ViewportId {
    ViewportId::from_hash_of("mcec-settings")
}

/// The settings window, centred on a monitor of `monitor` size.
pub(crate) fn settings(monitor: egui::Vec2) -> ViewportBuilder {
    let (pos, size) = settings_window::geometry(monitor);
    ViewportBuilder::default()
        .with_title(settings_window::SETTINGS_TITLE)
        .with_app_id(mcec_rules::own_windows::SETTINGS_CLASS)
        .with_position(pos)
        .with_inner_size(size)
        .with_min_inner_size([480.0, 360.0])
}
