//! The operator's windows: the overlay banner, the headless re-arm prompt, the consent prompt
//! of `request-command-access`, the host window and its settings window (the Agent tab:
//! provisioning opt-in and sessions).
//!
//! This crate never decides a safety verdict. It shows the state the core gives it
//! ([`OperatorState`]) and reports what the operator clicked, and when ([`OperatorEvent`]);
//! the core checks with its provenance monitor that physical input did it.
//!
//! One UI stack draws every window: the same egui code, painted on the CPU (`soft/`) into
//! plain X11 windows over x11rb (`soft/x11`) or Win32 windows (`soft/win32.rs`). No winit,
//! Xlib or OpenGL is loaded, which keeps every process small (the host with its settings
//! window open as much as `mcec mcp`), and every window, the host's too, names the input
//! event behind each click. [`run_operator_ui`] runs on the calling thread, any thread, and
//! [`spawn_operator_ui_thread`] runs it on a dedicated thread, so the protocol can keep the
//! main thread. Both return an error instead of panicking or exiting when no display is
//! reachable or the painter cannot start (or the X connection breaks), so the caller can log
//! it and carry on headless.
//!
//! `x11_tag` opens its own small X connection to find a prompt's window and give it the
//! focus. Beside the host window, `tray/` shows a tray icon where the desktop has a tray (a
//! StatusNotifierItem on Unix, the notification area on Windows).

mod agent_model;
mod confirm_dialog;
mod consent_prompt;
mod consent_view;
mod console_model;
mod console_panes;
mod end_prompt;
mod glyph;
mod host;
mod opt_in_prompt;
mod overlay;
mod prompt;
mod reveal_prompt;
mod settings_window;
mod soft;
mod state;
mod tray;
#[cfg(unix)]
mod x11_run;
#[cfg(unix)]
mod x11_tag;

use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

pub use agent_model::{
    AgentMessage, AgentTab, ClientHandoff, HandoffPart, HandoffView, SessionRow, mask_token,
};
pub use consent_prompt::{ALLOW_LABEL, CONSENT_TITLE, DENY_LABEL};
pub use consent_view::ConsentView;
pub use console_panes::{ACTIVITY_HEADING, AGENTS_HEADING};
pub use end_prompt::{END_LABEL, END_TITLE, EndAsk};
pub use host::{HOST_TITLE, MENU_REARM_LABEL, MENU_SETTINGS_LABEL, STOP_LABEL};
pub use opt_in_prompt::{CANCEL_LABEL, CONFIRM_LABEL, OPT_IN_TITLE};
pub use overlay::{OVERLAY_CLASS, OVERLAY_TITLE};
pub use prompt::{LEAVE_LABEL, PROMPT_TITLE, REARM_LABEL};
pub use reveal_prompt::{REVEAL_LABEL, REVEAL_TITLE};
pub use settings_window::{
    ALLOW_PROVISIONING_LABEL, CLIENT_CHOICE_LABEL, COPY_HTTP_LABEL, COPY_STDIO_LABEL, PROVISION_NEW_LABEL,
    REVEAL_TOKEN_LABEL, SESSION_COPY_NOTE, SETTINGS_TITLE,
};
pub use state::{
    ChordPrompt, Mode, NARRATION_LINES, NARRATION_MAX_CHARS, OperatorEvent, OperatorState, PromptChords,
    REARMED_FADE, Snapshot,
};
pub use tray::{TRAY_OPEN_CONSOLE_LABEL, TRAY_REARM_LABEL, TRAY_STOP_LABEL};
/// Which windows to offer. `mcec mcp` wants the overlay and the prompt; plain `mcec` wants
/// the overlay and the host window (whose menu re-arms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Surfaces {
    pub overlay: bool,
    pub prompt: bool,
    pub host_window: bool,
}

/// Why the operator UI could not run.
#[derive(Debug)]
pub enum UiError {
    /// `DISPLAY` is unset or empty: there is no desktop to show windows on.
    NoDisplay,
    /// The windowing event loop could not start (X server unreachable, or already used once
    /// in this process).
    EventLoop(String),
    /// A window could not be created or painted.
    Graphics(String),
    /// The toolkit panicked; the UI is gone but the process lives on (a debug build: a release
    /// build aborts on panic).
    Panicked(String),
    /// The UI thread could not be started.
    Spawn(std::io::Error),
}

impl std::fmt::Display for UiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoDisplay => write!(f, "no X display: DISPLAY is not set"),
            Self::EventLoop(msg) => write!(f, "could not start the window event loop: {msg}"),
            Self::Graphics(msg) => write!(f, "could not open a window: {msg}"),
            Self::Panicked(msg) => write!(f, "the operator UI crashed: {msg}"),
            Self::Spawn(err) => write!(f, "could not start the operator UI thread: {err}"),
        }
    }
}

impl std::error::Error for UiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Spawn(err) => Some(err),
            _ => None,
        }
    }
}

/// Run the operator windows on the calling thread until [`OperatorState::request_quit`] or
/// the host window's `Quit`. Returns at once with an error when nothing can be shown.
pub fn run_operator_ui(
    state: OperatorState,
    events: Sender<OperatorEvent>,
    surfaces: Surfaces,
) -> Result<(), UiError> {
    #[cfg(unix)]
    return x11_run::run(state, events, surfaces);
    #[cfg(windows)]
    {
        // Where there is a notification area; never the only way to see or clear the stop.
        // Dropped when the windows end, which deletes the icon.
        let _tray = surfaces.host_window.then(|| tray::start(state.clone(), events.clone()));
        soft::run(state, events, surfaces)
    }
}

/// Run [`run_operator_ui`] on a new thread named `mcec-operator-ui`. Join the handle to learn
/// whether (and why) the UI ended.
pub fn spawn_operator_ui_thread(
    state: OperatorState,
    events: Sender<OperatorEvent>,
    surfaces: Surfaces,
) -> Result<JoinHandle<Result<(), UiError>>, UiError> {
    std::thread::Builder::new()
        .name("mcec-operator-ui".into())
        .spawn(move || run_operator_ui(state, events, surfaces))
        .map_err(UiError::Spawn)
}
