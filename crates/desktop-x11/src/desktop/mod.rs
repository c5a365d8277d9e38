//! The X11 desktop: one pure-Rust x11rb connection behind the [`mcec_desktop::seams`] traits.
//!
//! Input goes through XTEST `FakeInput` with core
//! event types only, so everything mcec injects is attributed to the server's XTEST device
//! (which is what the emergency-stop monitor relies on to tell it from the operator).
//! Capture uses MIT-SHM (a segment the server creates and this process maps: the one `unsafe`,
//! in `capture.rs`) when the server offers MIT-SHM 1.2, and core `GetImage` otherwise.

mod atoms;
mod capture;
mod dpi;
mod input;
mod keymap;
mod last_resort;
pub use last_resort::release_everything_down;
mod own_windows;
pub use own_windows::own_window_rects;
mod process;
mod root_background;
mod windows;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mcec_rules::{ErrorCode, ToolError};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::errors::{ConnectionError, ReplyError};
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{ConnectionExt as _, Mapping};
use x11rb::protocol::{shm, xtest};
use x11rb::rust_connection::RustConnection;

use mcec_desktop::seams::Backend;

use atoms::Atoms;
use capture::{PixelFormat, ShmState};
use input::InputState;
use keymap::KeyState;
use windows::NoWmState;

/// A live connection to one X display, implementing every desktop seam.
pub struct X11Desktop {
    conn: Arc<RustConnection>,
    display: String,
    root: u32,
    atoms: Atoms,
    pixels: PixelFormat,
    has_xtest: bool,
    has_randr: bool,
    /// The monitors as RandR last said and when, until RandR reports a change or
    /// [`capture::MONITORS_KEPT`] passes (`None`: ask again). Without RandR change events
    /// nothing is kept.
    monitors: Mutex<Option<(std::time::Instant, Vec<mcec_desktop::types::DisplayInfo>)>>,
    randr_events: bool,
    /// A keymap change was seen among the connection's events.
    keymap_stale: AtomicBool,
    /// XKB is there to tell which layout (group) is active.
    has_xkb: bool,
    /// Composite redirects the top-levels, so mcec's windows can be left out of captures.
    composite: bool,
    shm: Mutex<ShmState>,
    keys: Arc<Mutex<KeyState>>,
    input: Mutex<InputState>,
    no_wm: Mutex<NoWmState>,
    /// Names of the atoms RandR names monitors with.
    atom_names: Mutex<HashMap<u32, String>>,
    /// What a program `launch` starts gets besides `DISPLAY`.
    programs: ProgramSetup,
}

/// What a program started on this display needs besides `DISPLAY`: on a session's own display
/// its authority file and D-Bus session bus, and the process group ended with that display.
#[derive(Debug, Clone, Default)]
pub struct ProgramSetup {
    /// Variables set in the program's environment.
    pub set: Vec<(String, String)>,
    /// Variables removed from it (they would point at the operator's desktop).
    pub remove: Vec<String>,
    /// The process group the program joins.
    pub process_group: Option<u32>,
}

impl X11Desktop {
    /// Connect to `display` (e.g. `:0`), or to `$DISPLAY` when `None`.
    ///
    /// Fails with `no-desktop` naming the display tried.
    pub fn connect(display: Option<&str>) -> Result<X11Desktop, ToolError> {
        let name = match display {
            Some(d) => d.to_string(),
            None => match std::env::var("DISPLAY") {
                Ok(d) if !d.is_empty() => d,
                _ => {
                    return Err(ToolError::new(
                        ErrorCode::NoDesktop,
                        "No X display to use: DISPLAY is not set.",
                    ));
                }
            },
        };
        let (conn, screen_num) = RustConnection::connect(Some(&name)).map_err(|e| {
            tracing::warn!("connecting to X display {name}: {e}");
            let detail = match e {
                x11rb::errors::ConnectError::SetupAuthenticate(_)
                | x11rb::errors::ConnectError::SetupFailed(_) => {
                    let authority = std::env::var("XAUTHORITY").unwrap_or_else(|_| "~/.Xauthority".into());
                    format!(
                        "The X display `{name}` refused mcec's connection: the X authority is the problem \
                         (mcec used {authority}); set XAUTHORITY to the desktop session's authority file."
                    )
                }
                _ => format!(
                    "Could not reach the X display `{name}` (DISPLAY); is an X server running there? \
                     mcec never falls back to another display."
                ),
            };
            ToolError::new(ErrorCode::NoDesktop, detail)
        })?;
        Self::from_connection(conn, screen_num, name)
    }

    fn from_connection(
        conn: RustConnection,
        screen_num: usize,
        display: String,
    ) -> Result<X11Desktop, ToolError> {
        let no_desktop = |what: &str| {
            ToolError::new(ErrorCode::NoDesktop, format!("The X display `{display}` answered but {what}."))
        };
        let setup = conn.setup();
        let screen = setup.roots.get(screen_num).ok_or_else(|| no_desktop("has no such screen"))?;
        let root = screen.root;
        let pixels = PixelFormat::from_setup(setup, screen)
            .ok_or_else(|| no_desktop("uses a pixel format mcec cannot read"))?;
        let atoms = Atoms::new(&conn)
            .map_err(|_| no_desktop("refused a request"))?
            .reply()
            .map_err(|_| no_desktop("refused a request"))?;
        let has_xtest = conn.extension_information(xtest::X11_EXTENSION_NAME).ok().flatten().is_some();
        let has_randr =
            conn.extension_information(x11rb::protocol::randr::X11_EXTENSION_NAME).ok().flatten().is_some();
        let randr_events = has_randr && capture::watch_monitors(&conn, root);
        let shm_ok = shm_version_ok(&conn);
        let composite = own_windows::redirect_top_levels(&conn, root);
        let has_xkb = xkb_ok(&conn);
        if has_xkb {
            keymap::watch_changes(&conn);
        }
        let keys = KeyState::load(&conn).map_err(|_| no_desktop("did not give its keymap"))?;
        Ok(X11Desktop {
            conn: Arc::new(conn),
            display,
            root,
            atoms,
            pixels,
            has_xtest,
            has_randr,
            monitors: Mutex::new(None),
            randr_events,
            keymap_stale: AtomicBool::new(false),
            composite,
            has_xkb,
            shm: Mutex::new(ShmState::new(shm_ok)),
            keys: Arc::new(Mutex::new(keys)),
            input: Mutex::new(InputState::default()),
            no_wm: Mutex::new(NoWmState::default()),
            atom_names: Mutex::new(HashMap::new()),
            programs: ProgramSetup::default(),
        })
    }

    /// The same desktop, starting programs with `programs`.
    pub fn with_programs(mut self, programs: ProgramSetup) -> X11Desktop {
        self.programs = programs;
        self
    }

    /// Whether captures currently go through MIT-SHM.
    pub fn shm_enabled(&self) -> bool {
        lock(&self.shm).enabled()
    }

    /// Turn MIT-SHM capture off (plain `GetImage`) or back on where the server offers it.
    /// Meant for tests and benchmarks that compare both paths.
    pub fn set_shm_enabled(&self, on: bool) {
        let offered = shm_version_ok(&self.conn);
        lock(&self.shm).set_enabled(on && offered, &self.conn);
    }

    /// Read every event already queued on the connection (no round trip) and drop what they
    /// make stale: the keymap cache, the monitor list.
    pub(crate) fn pump_events(&self) -> Result<(), ToolError> {
        while let Some(ev) = self.conn.poll_for_event().map_err(conn_err)? {
            match ev {
                Event::MappingNotify(m) if m.request != Mapping::POINTER => {
                    self.keymap_stale.store(true, Ordering::SeqCst);
                }
                Event::XkbMapNotify(_) | Event::XkbNewKeyboardNotify(_) => {
                    self.keymap_stale.store(true, Ordering::SeqCst);
                }
                Event::RandrScreenChangeNotify(_) | Event::RandrNotify(_) => *lock(&self.monitors) = None,
                _ => {}
            }
        }
        Ok(())
    }

    /// Whether the X server offers XTEST (input needs it).
    pub fn has_xtest(&self) -> bool {
        self.has_xtest
    }
}

impl Backend for X11Desktop {
    fn display_name(&self) -> &str {
        &self.display
    }

    /// A program finds the X display by `DISPLAY`: it gets this one's, whatever the
    /// environment mcec was started with says.
    fn prepare_program(&self, program: &mut std::process::Command) {
        use std::os::unix::process::CommandExt as _;
        program.env("DISPLAY", &self.display);
        for name in &self.programs.remove {
            program.env_remove(name);
        }
        program.envs(self.programs.set.iter().map(|(k, v)| (k, v)));
        if let Some(group) = self.programs.process_group {
            program.process_group(group as i32);
        }
    }
}

impl Drop for X11Desktop {
    fn drop(&mut self) {
        // Leave nothing held and no keycode remapped behind us.
        let _ = mcec_desktop::seams::Injector::release_all(self);
        keymap::restore_now(&self.conn, &self.keys);
        lock(&self.shm).detach(&self.conn);
        let _ = self.conn.flush();
    }
}

/// Whether XKB answers (it must be told the client's version before any other request).
fn xkb_ok(conn: &RustConnection) -> bool {
    use x11rb::protocol::xkb::ConnectionExt as _;
    if conn.extension_information(x11rb::protocol::xkb::X11_EXTENSION_NAME).ok().flatten().is_none() {
        return false;
    }
    conn.xkb_use_extension(1, 0).ok().and_then(|c| c.reply().ok()).is_some_and(|r| r.supported)
}

fn shm_version_ok(conn: &RustConnection) -> bool {
    if conn.extension_information(shm::X11_EXTENSION_NAME).ok().flatten().is_none() {
        return false;
    }
    match shm::query_version(conn).map(|c| c.reply()) {
        Ok(Ok(v)) => (v.major_version, v.minor_version) >= (1, 2),
        _ => false,
    }
}

/// Lock a mutex, recovering the data if a panicking thread poisoned it (the state stays
/// usable: it is only caches and bookkeeping).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The agent-facing error for a broken connection; the cause goes to the log.
pub(crate) fn conn_err(e: ConnectionError) -> ToolError {
    tracing::error!("X connection failed: {e}");
    ToolError::new(ErrorCode::NoDesktop, "The connection to the X display was lost.")
}

/// The agent-facing error for a failed request about window `id`: a `BadWindow` or
/// `BadDrawable` means the window is gone.
pub(crate) fn window_err(id: u32, e: ReplyError) -> ToolError {
    match e {
        ReplyError::X11Error(x)
            if matches!(
                x.error_kind,
                x11rb::protocol::ErrorKind::Window
                    | x11rb::protocol::ErrorKind::Drawable
                    | x11rb::protocol::ErrorKind::Match
            ) =>
        {
            ToolError::new(
                ErrorCode::WindowClosed,
                format!("Window {id} closed (or was destroyed) while mcec was using it."),
            )
        }
        ReplyError::X11Error(x) => {
            tracing::error!("X request about window {id} failed: {x:?}");
            ToolError::new(ErrorCode::Internal, "The X server refused a request.")
        }
        ReplyError::ConnectionError(c) => conn_err(c),
    }
}

/// The agent-facing error for a failed request not about one window.
pub(crate) fn reply_err(e: ReplyError) -> ToolError {
    match e {
        ReplyError::ConnectionError(c) => conn_err(c),
        ReplyError::X11Error(x) => {
            tracing::error!("X request failed: {x:?}");
            ToolError::new(ErrorCode::Internal, "The X server refused a request.")
        }
    }
}

/// Make sure the X server has processed every request so far (one round trip).
pub(crate) fn round_trip(conn: &RustConnection) -> Result<(), ToolError> {
    conn.get_input_focus().map_err(conn_err)?.reply().map_err(reply_err)?;
    Ok(())
}
