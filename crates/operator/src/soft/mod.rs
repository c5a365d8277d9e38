//! The operator windows of `mcec mcp` (the overlay banner, the re-arm and consent prompts), drawn by
//! the same egui code as everywhere else but painted on the CPU into plain X11 windows.
//!
//! Why: eframe paints through OpenGL, and on a desktop without a GPU driver that loads Mesa's
//! llvmpipe (LLVM) into every `mcec mcp`: about 70 MB resident of a 150 MB process, and one
//! `mcec mcp` runs per agent connection. These windows are small and change a few times a
//! second at most, so egui's tessellated meshes are painted by [`raster`] and copied to the
//! window with `PutImage` ([`xwin`]). No winit, Xlib or OpenGL is loaded. The host window of
//! plain `mcec` (menus, settings, text fields) stays on eframe.
//!
//! One thread (the caller's) owns the windows: it reacts to the state's repaint hook, to X
//! events (read by a small reader thread that only forwards them) and to egui's own repaint
//! requests. A state change is painted in the same wake-up that sees it: the banner is on
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
//! whose controls need that judgement (the re-arm, consent and opt-in prompts) are only ever
//! painted here, also in the host process (`attested_only`), whose eframe windows cannot name
//! the event behind a click.

#[cfg(unix)]
mod input;
mod pass;
mod raster;
#[cfg(windows)]
mod win32;
#[cfg(unix)]
mod xwin;

// The surface: plain X11 windows on Unix, Win32 windows on Windows (`win32.rs`).
#[cfg(windows)]
pub(crate) use win32::run;

#[cfg(unix)]
use std::sync::Arc;
#[cfg(unix)]
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
#[cfg(unix)]
use std::time::Instant;

#[cfg(unix)]
use eframe::egui;
#[cfg(unix)]
use x11rb::{
    connection::Connection, protocol::Event, protocol::xproto::Screen, rust_connection::RustConnection,
};

#[cfg(unix)]
use crate::state::{OperatorEvent, OperatorState, Snapshot};
#[cfg(unix)]
use crate::{
    Surfaces, UiError, consent_prompt, host, opt_in_prompt, overlay, prompt, settings_window, x11_tag,
};
#[cfg(unix)]
use input::Keymap;
#[cfg(unix)]
use mcec_rules::activation::{InputEventId, Pressed};
#[cfg(unix)]
use mcec_rules::own_windows::{HOST_CLASS, PROMPT_CLASS, SETTINGS_CLASS};
#[cfg(unix)]
use pass::{DroppedInput, Layout, Role};
#[cfg(unix)]
use raster::Textures;
#[cfg(unix)]
use xwin::{Atoms, Kind, Spec, XWindow};

/// Title of the unmapped window that stands for the whole UI (see [`xwin::stand_in`]).
#[cfg(unix)]
const STAND_IN_TITLE: &str = "mcec operator";

#[cfg(unix)]
enum Wake {
    Repaint,
    X(Event),
    Lost(String),
}

/// Run the overlay and the prompts until [`OperatorState::request_quit`]. With
/// `attested_only`, only the windows whose controls are judged on their events (the host
/// process: eframe shows the rest).
#[cfg(unix)]
pub(crate) fn run(
    state: OperatorState,
    events: Sender<OperatorEvent>,
    surfaces: Surfaces,
    attested_only: bool,
) -> Result<(), UiError> {
    let (conn, screen_num) = x11rb::connect(None).map_err(|e| UiError::EventLoop(e.to_string()))?;
    let conn = Arc::new(conn);
    let screen = conn.setup().roots[screen_num].clone();
    let graphics = |e: xwin::XResult<()>| e.map_err(|e| UiError::Graphics(e.to_string()));
    graphics(xwin::check_visual(&conn, &screen))?;
    let atoms = Atoms::new(&conn).map_err(|e| UiError::Graphics(e.to_string()))?;
    let keymap = Keymap::load(&conn).map_err(|e| UiError::Graphics(e.to_string()))?;
    xwin::stand_in(&conn, &screen, STAND_IN_TITLE).map_err(|e| UiError::Graphics(e.to_string()))?;
    let (tx, rx) = mpsc::channel();
    let reader_conn = conn.clone();
    let reader_tx = tx.clone();
    std::thread::Builder::new()
        .name("mcec-operator-x11".into())
        .spawn(move || read_events(&reader_conn, &reader_tx))
        .map_err(UiError::Spawn)?;
    state.set_repaint_hook(move || {
        let _ = tx.send(Wake::Repaint);
    });
    let mut ui = SoftUi {
        conn,
        screen,
        atoms,
        keymap,
        state,
        events,
        surfaces,
        attested_only,
        panes: Vec::new(),
        spare_banner: None,
        start: Instant::now(),
        dropped: DroppedInput::default(),
    };
    let result = ui.run(&rx);
    ui.close_all();
    result
}

#[cfg(unix)]
fn read_events(conn: &RustConnection, tx: &Sender<Wake>) {
    loop {
        let wake = match conn.wait_for_event() {
            Ok(event) => Wake::X(event),
            Err(e) => Wake::Lost(e.to_string()),
        };
        let lost = matches!(wake, Wake::Lost(_));
        if tx.send(wake).is_err() || lost {
            return;
        }
    }
}

#[cfg(unix)]
type Pane = pass::Pane<XWindow>;

#[cfg(unix)]
struct SoftUi {
    conn: Arc<RustConnection>,
    screen: Screen,
    atoms: Atoms,
    keymap: Keymap,
    state: OperatorState,
    events: Sender<OperatorEvent>,
    surfaces: Surfaces,
    attested_only: bool,
    panes: Vec<Pane>,
    /// The egui context and textures of the closed banner, for when it opens again.
    spare_banner: Option<(egui::Context, Textures)>,
    start: Instant,
    /// Presses sent with `XSendEvent`, dropped.
    dropped: DroppedInput,
}

#[cfg(unix)]
impl SoftUi {
    fn run(&mut self, rx: &Receiver<Wake>) -> Result<(), UiError> {
        loop {
            let snap = self.state.snapshot();
            if snap.quit_requested {
                return Ok(());
            }
            let now = Instant::now();
            // Window by window, the banner first: it is on screen before a prompt that opens
            // with it is painted.
            for role in Role::ALL {
                self.arrange(role, &snap, now).map_err(|e| UiError::Graphics(e.to_string()))?;
                let Some(i) = self.panes.iter().position(|p| p.role == role) else { continue };
                if self.panes[i].dirty || self.panes[i].repaint_at.is_some_and(|t| t <= now) {
                    self.frame(i).map_err(|e| UiError::Graphics(e.to_string()))?;
                }
            }
            let wake = match self.panes.iter().filter_map(|p| p.repaint_at).min() {
                Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                    Ok(wake) => Some(wake),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return Ok(()),
                },
                None => match rx.recv() {
                    Ok(wake) => Some(wake),
                    Err(_) => return Ok(()),
                },
            };
            for wake in wake.into_iter().chain(std::iter::from_fn(|| rx.try_recv().ok())) {
                match wake {
                    Wake::Repaint => self.panes.iter_mut().for_each(|p| p.dirty = true),
                    Wake::X(event) => self.on_x_event(event).map_err(|e| UiError::Graphics(e.to_string()))?,
                    Wake::Lost(why) => {
                        return Err(UiError::EventLoop(format!("the X connection broke: {why}")));
                    }
                }
            }
        }
    }

    fn wanted(&self, role: Role, snap: &Snapshot, now: Instant) -> Option<Layout> {
        if self.attested_only && !role.attested() {
            return None;
        }
        let monitor =
            egui::vec2(f32::from(self.screen.width_in_pixels), f32::from(self.screen.height_in_pixels));
        pass::wanted(role, self.surfaces, snap, now, monitor)
    }

    /// Open, reshape or close `role`'s window to match the state.
    fn arrange(&mut self, role: Role, snap: &Snapshot, now: Instant) -> xwin::XResult<()> {
        let wanted = self.wanted(role, snap, now);
        let index = self.panes.iter().position(|p| p.role == role);
        match (wanted, index) {
            (None, Some(i)) => {
                let (window, kept) = self.panes.remove(i).close();
                window.destroy(&self.conn);
                self.spare_banner = kept.or(self.spare_banner.take());
            }
            (Some(layout), Some(i)) if self.panes[i].layout != layout => {
                let pane = &mut self.panes[i];
                if pane.relayout(layout) {
                    pane.window.reshape(&self.conn, layout.pos, layout.size)?;
                }
            }
            (Some(layout), None) => self.open(role, layout)?,
            _ => {}
        }
        Ok(())
    }

    fn open(&mut self, role: Role, layout: Layout) -> xwin::XResult<()> {
        let title = role_title(role);
        let (kind, class) = match role {
            Role::Overlay => (Kind::Overlay, overlay::OVERLAY_CLASS),
            Role::Prompt | Role::Consent | Role::OptIn => (Kind::Prompt, PROMPT_CLASS),
            // Only where the host window is painted on the CPU (Windows); X11's is eframe's.
            Role::Host => (Kind::Prompt, HOST_CLASS),
            Role::Settings => (Kind::Prompt, SETTINGS_CLASS),
        };
        let spec = Spec { kind, title, class, pos: layout.pos, size: layout.size };
        let window = XWindow::create(&self.conn, &self.screen, &self.atoms, &spec)?;
        let kept = if role == Role::Overlay { self.spare_banner.take() } else { None };
        let mut pane = Pane::new(role, window, layout, kept);
        // Painted before it is mapped, so the first Expose shows the finished frame; copied
        // at once too, which shows it without waiting for the Expose where no window manager
        // holds the map back (where one does, the copy is dropped and the Expose shows it).
        self.paint(&mut pane);
        pane.window.map(&self.conn)?;
        pane.window.show(&self.conn, &pane.canvas)?;
        self.panes.push(pane);
        match role {
            Role::Prompt => x11_tag::focus_prompt_soon(),
            Role::Consent => x11_tag::focus_consent_soon(),
            Role::OptIn => x11_tag::focus_opt_in_soon(),
            Role::Overlay | Role::Host | Role::Settings => {}
        }
        Ok(())
    }

    fn frame(&mut self, i: usize) -> xwin::XResult<()> {
        let pane = &mut self.panes[i];
        pane.paint(&self.state, &self.events, self.start.elapsed().as_secs_f64());
        if pane.window.exposed {
            pane.window.show(&self.conn, &pane.canvas)?;
        }
        Ok(())
    }

    fn paint(&self, pane: &mut Pane) {
        pane.paint(&self.state, &self.events, self.start.elapsed().as_secs_f64());
    }

    fn pane_of(&mut self, window: u32) -> Option<&mut Pane> {
        self.panes.iter_mut().find(|p| p.window.id == window)
    }

    /// Audits a press sent with `XSendEvent` to `window`.
    fn audit_dropped(&mut self, window: u32, what: &str) {
        let title = self.panes.iter().find(|p| p.window.id == window).map_or("?", |p| role_title(p.role));
        self.dropped.note(title, what, "sent by a program (XSendEvent)");
    }

    fn on_x_event(&mut self, event: Event) -> xwin::XResult<()> {
        // Another client wrote this event, time and all: never input. Only the window
        // manager's close request (always sent this way) is taken from a sender.
        if event.sent_event() && !matches!(event, Event::ClientMessage(_)) {
            match &event {
                Event::ButtonPress(e) => self.audit_dropped(e.event, "click"),
                Event::KeyPress(e) => self.audit_dropped(e.event, "key press"),
                _ => {}
            }
            return Ok(());
        }
        let keymap = &self.keymap;
        let atoms = &self.atoms;
        let conn = self.conn.clone();
        let key_id = |detail: u8, time: u32, down: bool| InputEventId {
            time,
            what: Pressed::Key(u32::from(detail)),
            down,
        };
        let button_id = |detail: u8, time: u32, down: bool| InputEventId {
            time,
            what: Pressed::Button(u32::from(detail)),
            down,
        };
        let (window, input, id) = match &event {
            Event::Expose(e) => {
                if let Some(pane) = self.pane_of(e.window) {
                    pane.window.exposed = true;
                    // The window is on screen from its first (server-made) Expose.
                    pane.shown_at.get_or_insert_with(Instant::now);
                    if e.count == 0 {
                        pane.window.show(&conn, &pane.canvas)?;
                    }
                }
                return Ok(());
            }
            Event::KeyPress(e) => {
                (e.event, keymap.key_event(e.detail, e.state, true), Some(key_id(e.detail, e.time, true)))
            }
            Event::KeyRelease(e) => {
                (e.event, keymap.key_event(e.detail, e.state, false), Some(key_id(e.detail, e.time, false)))
            }
            Event::ButtonPress(e) => (
                e.event,
                input::pointer_button(e.detail, e.event_x, e.event_y, e.state, true),
                Some(button_id(e.detail, e.time, true)),
            ),
            Event::ButtonRelease(e) => (
                e.event,
                input::pointer_button(e.detail, e.event_x, e.event_y, e.state, false),
                Some(button_id(e.detail, e.time, false)),
            ),
            Event::MotionNotify(e) => (
                e.event,
                Some(egui::Event::PointerMoved(egui::pos2(f32::from(e.event_x), f32::from(e.event_y)))),
                None,
            ),
            Event::LeaveNotify(e) => (e.event, Some(egui::Event::PointerGone), None),
            Event::FocusIn(e) | Event::FocusOut(e) => {
                let focused = matches!(event, Event::FocusIn(_));
                if let Some(pane) = self.pane_of(e.event) {
                    pane.focused = focused;
                    pane.input.push(egui::Event::WindowFocused(focused));
                    pane.dirty = true;
                }
                return Ok(());
            }
            Event::ClientMessage(e) if xwin::is_close_request(atoms, e) => {
                if let Some(pane) = self.pane_of(e.window) {
                    pane.close_requested = true;
                    pane.dirty = true;
                }
                return Ok(());
            }
            _ => return Ok(()),
        };
        if let (Some(pane), Some(input)) = (self.pane_of(window), input) {
            match id {
                Some(id) => pane.push_named(input, id),
                None => pane.input.push(input),
            }
            pane.dirty = true;
        }
        Ok(())
    }

    fn close_all(&mut self) {
        for pane in self.panes.drain(..) {
            pane.window.destroy(&self.conn);
        }
    }
}

/// The title of `role`'s window, for the audit.
#[cfg(unix)]
fn role_title(role: Role) -> &'static str {
    match role {
        Role::Overlay => overlay::OVERLAY_TITLE,
        Role::Prompt => prompt::PROMPT_TITLE,
        Role::Consent => consent_prompt::CONSENT_TITLE,
        Role::OptIn => opt_in_prompt::OPT_IN_TITLE,
        Role::Host => host::HOST_TITLE,
        Role::Settings => settings_window::SETTINGS_TITLE,
    }
}
