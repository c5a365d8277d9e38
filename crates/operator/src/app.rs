//! The eframe app behind the operator windows of plain `mcec` (the host window, its settings,
//! and the banner beside them); `mcec mcp` paints without eframe (`soft/`), and so do the
//! prompts of plain `mcec`, whose buttons are judged on the event that pressed them.
//!
//! winit allows one event loop per process, so every surface is a viewport of one app: the
//! root viewport is the host window (the code still handles a hidden 1×1 root, which only
//! runs [`eframe::App::logic`], so `logic` asks for a full pass whenever the set of windows on
//! screen must change); the overlay and the prompts are deferred viewports that exist only
//! while they have something to show.

use std::sync::mpsc::Sender;
use std::time::Instant;

use eframe::egui::{self, ViewportCommand, ViewportId};

use crate::overlay::{self, Look};
use crate::state::{OperatorEvent, OperatorState, Snapshot};
use crate::{Surfaces, host, settings_window, viewports, x11_tag};

/// Used when the windowing system does not report the monitor size.
const FALLBACK_MONITOR: egui::Vec2 = egui::vec2(1280.0, 800.0);
/// Smaller than any real monitor: a size under it is a wrong report (Xephyr reports 1 pixel
/// wide), which would make the banner 1 pixel wide.
const SMALLEST_MONITOR: f32 = 200.0;

/// Which child windows the last full pass registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Shown {
    overlay: Option<Look>,
}

pub(crate) struct OperatorApp {
    state: OperatorState,
    events: Sender<OperatorEvent>,
    surfaces: Surfaces,
    shown: Shown,
    last_snapshot: Option<Snapshot>,
    quitting: bool,
    /// The last `Snapshot::console_raise` acted on.
    raised: u64,
}

impl OperatorApp {
    pub(crate) fn new(
        ctx: &egui::Context,
        state: OperatorState,
        events: Sender<OperatorEvent>,
        surfaces: Surfaces,
    ) -> Self {
        let repaint_ctx = ctx.clone();
        state.set_repaint_hook(move || repaint_ctx.request_repaint_of(ViewportId::ROOT));
        let raised = state.snapshot().console_raise;
        Self {
            state,
            events,
            surfaces,
            shown: Shown::default(),
            last_snapshot: None,
            quitting: false,
            raised,
        }
    }

    fn wanted(&self, snap: &Snapshot, now: Instant) -> Shown {
        Shown { overlay: if self.surfaces.overlay { overlay::look(snap, now) } else { None } }
    }
}

fn monitor_size(ctx: &egui::Context) -> egui::Vec2 {
    ctx.input(|i| i.viewport().monitor_size)
        .filter(|size| size.x >= SMALLEST_MONITOR && size.y >= SMALLEST_MONITOR)
        .unwrap_or(FALLBACK_MONITOR)
}

impl eframe::App for OperatorApp {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        let snap = self.state.snapshot();
        if snap.quit_requested && !self.quitting {
            self.quitting = true;
            ctx.send_viewport_cmd_to(ViewportId::ROOT, ViewportCommand::Close);
            return;
        }
        if self.surfaces.host_window && snap.console_raise != self.raised {
            // The tray's Open console: bring the host window up where it is.
            self.raised = snap.console_raise;
            for command in
                [ViewportCommand::Visible(true), ViewportCommand::Minimized(false), ViewportCommand::Focus]
            {
                ctx.send_viewport_cmd_to(ViewportId::ROOT, command);
            }
        }
        if !self.surfaces.host_window && self.wanted(&snap, Instant::now()) != self.shown {
            ctx.send_viewport_cmd_to(ViewportId::ROOT, ViewportCommand::RequestPaintWhileHidden);
            ctx.request_repaint();
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        let now = Instant::now();
        let snap = self.state.snapshot();
        let monitor = monitor_size(&ctx);

        if self.surfaces.host_window {
            host::show(ui, &self.state, &self.events);
        } else if ctx.input(|i| i.viewport().visible()) != Some(false) {
            // eframe shows the root after its first frame; keep the stand-in root hidden.
            ctx.send_viewport_cmd(ViewportCommand::Visible(false));
            ctx.request_repaint();
        }

        let wanted = self.wanted(&snap, now);
        if let Some(look) = wanted.overlay {
            let state = self.state.clone();
            ctx.show_viewport_deferred(
                viewports::overlay_id(),
                viewports::overlay(look, &snap, monitor.x),
                move |ui, _class| overlay::show(ui, &state),
            );
            if self.shown.overlay.is_none() {
                x11_tag::tag_overlay_soon();
            }
        }
        if let Some(fade) = snap.rearmed_fade(now) {
            let left = crate::state::REARMED_FADE.mul_f32(1.0 - fade);
            ctx.request_repaint_after(left);
        }
        if self.surfaces.host_window && snap.settings_open {
            let state = self.state.clone();
            let events = self.events.clone();
            ctx.show_viewport_deferred(
                viewports::settings_id(),
                viewports::settings(monitor),
                move |ui, _class| settings_window::show(ui, &state, &events),
            );
        }

        if self.last_snapshot.as_ref() != Some(&snap) {
            if self.surfaces.host_window && snap.settings_open {
                ctx.request_repaint_of(viewports::settings_id());
            }
            if wanted.overlay.is_some() {
                ctx.request_repaint_of(viewports::overlay_id());
            }
            self.last_snapshot = Some(snap);
        }
        self.shown = wanted;
    }
}
