//! The X11 provenance source: XInput 2.2 raw events, classified by source device, plus a
//! RECORD watch on XTEST for the forged form (see `docs/x11-provenance.md`).
//!
//! It runs on its own thread with its own connection, so nothing the desktop tools do (a
//! slow capture, a grab) can delay it. Raw events arrive whatever window has focus and
//! whatever grab another client holds, and the focused application still gets the key: the
//! chord is watched, never grabbed. The thread exits cleanly when the display goes away and
//! reports it, and it never panics on a server error.
//!
//! What it cannot see, plainly: input injected below X (a uinput device, a kernel-level
//! injector) looks physical to X; remote operators (VNC, RDP, software KVMs) type through
//! XTEST and so can neither press nor re-arm the stop. Without RECORD on the server, the
//! forged XI1 form cannot be detected and the status says the stop is best effort. On a
//! Wayland session's X server (XWayland) it refuses to start at all (`session.rs`).

pub mod devices;
pub mod keys;
pub mod record;
pub mod session;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::Event;
use x11rb::protocol::xinput::{self, ConnectionExt as _, HierarchyMask, XIEventMask};
use x11rb::protocol::xproto::{
    ClientMessageEvent, ConnectionExt as _, CreateWindowAux, EventMask, Mapping, WindowClass,
};
use x11rb::rust_connection::RustConnection;

use devices::DeviceTable;
use keys::KeyTable;
use mcec_desktop::monitor::wayland::{WaylandSession, judge};
use mcec_desktop::monitor::{
    ClassifiedEvent, Coverage, Dispatcher, Input, MonitorError, MonitorHandle, MonitorSink, MonitorStatus,
    ProvenanceMonitor, StatusCell, Stopper,
};
use record::ForgedRecent;

const XI_ALL_DEVICES: u16 = 0;
const XI_ALL_MASTER_DEVICES: u16 = 1;

/// The X11 source for one display.
#[derive(Debug, Clone)]
pub struct X11Monitor {
    display: String,
    /// The display came from `$DISPLAY`, so the environment's Wayland signals count.
    from_env: bool,
}

impl X11Monitor {
    /// A monitor for `display` (e.g. `:0`), or `$DISPLAY` when `None`.
    pub fn new(display: Option<&str>) -> Result<X11Monitor, MonitorError> {
        let from_env = display.is_none();
        let display = match display {
            Some(d) => d.to_owned(),
            None => std::env::var("DISPLAY")
                .ok()
                .filter(|d| !d.is_empty())
                .ok_or_else(|| MonitorError::NoDisplay("DISPLAY is not set".into()))?,
        };
        Ok(X11Monitor { display, from_env })
    }

    /// Whether the display belongs to a Wayland session, where the stop cannot be armed.
    /// `start` refuses such a display by itself; this is for callers that do not arm.
    pub fn wayland_session(&self) -> Result<Option<WaylandSession>, MonitorError> {
        let (conn, screen) = RustConnection::connect(Some(&self.display))
            .map_err(|e| MonitorError::NoDisplay(format!("{}: {e}", self.display)))?;
        let root = root_of(&conn, screen)?;
        self.probe(&conn, root)
    }

    fn probe(&self, conn: &RustConnection, root: u32) -> Result<Option<WaylandSession>, MonitorError> {
        let mut signals =
            session::server_signals(conn, root).map_err(setup("checking for a Wayland session"))?;
        if self.from_env {
            session::env_signals(&mut signals);
        }
        Ok(judge(&signals))
    }
}

fn root_of(conn: &RustConnection, screen: usize) -> Result<u32, MonitorError> {
    conn.setup().roots.get(screen).map(|s| s.root).ok_or_else(|| MonitorError::Setup("no screen".into()))
}

fn setup<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> MonitorError {
    move |e| MonitorError::Setup(format!("{what}: {e}"))
}

/// What the monitor thread owns.
struct Session {
    conn: Arc<RustConnection>,
    xtest_atom: u32,
    devices: DeviceTable,
    keys: KeyTable,
    forged: ForgedRecent,
    dispatcher: Dispatcher,
    status: StatusCell,
    stopping: Arc<AtomicBool>,
}

fn load_keys(conn: &RustConnection) -> Result<KeyTable, MonitorError> {
    let s = conn.setup();
    let (min, max) = (s.min_keycode, s.max_keycode);
    let map = conn
        .get_keyboard_mapping(min, max.saturating_sub(min).saturating_add(1))
        .map_err(setup("keyboard mapping"))?
        .reply()
        .map_err(setup("keyboard mapping"))?;
    Ok(KeyTable::new(min, map.keysyms_per_keycode, &map.keysyms))
}

/// XInput 2.2 or a clear refusal: below it the source device of a raw event is undefined.
fn require_xinput_2_2(conn: &RustConnection) -> Result<(), MonitorError> {
    if conn.extension_information(xinput::X11_EXTENSION_NAME).map_err(setup("XInput"))?.is_none() {
        return Err(MonitorError::Unsupported("no XInput extension".into()));
    }
    let v = conn
        .xinput_xi_query_version(2, 2)
        .map_err(setup("XInput version"))?
        .reply()
        .map_err(setup("XInput version"))?;
    if (v.major_version, v.minor_version) < (2, 2) {
        return Err(MonitorError::Unsupported(format!(
            "XInput {}.{} (2.2 needed for source devices)",
            v.major_version, v.minor_version
        )));
    }
    Ok(())
}

/// Selects raw key and button events on `root` for the master devices (each event once, with
/// its source device) and hierarchy changes for all; returns the window the stopper wakes.
fn select_raw_events(conn: &RustConnection, root: u32) -> Result<u32, MonitorError> {
    // A window of our own to receive the wake-up message that stops the thread.
    let wake = conn.generate_id().map_err(setup("window id"))?;
    conn.create_window(0, wake, root, 0, 0, 1, 1, 0, WindowClass::INPUT_ONLY, 0, &CreateWindowAux::new())
        .map_err(setup("wake window"))?
        .check()
        .map_err(setup("wake window"))?;
    let raw = XIEventMask::RAW_KEY_PRESS
        | XIEventMask::RAW_KEY_RELEASE
        | XIEventMask::RAW_BUTTON_PRESS
        | XIEventMask::RAW_BUTTON_RELEASE;
    let masks = [
        xinput::EventMask { deviceid: XI_ALL_MASTER_DEVICES, mask: vec![raw] },
        xinput::EventMask { deviceid: XI_ALL_DEVICES, mask: vec![XIEventMask::HIERARCHY] },
    ];
    conn.xinput_xi_select_events(root, &masks)
        .map_err(setup("selecting raw events"))?
        .check()
        .map_err(setup("selecting raw events"))?;
    Ok(wake)
}

/// Stops the monitor thread (a flag, then a message to its wake window) and the RECORD watch.
fn stopper(
    conn: Arc<RustConnection>,
    wake: u32,
    stop_flag: Arc<AtomicBool>,
    record: Option<record::RecordWatch>,
) -> Stopper {
    Box::new(move || {
        stop_flag.store(true, Ordering::SeqCst);
        let msg = ClientMessageEvent::new(32, wake, 0u32, [0u32; 5]);
        let _ = conn.send_event(false, wake, EventMask::NO_EVENT, msg);
        let _ = conn.flush();
        if let Some(t) = record.and_then(record::RecordWatch::stop) {
            // Bounded: a wedged server must not hang the caller.
            let deadline = Instant::now() + Duration::from_secs(2);
            while !t.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            if t.is_finished() {
                let _ = t.join();
            }
        }
    })
}

impl ProvenanceMonitor for X11Monitor {
    fn start(self, sink: MonitorSink) -> Result<MonitorHandle, MonitorError> {
        let (conn, screen) = RustConnection::connect(Some(&self.display))
            .map_err(|e| MonitorError::NoDisplay(format!("{}: {e}", self.display)))?;
        let root = root_of(&conn, screen)?;
        if let Some(wayland) = self.probe(&conn, root)? {
            return Err(MonitorError::Wayland(wayland));
        }
        require_xinput_2_2(&conn)?;
        let wake = select_raw_events(&conn, root)?;
        // Devices are read after selecting, so a hierarchy change in between is not missed.
        let xtest_atom = DeviceTable::xtest_atom(&conn).map_err(setup("XTEST Device atom"))?;
        let devices = DeviceTable::load(&conn, xtest_atom).map_err(setup("listing devices"))?;
        let keys = load_keys(&conn)?;

        let stopping = Arc::new(AtomicBool::new(false));
        let forged = ForgedRecent::default();
        let status = StatusCell::default();
        let stats = sink.stats.clone();
        let (record, coverage) =
            match record::start(&self.display, sink.clone(), forged.clone(), Arc::clone(&stopping)) {
                Ok(w) => (Some(w), Coverage::Full),
                Err(c) => (None, c),
            };
        let conn = Arc::new(conn);
        let session = Session {
            conn: Arc::clone(&conn),
            xtest_atom,
            devices,
            keys,
            forged,
            dispatcher: Dispatcher::new(sink),
            status: status.clone(),
            stopping: Arc::clone(&stopping),
        };
        status.set(MonitorStatus::Running(coverage));
        let thread = match std::thread::Builder::new()
            .name("mcec-input-monitor".into())
            .spawn(move || session.run())
        {
            Ok(t) => t,
            Err(e) => {
                if let Some(t) = record.and_then(record::RecordWatch::stop) {
                    let _ = t.join();
                }
                return Err(MonitorError::Thread(e.to_string()));
            }
        };
        let stopper = stopper(conn, wake, Arc::clone(&stopping), record);
        Ok(MonitorHandle::new(status, stats, stopping, stopper, vec![thread]))
    }
}

impl Session {
    fn run(mut self) {
        loop {
            let event = match self.conn.wait_for_event() {
                Ok(e) => e,
                Err(e) => {
                    if !self.stopping.load(Ordering::SeqCst) {
                        let detail = format!("the X connection failed: {e}");
                        self.status.set(MonitorStatus::DisplayLost(detail.clone()));
                        self.dispatcher.sink().display_lost(detail);
                    }
                    return;
                }
            };
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            let started = Instant::now();
            match event {
                Event::XinputRawKeyPress(e) => self.key(e.detail, e.sourceid, e.time, true, started),
                Event::XinputRawKeyRelease(e) => self.key(e.detail, e.sourceid, e.time, false, started),
                Event::XinputRawButtonPress(e) => self.button(e.detail, e.sourceid, e.time, true, started),
                Event::XinputRawButtonRelease(e) => self.button(e.detail, e.sourceid, e.time, false, started),
                Event::XinputHierarchy(h) => {
                    for info in &h.infos {
                        if info.flags & HierarchyMask::SLAVE_REMOVED != 0u32.into()
                            || info.flags & HierarchyMask::DEVICE_DISABLED != 0u32.into()
                        {
                            self.dispatcher.device_removed(info.deviceid);
                        }
                    }
                    // On failure keep the old table; a dead connection ends the loop next time.
                    if let Ok(t) = DeviceTable::load(&*self.conn, self.xtest_atom) {
                        self.devices = t;
                    }
                }
                Event::MappingNotify(m) if m.request == Mapping::KEYBOARD => {
                    if let Ok(k) = load_keys(&self.conn) {
                        self.keys = k;
                    }
                }
                _ => {}
            }
        }
    }

    /// (physical, forged): an XTEST device's event is injected; a physical device's event that
    /// matches a recent forged request is forged.
    fn classify(&self, detail: u32, source: u16, now: Instant) -> (bool, bool) {
        if self.devices.injected(source) {
            return (false, false);
        }
        let forged = self.forged.matches(detail, now);
        (!forged, forged)
    }

    fn key(&mut self, code: u32, source: u16, time: u32, down: bool, at: Instant) {
        let (physical, forged) = self.classify(code, source, at);
        let key = self.keys.key(code);
        self.dispatcher.input(ClassifiedEvent {
            input: Input::Key { key, code },
            down,
            physical,
            forged,
            source_device: source,
            time,
            at,
        });
        self.dispatcher.account(at);
        self.dispatcher.announce();
    }

    fn button(&mut self, button: u32, source: u16, time: u32, down: bool, at: Instant) {
        let (physical, forged) = self.classify(button, source, at);
        self.dispatcher.input(ClassifiedEvent {
            input: Input::Button(button),
            down,
            physical,
            forged,
            source_device: source,
            time,
            at,
        });
        self.dispatcher.account(at);
    }
}
