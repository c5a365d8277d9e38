//! The X11 surface of the CPU painter: plain X11 windows over x11rb ([`window`]), their key
//! and pointer events as egui input ([`input`]), and a small reader thread that only forwards
//! the connection's events to the loop.
//!
//! Input another client wrote (`XSendEvent`: the send-event bit set, which no client can
//! clear) never reaches a widget: it is dropped here and audited by the loop. Only the window
//! manager's close request, always sent this way, is taken from a sender.

mod input;
pub(crate) mod window;

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Instant;

use x11rb::{
    connection::Connection,
    protocol::Event,
    protocol::xproto::{Screen, Visibility},
    rust_connection::RustConnection,
};

use crate::soft::pass::{Layout, Role};
use crate::soft::raster::Canvas;
use crate::soft::surface::{Seen, Surface};
use crate::state::OperatorState;
use crate::{UiError, overlay, x11_tag};
use input::Keymap;
use mcec_rules::activation::{InputEventId, Pressed};
use mcec_rules::own_windows::{HOST_CLASS, PROMPT_CLASS, SETTINGS_CLASS};
use window::{Atoms, Kind, Spec, XWindow};

/// Title of the unmapped window that stands for the whole UI (see [`window::stand_in`]).
const STAND_IN_TITLE: &str = "mcec operator";

/// The shortest time between two raises of a covered prompt.
const RAISE_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

/// How a press another client sent is named in the audit.
const SENT: &str = "sent by a program (XSendEvent)";

enum Wake {
    Repaint,
    X(Event),
    Lost(String),
}

/// The X connection with what the windows need of it, and the events the reader forwards.
pub(crate) struct Desktop {
    conn: Arc<RustConnection>,
    screen: Screen,
    atoms: Atoms,
    keymap: Keymap,
    rx: Receiver<Wake>,
    /// When a covered prompt was last raised.
    last_raise: std::sync::Mutex<Option<Instant>>,
}

fn graphics(e: impl std::fmt::Display) -> UiError {
    UiError::Graphics(e.to_string())
}

impl Desktop {
    /// Connect, start the reader and hook the state's repaints to the loop.
    pub(crate) fn open(state: &OperatorState) -> Result<Self, UiError> {
        let (conn, screen_num) = x11rb::connect(None).map_err(|e| UiError::EventLoop(e.to_string()))?;
        let conn = Arc::new(conn);
        let screen = conn.setup().roots[screen_num].clone();
        window::check_visual(&conn, &screen).map_err(graphics)?;
        let atoms = Atoms::new(&conn).map_err(graphics)?;
        let keymap = Keymap::load(&conn).map_err(graphics)?;
        window::stand_in(&conn, &screen, STAND_IN_TITLE).map_err(graphics)?;
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
        Ok(Self { conn, screen, atoms, keymap, rx, last_raise: std::sync::Mutex::new(None) })
    }

    /// What an X event means to the loop, if anything.
    fn seen(&self, event: Event) -> Option<Seen<u32>> {
        // Another client wrote this event, time and all: never input. Only the window
        // manager's close request (always sent this way) is taken from a sender.
        if event.sent_event() && !matches!(event, Event::ClientMessage(_)) {
            return match &event {
                Event::ButtonPress(e) => Some(Seen::Dropped(e.event, "click", SENT)),
                Event::KeyPress(e) => Some(Seen::Dropped(e.event, "key press", SENT)),
                _ => None,
            };
        }
        let keymap = &self.keymap;
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
        let named = |window, input: Option<egui::Event>, id| Some(Seen::Named(window, input?, id));
        match &event {
            Event::Expose(e) => Some(Seen::Paint { window: e.window, last: e.count == 0 }),
            Event::KeyPress(e) => {
                named(e.event, keymap.key_event(e.detail, e.state, true), key_id(e.detail, e.time, true))
            }
            Event::KeyRelease(e) => {
                named(e.event, keymap.key_event(e.detail, e.state, false), key_id(e.detail, e.time, false))
            }
            Event::ButtonPress(e) => named(
                e.event,
                input::pointer_button(e.detail, e.event_x, e.event_y, e.state, true),
                button_id(e.detail, e.time, true),
            ),
            Event::ButtonRelease(e) => named(
                e.event,
                input::pointer_button(e.detail, e.event_x, e.event_y, e.state, false),
                button_id(e.detail, e.time, false),
            ),
            Event::MotionNotify(e) => Some(Seen::Input(
                e.event,
                egui::Event::PointerMoved(egui::pos2(f32::from(e.event_x), f32::from(e.event_y))),
            )),
            Event::LeaveNotify(e) => Some(Seen::Input(e.event, egui::Event::PointerGone)),
            Event::FocusIn(e) => Some(Seen::Focus(e.event, true)),
            Event::FocusOut(e) => Some(Seen::Focus(e.event, false)),
            Event::ClientMessage(e) if window::is_close_request(&self.atoms, e) => {
                Some(Seen::Close(e.window))
            }
            // Only the windows that keep above ask for these.
            Event::VisibilityNotify(e) if e.state != Visibility::UNOBSCURED => {
                self.raise_covered(e.window);
                None
            }
            _ => None,
        }
    }

    /// Raise a prompt another window covers, at most every [`RAISE_PAUSE`]: a program that
    /// raises its own window whenever covered cannot make the two trade places faster.
    fn raise_covered(&self, id: u32) {
        let mut last = self.last_raise.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if last.is_some_and(|at| at.elapsed() < RAISE_PAUSE) {
            return;
        }
        *last = Some(Instant::now());
        if let Err(e) = XWindow::raise(&self.conn, id) {
            tracing::warn!("cannot raise the covered prompt: {e}");
        }
    }

    fn seen_of(&self, wake: Wake) -> Option<Seen<u32>> {
        match wake {
            Wake::Repaint => Some(Seen::Wake),
            Wake::X(event) => self.seen(event),
            Wake::Lost(why) => {
                Some(Seen::End(Err(UiError::EventLoop(format!("the X connection broke: {why}")))))
            }
        }
    }
}

fn read_events(conn: &RustConnection, tx: &mpsc::Sender<Wake>) {
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

impl Surface for Desktop {
    type Window = XWindow;
    type Id = u32;

    fn id(window: &XWindow) -> u32 {
        window.id
    }

    fn monitor(&self) -> egui::Vec2 {
        egui::vec2(f32::from(self.screen.width_in_pixels), f32::from(self.screen.height_in_pixels))
    }

    fn create(&mut self, role: Role, layout: Layout) -> Result<XWindow, UiError> {
        let (kind, class) = match role {
            Role::Overlay => (Kind::Overlay, overlay::OVERLAY_CLASS),
            Role::Prompt | Role::Consent | Role::OptIn | Role::Reveal | Role::End => {
                (Kind::Prompt, PROMPT_CLASS)
            }
            Role::Host => (Kind::Prompt, HOST_CLASS),
            Role::Settings => (Kind::Prompt, SETTINGS_CLASS),
        };
        let keep_above = role.attested();
        let spec = Spec { kind, title: role.title(), class, pos: layout.pos, size: layout.size, keep_above };
        XWindow::create(&self.conn, &self.screen, &self.atoms, &spec).map_err(graphics)
    }

    fn reveal(&mut self, role: Role, window: &XWindow, canvas: &Canvas) -> Result<bool, UiError> {
        // Copied at once after the map, which shows the frame without waiting for the Expose
        // where no window manager holds the map back (where one does, the copy is dropped and
        // the Expose shows it).
        window.map(&self.conn).map_err(graphics)?;
        window.show(&self.conn, canvas).map_err(graphics)?;
        match role {
            Role::Prompt => x11_tag::focus_prompt_soon(),
            Role::Consent => x11_tag::focus_consent_soon(),
            Role::OptIn => x11_tag::focus_opt_in_soon(),
            Role::Reveal => x11_tag::focus_reveal_soon(),
            Role::End => x11_tag::focus_end_soon(),
            Role::Overlay | Role::Host | Role::Settings => {}
        }
        // On screen from its first (server-made) Expose.
        Ok(false)
    }

    fn reshape(&mut self, _role: Role, window: &XWindow, layout: Layout) -> Result<(), UiError> {
        window.reshape(&self.conn, layout.pos, layout.size).map_err(graphics)
    }

    fn show(&mut self, window: &XWindow, canvas: &Canvas) -> Result<(), UiError> {
        if window.exposed {
            window.show(&self.conn, canvas).map_err(graphics)?;
        }
        Ok(())
    }

    fn paint(&mut self, window: &mut XWindow, canvas: &Canvas, last: bool) -> Result<(), UiError> {
        window.exposed = true;
        if last {
            window.show(&self.conn, canvas).map_err(graphics)?;
        }
        Ok(())
    }

    fn raise(&mut self, window: &XWindow) -> Result<(), UiError> {
        // Mapping an iconified window restores it (ICCCM); then it goes on top.
        window.map(&self.conn).map_err(graphics)?;
        XWindow::raise(&self.conn, window.id).map_err(graphics)
    }

    fn destroy(&mut self, window: XWindow) {
        window.destroy(&self.conn);
    }

    fn wait(&mut self, until: Option<Instant>) -> Vec<Seen<u32>> {
        let ended = || vec![Seen::End(Ok(()))];
        let first = match until {
            Some(at) => match self.rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(wake) => Some(wake),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return ended(),
            },
            None => match self.rx.recv() {
                Ok(wake) => Some(wake),
                Err(_) => return ended(),
            },
        };
        let wakes: Vec<Wake> =
            first.into_iter().chain(std::iter::from_fn(|| self.rx.try_recv().ok())).collect();
        wakes.into_iter().filter_map(|wake| self.seen_of(wake)).collect()
    }
}
