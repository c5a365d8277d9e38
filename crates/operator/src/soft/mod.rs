//! The operator windows of `mcec mcp` (the overlay banner, the re-arm and consent prompts), drawn by
//! the same egui code as everywhere else but painted on the CPU into plain X11 windows.
//!
//! Why: eframe paints through OpenGL, and on a desktop without a GPU driver that loads Mesa's
//! llvmpipe (LLVM) into every process: about 70 MB resident of a 150 MB `mcec mcp`, and the
//! host with its settings window took 121.6 MB against 27.4 MB painted here (issue 25). These
//! windows change a few times a second at most, so egui's tessellated meshes are painted by
//! [`raster`] and copied to the window with `PutImage` ([`x11`]). No winit, Xlib or OpenGL is
//! loaded, on X11 as on Windows, for the host window as for the banner.
//!
//! One thread (the caller's) owns the windows: it reacts to the state's repaint hook, to the
//! platform's window events and to egui's own repaint requests. The loop that does so is one
//! ([`ui`]); each platform is one module behind the small [`surface::Surface`] trait (X11 in
//! [`x11`], Win32 in `win32`), and the platform is chosen here and nowhere else. A state change is painted in the same wake-up that sees it: the banner is on
//! screen within one frame of a stop (`bench/bench_banner.py` measures it). Two things keep it
//! there: the closed banner's egui context (with its font atlas) is kept for the next time the
//! banner opens, since building one costs far more than a frame, and a new window's finished
//! frame is copied right after it is mapped, rather than only on its first Expose. Windows are
//! brought up to date one at a time, the banner first, so a prompt that opens with a stop
//! (and is painted from a fresh context) never delays the banner.
//!
//! The prompts decide nothing: a button reports the events that pressed it, named by their
//! server time and button or key, and the core asks the provenance monitor whether a physical
//! device made those very events. So input sent with `XSendEvent` (the send-event bit set,
//! which no client can clear) never reaches a widget here, and is audited; and the windows
//! whose controls need that judgement (the re-arm, consent and opt-in prompts) can rely on it.

mod pace;
mod pass;
mod raster;
mod surface;
mod ui;
// Its window helpers also make the hidden window of the tray icon (tray/notify_area.rs).
#[cfg(windows)]
pub(crate) mod win32;
#[cfg(unix)]
mod x11;

// The surface: plain X11 windows on Unix, Win32 windows on Windows.
#[cfg(windows)]
use win32 as platform;
#[cfg(unix)]
use x11 as platform;

use std::sync::mpsc::Sender;

use crate::state::{OperatorEvent, OperatorState};
use crate::{Surfaces, UiError};

/// Run the operator windows (those `surfaces` asks for) until [`OperatorState::request_quit`].
pub(crate) fn run(
    state: OperatorState,
    events: Sender<OperatorEvent>,
    surfaces: Surfaces,
) -> Result<(), UiError> {
    let surface = platform::Desktop::open(&state)?;
    let mut ui = ui::SoftUi::new(surface, state, events, surfaces);
    let result = ui.run();
    ui.close_all();
    result
}
