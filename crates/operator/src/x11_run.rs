//! The operator windows on X11: the CPU-painted windows of `soft/` without a host window,
//! one eframe (glow) app otherwise (see the crate doc), beside which the same CPU painter
//! shows the prompts whose buttons are judged on the event that pressed them (re-arm,
//! consent, the opt-in's confirmation): winit does not say which event pressed a widget, and
//! passes on keys a program sent with `XSendEvent`. It runs on a thread of its own with its
//! own x11rb connection (no Xlib, so nothing it does can race eframe's). Unix only; on Windows
//! [`crate::run_operator_ui`] runs the same CPU painter on its Win32 surface instead.

use std::sync::mpsc::Sender;

use crate::{OperatorEvent, OperatorState, Surfaces, UiError, app, soft, viewports, xlib_guard};

impl From<eframe::Error> for UiError {
    fn from(err: eframe::Error) -> Self {
        match err {
            eframe::Error::WinitEventLoop(e) => Self::EventLoop(e.to_string()),
            other => Self::Graphics(other.to_string()),
        }
    }
}

/// [`crate::run_operator_ui`] on X11.
pub(crate) fn run(
    state: OperatorState,
    events: Sender<OperatorEvent>,
    surfaces: Surfaces,
) -> Result<(), UiError> {
    if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
        return Err(UiError::NoDisplay);
    }
    if !surfaces.host_window {
        return soft::run(state, events, surfaces, false);
    }
    let prompts = {
        let (state, events) = (state.clone(), events.clone());
        std::thread::Builder::new().name("mcec-operator-prompts".into()).spawn(move || {
            if let Err(e) = soft::run(state, events, surfaces, true) {
                // Fail closed: without these windows nothing can be re-armed, granted or ticked.
                tracing::error!("the re-arm and consent prompts are unavailable: {e}");
            }
        })
    };
    if let Err(e) = prompts {
        tracing::error!("the re-arm and consent prompts are unavailable: {e}");
    }
    // Where the desktop has a tray; never the only way to see or clear the stop.
    crate::tray::start(state.clone(), events.clone());
    let root = if surfaces.host_window {
        viewports::host()
    } else {
        // A stand-in root: eframe always has one; this one hides after its first frame.
        eframe::egui::ViewportBuilder::default()
            .with_title("mcec operator")
            .with_decorations(false)
            .with_taskbar(false)
            .with_position([0.0, 0.0])
            .with_inner_size([1.0, 1.0])
    };
    let options = eframe::NativeOptions {
        viewport: root,
        renderer: eframe::Renderer::Glow,
        centered: false,
        persist_window: false,
        event_loop_builder: Some(Box::new(|builder| {
            use winit::platform::x11::EventLoopBuilderExtX11 as _;
            builder.with_any_thread(true);
        })),
        ..Default::default()
    };
    xlib_guard::survive_display_loss();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        eframe::run_native(
            "mcec",
            options,
            Box::new(move |cc| Ok(Box::new(app::OperatorApp::new(&cc.egui_ctx, state, events, surfaces)))),
        )
    }));
    match run {
        Ok(result) => result.map_err(UiError::from),
        Err(payload) => Err(UiError::Panicked(panic_message(payload.as_ref()))),
    }
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
