//! The three seams a desktop backend implements: screens, windows and input; and the one a
//! session's own display adds: its window on the operator's desktop.
//!
//! No platform type appears in a signature, so a Windows or Wayland backend can slot in
//! beside the X11 one while the tool layer ([`crate::api`]) and its rules stay as they are.
//! Backends do mechanism only; policy (selectors, caps, densifying, the input lock, stop
//! checks between steps) lives in the tool layer.

use mcec_rules::{StopFlag, ToolError};

use crate::keys::Key;
use crate::types::{
    Captured, CursorImage, DisplayInfo, MouseButton, Point, Rect, ScrollDirection, WindowInfo,
};

/// Monitors and pixels.
pub trait Screens: Send + Sync {
    /// The monitors in the platform's order, the primary one marked.
    fn displays(&self) -> Result<Vec<DisplayInfo>, ToolError>;

    /// The pixels of `area`, which the caller has clipped to the desktop and checked against
    /// the capture caps. mcec's own windows (banner, prompt) are never in them: the backend
    /// fills their place from what lies beneath, or blanks it, and says where.
    fn capture(&self, area: Rect) -> Result<Captured, ToolError>;

    /// [`Screens::capture`] scaled down to `width`x`height` (never up). A backend that can
    /// scale the frame before converting it overrides this.
    fn capture_scaled(&self, area: Rect, width: u32, height: u32) -> Result<Captured, ToolError> {
        let shot = self.capture(area)?;
        Ok(Captured { image: crate::image::downscale(shot.image, width, height)?, ..shot })
    }

    /// The pointer's current image and place, when the platform can tell.
    fn cursor(&self) -> Result<Option<CursorImage>, ToolError> {
        Ok(None)
    }
}

/// One operation on a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowOp {
    Move(Point),
    Resize {
        width: u32,
        height: u32,
    },
    Minimize,
    Maximize,
    Restore,
    /// Raise and give the keyboard focus.
    Foreground,
}

/// Top-level windows.
pub trait WindowManager: Send + Sync {
    /// Every top-level client window, in stacking or client-list order.
    fn list_windows(&self) -> Result<Vec<WindowInfo>, ToolError>;

    /// Fresh facts about one window; `window-closed` when it no longer exists.
    fn window_info(&self, id: u64) -> Result<WindowInfo, ToolError>;

    /// Ask for `op`; returns once the request is sent and processed by the display server
    /// (a window manager may still be acting on it).
    fn window_op(&self, id: u64, op: WindowOp) -> Result<(), ToolError>;

    /// The process that started `pid`, when the platform still knows it (`None`: unknown):
    /// how `launch` tells a window of a process its program started.
    fn parent_process(&self, pid: u32) -> Option<u32>;
}

/// Synthetic input. Every call is attributable to the backend's injection device.
pub trait Injector: Send + Sync {
    /// Move the pointer to an absolute desktop position.
    fn pointer_move(&self, to: Point) -> Result<(), ToolError>;

    /// Where the pointer is now.
    fn pointer_position(&self) -> Result<Point, ToolError>;

    /// Press (`down`) or release a mouse button.
    fn button(&self, button: MouseButton, down: bool) -> Result<(), ToolError>;

    /// Turn the wheel one notch at the pointer.
    fn scroll(&self, direction: ScrollDirection) -> Result<(), ToolError>;

    /// Press or release one key. A character key missing from the keymap may be mapped
    /// temporarily. `bad-arguments` (field `keys`) when the key cannot be produced at all.
    /// A backend that has to wait before a press (X11 before a keymap change) asks `stop`
    /// after the wait and answers `emergency-stopped` without pressing.
    fn key(&self, key: Key, down: bool, stop: &StopFlag) -> Result<(), ToolError>;

    /// Type `text` (already checked for control characters), asking `stop` before every
    /// character. On stop it releases what it holds and answers `emergency-stopped`.
    fn type_text(&self, text: &str, stop: &StopFlag) -> Result<(), ToolError>;

    /// Return once the display server has processed every input event sent so far.
    fn settle(&self) -> Result<(), ToolError>;

    /// Release everything this injector holds down, plus mouse buttons 1-3 and every
    /// modifier key still down. Safe to call at any time, also from the stop path.
    fn release_all(&self) -> Result<(), ToolError>;
}

/// A whole desktop backend.
pub trait Backend: Screens + WindowManager + Injector {
    /// The display this backend talks to, for details (e.g. `:0`).
    fn display_name(&self) -> &str;

    /// Sets on `program`, before `launch` starts it, whatever it needs to open its windows on
    /// this desktop (X11: `DISPLAY`), so the tool layer starts programs the same way everywhere.
    fn prepare_program(&self, program: &mut std::process::Command);
}

/// A session's own display as the operator sees it: a window on their desktop, into which
/// they can reach with their own mouse and keyboard (issue 26). The tool layer makes the
/// agent's input wait while the operator uses it (`mcec_rules::operator_hand`).
pub trait SessionWindow: Send + Sync {
    /// When the operator's physical input was last seen in the window: their pointer in it
    /// (nothing covering it there) while they moved, clicked or typed. Injected input never
    /// counts. `None`: never seen.
    fn operator_last_seen(&self) -> Option<std::time::Instant>;

    /// Retitles the window (the client's name is known only after `initialize`).
    fn set_title(&self, title: &str);
}
