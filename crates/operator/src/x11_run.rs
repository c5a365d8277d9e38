//! The operator windows on X11: every one of them (banner, prompts, and for plain `mcec` the
//! host window and its settings window) painted on the CPU into plain X11 windows (`soft/`),
//! on the calling thread, beside the host's tray icon where the desktop has a tray. Unix only;
//! on Windows [`crate::run_operator_ui`] runs the same painter on its Win32 surface.

use std::sync::mpsc::Sender;

use crate::{OperatorEvent, OperatorState, Surfaces, UiError, soft};

/// [`crate::run_operator_ui`] on X11.
pub(crate) fn run(
    state: OperatorState,
    events: Sender<OperatorEvent>,
    surfaces: Surfaces,
) -> Result<(), UiError> {
    if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
        return Err(UiError::NoDisplay);
    }
    // Where the desktop has a tray; never the only way to see or clear the stop.
    let _tray = surfaces.host_window.then(|| crate::tray::start(state.clone(), events.clone()));
    // A debug build's panic in the painter or in egui ends the windows, not the process; a
    // release build aborts on panic (the hook in `mcec`'s `panic_release` runs first).
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || soft::run(state, events, surfaces)))
        .unwrap_or_else(|payload| Err(UiError::Panicked(panic_message(payload.as_ref()))))
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}
