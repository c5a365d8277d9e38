//! `SwayDesktop`: the desktop seams on sway. Screens and windows come from sway's IPC
//! (`screens.rs`, `windows.rs`), pixels from `wlr-screencopy` (mcec's own windows painted
//! black in them: no client can read what lies beneath another's window), input from the one
//! virtual keyboard and pointer (`input.rs`).

mod input;
mod screens;
mod windows;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use mcec_desktop::seams::Backend;
use mcec_rules::{ErrorCode, ToolError};

use crate::ipc::Ipc;
use crate::wl::Wl;

/// The sway session at `$WAYLAND_DISPLAY` and `$SWAYSOCK`.
pub struct SwayDesktop {
    ipc: Mutex<Ipc>,
    wl: Mutex<Wl>,
    input: Mutex<input::Held>,
    display: String,
}

impl std::fmt::Debug for SwayDesktop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwayDesktop").field("display", &self.display).finish_non_exhaustive()
    }
}

impl SwayDesktop {
    /// Connects to the sway of this process's environment (`$SWAYSOCK`, `$WAYLAND_DISPLAY`
    /// under `$XDG_RUNTIME_DIR`); `no-desktop` when either is missing.
    pub fn connect() -> Result<SwayDesktop, ToolError> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let missing = |name: &str| ToolError::new(ErrorCode::NoDesktop, format!("{name} is not set"));
        let swaysock = var("SWAYSOCK").ok_or_else(|| missing("SWAYSOCK"))?;
        let display = var("WAYLAND_DISPLAY").ok_or_else(|| missing("WAYLAND_DISPLAY"))?;
        let socket = if display.is_absolute() {
            display.clone()
        } else {
            var("XDG_RUNTIME_DIR").ok_or_else(|| missing("XDG_RUNTIME_DIR"))?.join(&display)
        };
        SwayDesktop::connect_to(&swaysock, &socket)
    }

    /// Connects to sway's IPC at `swaysock` and to the Wayland socket `wayland`.
    pub fn connect_to(swaysock: &Path, wayland: &Path) -> Result<SwayDesktop, ToolError> {
        let no_desktop = |detail: String| ToolError::new(ErrorCode::NoDesktop, detail);
        let ipc = Ipc::connect(swaysock).map_err(|e| no_desktop(e.to_string()))?;
        let wl = Wl::connect(wayland).map_err(no_desktop)?;
        let display = wayland.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(SwayDesktop {
            ipc: Mutex::new(ipc),
            wl: Mutex::new(wl),
            input: Mutex::new(input::Held::default()),
            display,
        })
    }

    fn ipc(&self) -> MutexGuard<'_, Ipc> {
        self.ipc.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wl(&self) -> MutexGuard<'_, Wl> {
        self.wl.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn held(&self) -> MutexGuard<'_, input::Held> {
        self.input.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One IPC request; a failure is the desktop gone.
    fn request(&self, message: crate::ipc::Message, payload: &str) -> Result<serde_json::Value, ToolError> {
        self.ipc().request(message, payload).map_err(|e| ToolError::new(ErrorCode::NoDesktop, e.to_string()))
    }
}

/// A failure on the Wayland connection.
fn wl_err(detail: String) -> ToolError {
    ToolError::new(ErrorCode::Unavailable, detail)
}

impl Backend for SwayDesktop {
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
