//! `WlrDesktop`: the desktop seams on a wlroots compositor. Pixels come from
//! `wlr-screencopy` (mcec's own windows painted black in them: no client can read what lies
//! beneath another's window), input from the one virtual keyboard and pointer (`input.rs`).
//! Screens and windows come from sway's IPC on sway (`screens.rs`, `windows.rs`), and on any
//! other compositor (or sway without `SWAYSOCK`) from what every client is told: `wl_output`
//! and xdg-output for the layout and `wlr-foreign-toplevel-management` for the windows (`toplevels.rs`),
//! which has no window geometry.

mod input;
mod screens;
mod toplevels;
mod windows;

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use mcec_desktop::seams::Backend;
use mcec_rules::{ErrorCode, ToolError};

use crate::ipc::Ipc;
use crate::toplevel::ForeignToplevels;
use crate::wl::Wl;

/// Finds where mcec's own windows are in the layout by other means (their X11 geometry on the
/// compositor's XWayland), for a source whose window list has no geometry.
pub type OwnWindowLocator = Box<dyn Fn() -> Result<Vec<mcec_desktop::types::Rect>, String> + Send + Sync>;

/// Where the layout and the windows come from.
enum Source {
    /// sway's IPC: outputs with their names, windows with their geometry.
    Sway(Mutex<Ipc>),
    /// The protocols every client gets, on the compositor named `compositor`.
    Protocols {
        compositor: String,
        /// The window list, or why the compositor offers none.
        toplevels: toplevels::Lister,
        /// Where mcec's own windows are, when the platform layer knows a way.
        locator: Option<OwnWindowLocator>,
    },
}

/// A wlroots compositor's session at `$WAYLAND_DISPLAY` (with sway's IPC at `$SWAYSOCK` when
/// it is sway's).
pub struct WlrDesktop {
    source: Source,
    wl: Mutex<Wl>,
    input: Mutex<input::Held>,
    display: String,
}

impl std::fmt::Debug for WlrDesktop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WlrDesktop").field("display", &self.display).finish_non_exhaustive()
    }
}

impl WlrDesktop {
    /// Connects to the sway of this process's environment (`$SWAYSOCK`, `$WAYLAND_DISPLAY`
    /// under `$XDG_RUNTIME_DIR`); `no-desktop` when either is missing.
    pub fn connect() -> Result<WlrDesktop, ToolError> {
        let no_desktop = |detail: String| ToolError::new(ErrorCode::NoDesktop, detail);
        let swaysock = std::env::var_os("SWAYSOCK")
            .filter(|v| !v.is_empty())
            .ok_or_else(|| no_desktop("SWAYSOCK is not set".into()))?;
        let socket = crate::choice::wayland_socket().map_err(no_desktop)?;
        WlrDesktop::connect_to(Path::new(&swaysock), &socket)
    }

    /// Connects to sway's IPC at `swaysock` and to the Wayland socket `wayland`.
    pub fn connect_to(swaysock: &Path, wayland: &Path) -> Result<WlrDesktop, ToolError> {
        let no_desktop = |detail: String| ToolError::new(ErrorCode::NoDesktop, detail);
        let ipc = Ipc::connect(swaysock).map_err(|e| no_desktop(e.to_string()))?;
        let wl = Wl::connect(wayland).map_err(no_desktop)?;
        Ok(WlrDesktop::new(Source::Sway(Mutex::new(ipc)), wl, wayland))
    }

    /// Connects to the compositor `compositor` (its name, for answers) at the Wayland socket
    /// `wayland` without sway's IPC: the layout from `wl_output`, the windows from
    /// `wlr-foreign-toplevel-management` when offered (else `windows` answers `unavailable`
    /// naming the protocol), input where the virtual keyboard and pointer are offered.
    pub fn connect_without_ipc(wayland: &Path, compositor: &str) -> Result<WlrDesktop, ToolError> {
        let wl = Wl::connect_observing(wayland).map_err(|e| ToolError::new(ErrorCode::NoDesktop, e))?;
        let toplevels = match ForeignToplevels::connect(wayland) {
            Ok(lister) => Ok(Mutex::new(lister)),
            // Not offered: window calls answer `unavailable` saying so; no compositor at all
            // is no desktop.
            Err(e) if e.code == ErrorCode::Unavailable => Err(e),
            Err(e) => return Err(e),
        };
        let source = Source::Protocols { compositor: compositor.to_string(), toplevels, locator: None };
        Ok(WlrDesktop::new(source, wl, wayland))
    }

    /// Lets a capture without sway's IPC blank only mcec's own windows, located by `locator`,
    /// instead of every output they are on (`toplevels.rs` says when it is believed).
    pub fn locate_own_windows_with(mut self, locator: OwnWindowLocator) -> WlrDesktop {
        if let Source::Protocols { locator: slot, .. } = &mut self.source {
            *slot = Some(locator);
        }
        self
    }

    fn new(source: Source, wl: Wl, wayland: &Path) -> WlrDesktop {
        let display = wayland.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        WlrDesktop { source, wl: Mutex::new(wl), input: Mutex::new(input::Held::default()), display }
    }

    /// sway's IPC; only the sway source calls it.
    fn ipc(&self) -> Result<MutexGuard<'_, Ipc>, ToolError> {
        match &self.source {
            Source::Sway(ipc) => Ok(ipc.lock().unwrap_or_else(PoisonError::into_inner)),
            Source::Protocols { compositor, .. } => {
                Err(ToolError::new(ErrorCode::Unavailable, format!("`{compositor}` offers no sway IPC")))
            }
        }
    }

    fn wl(&self) -> MutexGuard<'_, Wl> {
        self.wl.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn held(&self) -> MutexGuard<'_, input::Held> {
        self.input.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One IPC request; a failure is the desktop gone.
    fn request(&self, message: crate::ipc::Message, payload: &str) -> Result<serde_json::Value, ToolError> {
        self.ipc()?.request(message, payload).map_err(|e| ToolError::new(ErrorCode::NoDesktop, e.to_string()))
    }
}

/// A failure on the Wayland connection.
fn wl_err(detail: String) -> ToolError {
    ToolError::new(ErrorCode::Unavailable, detail)
}

impl Backend for WlrDesktop {
    fn display_name(&self) -> &str {
        &self.display
    }

    fn prepare_program(&self, program: &mut std::process::Command) {
        for name in ["WAYLAND_DISPLAY", "SWAYSOCK", "XDG_RUNTIME_DIR"] {
            if let Some(v) = std::env::var_os(name) {
                program.env(name, v);
            }
        }
    }
}
