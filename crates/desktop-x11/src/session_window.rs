//! A session's own display as the operator sees it: the nested Xephyr's window on their X
//! desktop (issue 26). It watches for the operator's hand in that window and retitles it.
//!
//! The watch has its own connection to the operator's display and its own thread, apart from
//! the provenance monitor (whose input thread only feeds the stop). It selects XInput 2.2 raw
//! motion, button and key presses on the root window; an event from a physical device (the
//! monitor's [`DeviceTable`] rule: no XTEST device, no master) while the pointer is in the
//! session's window, with no other window over it there (`QueryPointer`'s top-level child is
//! that window or its frame), is the operator's hand. Injected input never counts. A forged
//! physical event could only make the agent wait, so RECORD is not needed here. Motion is
//! looked at no more often than every 30 ms.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcec_desktop::seams::SessionWindow;
use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xinput::{self, ConnectionExt as _, XIEventMask};
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConnectionExt as _, CreateWindowAux, EventMask, PropMode, Window,
    WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use crate::monitor::devices::DeviceTable;

/// How often pointer motion is looked at (a physical mouse reports up to 1000 moves a second).
const MOTION_LOOK: Duration = Duration::from_millis(30);
const XI_ALL_DEVICES: u16 = 0;
const XI_ALL_MASTER_DEVICES: u16 = 1;

/// The own display's window on the operator's desktop, found by the title its server was
/// started with.
pub struct X11SessionWindow {
    shared: Arc<Shared>,
    wake: Window,
}

struct Shared {
    conn: RustConnection,
    root: Window,
    /// The title the server was started with, which finds the window.
    started_as: String,
    /// The window, once found.
    window: Mutex<Option<Window>>,
    base: Instant,
    /// Nanoseconds after `base` plus one of the last sighting; 0 = never.
    last_seen: AtomicU64,
    stopping: AtomicBool,
}

impl X11SessionWindow {
    /// Watches `operator_display` for the operator's hand in the window titled `title`
    /// (which may not be mapped yet).
    pub fn watch(operator_display: &str, title: &str) -> Result<X11SessionWindow, String> {
        let (conn, screen) = RustConnection::connect(Some(operator_display))
            .map_err(|e| format!("cannot reach the operator's display {operator_display}: {e}"))?;
        let root =
            conn.setup().roots.get(screen).map(|s| s.root).ok_or("the operator's display has no screen")?;
        let wake = conn.generate_id().map_err(failed("window id"))?;
        conn.create_window(0, wake, root, 0, 0, 1, 1, 0, WindowClass::INPUT_ONLY, 0, &CreateWindowAux::new())
            .map_err(failed("wake window"))?
            .check()
            .map_err(failed("wake window"))?;
        let presses = XIEventMask::RAW_MOTION | XIEventMask::RAW_BUTTON_PRESS | XIEventMask::RAW_KEY_PRESS;
        let masks = [
            xinput::EventMask { deviceid: XI_ALL_MASTER_DEVICES, mask: vec![presses] },
            xinput::EventMask { deviceid: XI_ALL_DEVICES, mask: vec![XIEventMask::HIERARCHY] },
        ];
        conn.xinput_xi_query_version(2, 2)
            .map_err(failed("XInput 2.2"))?
            .reply()
            .map_err(failed("XInput 2.2"))?;
        conn.xinput_xi_select_events(root, &masks)
            .map_err(failed("raw events"))?
            .check()
            .map_err(failed("raw events"))?;
        let xtest_atom = DeviceTable::xtest_atom(&conn).map_err(failed("XTEST atom"))?;
        let devices = DeviceTable::load(&conn, xtest_atom).map_err(failed("devices"))?;
        let shared = Arc::new(Shared {
            conn,
            root,
            started_as: title.to_string(),
            window: Mutex::new(None),
            base: Instant::now(),
            last_seen: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
        });
        let watcher = Watcher { shared: Arc::clone(&shared), devices, xtest_atom, last_look: None };
        std::thread::Builder::new()
            .name("mcec-operator-hand".into())
            .spawn(move || watcher.run())
            .map_err(failed("thread"))?;
        Ok(X11SessionWindow { shared, wake })
    }
}

impl SessionWindow for X11SessionWindow {
    fn operator_last_seen(&self) -> Option<Instant> {
        let at = self.shared.last_seen.load(Ordering::SeqCst);
        (at != 0).then(|| self.shared.base + Duration::from_nanos(at - 1))
    }

    fn set_title(&self, title: &str) {
        let Some(window) = self.shared.window() else {
            tracing::warn!("the own display's window is not on the operator's display; not retitled");
            return;
        };
        let conn = &self.shared.conn;
        let latin1: Vec<u8> = title.chars().map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?')).collect();
        let utf8_string = conn.intern_atom(false, b"UTF8_STRING").ok().and_then(|c| c.reply().ok());
        let net_wm_name = conn.intern_atom(false, b"_NET_WM_NAME").ok().and_then(|c| c.reply().ok());
        let _ =
            conn.change_property8(PropMode::REPLACE, window, AtomEnum::WM_NAME, AtomEnum::STRING, &latin1);
        if let (Some(name), Some(utf8)) = (net_wm_name, utf8_string) {
            let _ = conn.change_property8(PropMode::REPLACE, window, name.atom, utf8.atom, title.as_bytes());
        }
        let _ = conn.flush();
        tracing::info!("the own display's window is now titled \"{title}\"");
    }
}

impl Drop for X11SessionWindow {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        let msg = ClientMessageEvent::new(32, self.wake, 0u32, [0u32; 5]);
        let _ = self.shared.conn.send_event(false, self.wake, EventMask::NO_EVENT, msg);
        let _ = self.shared.conn.flush();
    }
}

impl Shared {
    /// The window, looked for (by the title it was started with) until found.
    fn window(&self) -> Option<Window> {
        let mut found = self.window.lock().unwrap_or_else(PoisonError::into_inner);
        if found.is_none() {
            *found = find_titled(&self.conn, self.root, self.started_as.as_bytes());
        }
        *found
    }

    /// Whether the pointer is in the window, with nothing over it there.
    fn pointer_inside(&self) -> bool {
        let Some(window) = self.window() else {
            return false;
        };
        let Some(top) = top_level(&self.conn, self.root, window) else {
            *self.window.lock().unwrap_or_else(PoisonError::into_inner) = None;
            return false;
        };
        let under = self.conn.query_pointer(self.root).ok().and_then(|c| c.reply().ok());
        under.is_some_and(|p| p.same_screen && p.child == top)
    }

    fn seen(&self, at: Instant) {
        let nanos = u64::try_from(at.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX - 1);
        self.last_seen.store(nanos + 1, Ordering::SeqCst);
    }
}

struct Watcher {
    shared: Arc<Shared>,
    devices: DeviceTable,
    xtest_atom: u32,
    /// When motion was last looked at, and whether the pointer was inside then.
    last_look: Option<(Instant, bool)>,
}

impl Watcher {
    fn run(mut self) {
        while let Ok(event) = self.shared.conn.wait_for_event() {
            if self.shared.stopping.load(Ordering::SeqCst) {
                return;
            }
            let now = Instant::now();
            match event {
                Event::XinputRawMotion(e) => self.motion(e.sourceid, now),
                Event::XinputRawButtonPress(e) => self.press(e.sourceid, now),
                Event::XinputRawKeyPress(e) => self.press(e.sourceid, now),
                Event::XinputHierarchy(_) => {
                    if let Ok(table) = DeviceTable::load(&self.shared.conn, self.xtest_atom) {
                        self.devices = table;
                    }
                }
                _ => {}
            }
        }
    }

    fn press(&mut self, source: u16, now: Instant) {
        if !self.devices.injected(source) && self.shared.pointer_inside() {
            self.shared.seen(now);
        }
    }

    fn motion(&mut self, source: u16, now: Instant) {
        if self.devices.injected(source) {
            return;
        }
        let inside = match self.last_look {
            Some((at, inside)) if now.duration_since(at) < MOTION_LOOK => inside,
            _ => {
                let inside = self.shared.pointer_inside();
                self.last_look = Some((now, inside));
                inside
            }
        };
        if inside {
            self.shared.seen(now);
        }
    }
}

/// The first window under `root` whose `WM_NAME` is `title`, depth first.
fn find_titled(conn: &RustConnection, root: Window, title: &[u8]) -> Option<Window> {
    let mut queue = vec![root];
    while let Some(window) = queue.pop() {
        let name = conn
            .get_property(false, window, AtomEnum::WM_NAME, AtomEnum::ANY, 0, 256)
            .ok()
            .and_then(|c| c.reply().ok());
        if window != root && name.is_some_and(|n| n.value == title) {
            return Some(window);
        }
        if let Some(tree) = conn.query_tree(window).ok().and_then(|c| c.reply().ok()) {
            queue.extend(tree.children);
        }
    }
    None
}

/// Words for a step of [`X11SessionWindow::watch`] that failed.
fn failed<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("watching the operator's hand ({what}): {e}")
}

/// The child of `root` that holds `window` (itself, or the window manager's frame around it);
/// `None` once the window is gone.
fn top_level(conn: &RustConnection, root: Window, window: Window) -> Option<Window> {
    let mut current = window;
    for _ in 0..16 {
        let tree = conn.query_tree(current).ok()?.reply().ok()?;
        if tree.parent == root {
            return Some(current);
        }
        current = tree.parent;
    }
    None
}
