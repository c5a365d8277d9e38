//! The Windows desktop backend: the [`mcec_desktop::seams`] traits on Win32.
//!
//! Screens come from `EnumDisplayMonitors`, pixels from DXGI desktop duplication where Windows
//! has it and a GDI `BitBlt` of the screen where not, windows
//! from `EnumWindows`, input from `SendInput` with every event marked as mcec's
//! (`dwExtraInfo`, see [`crate::provenance`]), so the stop's hook sees it as injected and can
//! never take it for the operator. The process is made per-monitor DPI aware at connect, so
//! every coordinate here is a physical pixel, as on X11. Policy (selectors, caps, the input
//! lock, stop checks) stays in the tool layer.

#![allow(unsafe_code)]

mod capture;
pub mod clipboard;
mod dxgi;
mod input;
mod process;
mod screens;
mod windows;

use std::sync::{Mutex, MutexGuard};

use mcec_desktop::seams::Backend;
use mcec_rules::{ErrorCode, ToolError};
use windows_sys::Win32::Foundation::GetLastError;
use windows_sys::Win32::System::LibraryLoader::{GetProcAddress, LoadLibraryW};
use windows_sys::Win32::UI::WindowsAndMessaging::GetDesktopWindow;

use crate::inject::InjectError;
use input::Held;

/// The name `display_name` reports.
const DESKTOP_NAME: &str = "windows";

/// The interactive desktop of this session, implementing every desktop seam.
pub struct WindowsDesktop {
    held: Mutex<Held>,
    dxgi: dxgi::Duplicator,
}

impl WindowsDesktop {
    /// Connects to the desktop this process runs on: `no-desktop` when there is none (a
    /// service session without an interactive desktop).
    pub fn connect() -> Result<WindowsDesktop, ToolError> {
        set_dpi_aware();
        // SAFETY: plain Win32 call without arguments.
        if unsafe { GetDesktopWindow() }.is_null() {
            return Err(ToolError::new(
                ErrorCode::NoDesktop,
                "This process has no Windows desktop to act on.",
            ));
        }
        Ok(WindowsDesktop { held: Mutex::new(Held::default()), dxgi: dxgi::Duplicator::new() })
    }

    fn held(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Backend for WindowsDesktop {
    fn display_name(&self) -> &str {
        DESKTOP_NAME
    }

    /// A program started from this session opens its windows on this session's desktop:
    /// there is nothing to tell it.
    fn prepare_program(&self, _program: &mut std::process::Command) {}
}

impl Drop for WindowsDesktop {
    fn drop(&mut self) {
        let _ = mcec_desktop::seams::Injector::release_all(self);
    }
}

/// Per-monitor DPI awareness (v2), looked up at run time: Windows before 10 1703 and Wine
/// builds without it keep the system default, and coordinates are then logical pixels.
fn set_dpi_aware() {
    const PER_MONITOR_AWARE_V2: isize = -4;
    let user32: Vec<u16> = "user32.dll\0".encode_utf16().collect();
    // SAFETY: the names are NUL-terminated; the pointer is called with the documented
    // signature of SetProcessDpiAwarenessContext (a context handle in, BOOL out).
    unsafe {
        let module = LoadLibraryW(user32.as_ptr());
        if module.is_null() {
            return;
        }
        if let Some(f) = GetProcAddress(module, c"SetProcessDpiAwarenessContext".as_ptr().cast()) {
            let set: unsafe extern "system" fn(isize) -> i32 = std::mem::transmute(f);
            set(PER_MONITOR_AWARE_V2);
        }
    }
}

/// The agent-facing error when `SendInput` was refused (UIPI, a locked or secure desktop).
fn inject_err(e: InjectError) -> ToolError {
    tracing::warn!("SendInput: {e}");
    ToolError::new(
        ErrorCode::Unavailable,
        "Windows refused the input (a higher-integrity window or a locked desktop has it).",
    )
}

/// The agent-facing error for a failed Win32 call; the code goes to the log.
fn win_err(what: &str) -> ToolError {
    // SAFETY: plain Win32 call.
    let code = unsafe { GetLastError() };
    tracing::error!("{what} failed: error {code}");
    ToolError::new(ErrorCode::Internal, format!("Windows refused a request ({what})."))
}
