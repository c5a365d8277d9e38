//! Plain geometry and result types shared by every backend and by the tool layer.
//!
//! Nothing here knows X11: a Windows or Wayland backend speaks the same types. Everything an
//! agent sees serialises with camelCase names.

use mcec_rules::ToolError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A pixel position in virtual-desktop coordinates (or window-relative where a tool says so).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Point {
    /// Pixels from the left edge.
    pub x: i32,
    /// Pixels from the top edge.
    pub y: i32,
}

impl Point {
    pub const fn new(x: i32, y: i32) -> Self {
        Point { x, y }
    }
}

/// An axis-aligned rectangle; `width` and `height` are never negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    pub const fn new(x: i32, y: i32, width: u32, height: u32) -> Self {
        Rect { x, y, width, height }
    }

    /// One past the right edge, widened so it cannot overflow.
    pub fn right(&self) -> i64 {
        i64::from(self.x) + i64::from(self.width)
    }

    /// One past the bottom edge.
    pub fn bottom(&self) -> i64 {
        i64::from(self.y) + i64::from(self.height)
    }

    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }

    pub fn contains(&self, p: Point) -> bool {
        i64::from(p.x) >= i64::from(self.x)
            && i64::from(p.x) < self.right()
            && i64::from(p.y) >= i64::from(self.y)
            && i64::from(p.y) < self.bottom()
    }

    /// The overlap of two rectangles, or `None` when they do not overlap.
    pub fn intersect(&self, other: &Rect) -> Option<Rect> {
        let left = i64::from(self.x).max(i64::from(other.x));
        let top = i64::from(self.y).max(i64::from(other.y));
        let right = self.right().min(other.right());
        let bottom = self.bottom().min(other.bottom());
        if right <= left || bottom <= top {
            return None;
        }
        Some(Rect {
            x: left as i32,
            y: top as i32,
            width: (right - left) as u32,
            height: (bottom - top) as u32,
        })
    }

    /// The smallest rectangle holding both.
    pub fn union(&self, other: &Rect) -> Rect {
        let left = i64::from(self.x).min(i64::from(other.x));
        let top = i64::from(self.y).min(i64::from(other.y));
        let right = self.right().max(other.right());
        let bottom = self.bottom().max(other.bottom());
        Rect { x: left as i32, y: top as i32, width: (right - left) as u32, height: (bottom - top) as u32 }
    }

    pub fn center(&self) -> Point {
        Point::new(
            (i64::from(self.x) + i64::from(self.width) / 2) as i32,
            (i64::from(self.y) + i64::from(self.height) / 2) as i32,
        )
    }
}

/// One monitor.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisplayInfo {
    /// Position in the list, 0-based; stable while the layout does not change.
    pub index: u32,
    /// The output's name (e.g. `HDMI-1`, `screen`).
    pub name: String,
    pub primary: bool,
    /// Where the monitor lies on the virtual desktop.
    pub bounds: Rect,
    /// How the desktop scales what it draws on this monitor.
    #[serde(flatten)]
    pub dpi: Dpi,
}

/// The dots per inch a desktop draws at on one monitor, and where that figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Dpi {
    /// The DPI programs draw at on this monitor (96 is 100 %).
    pub dpi: u32,
    /// `dpi / 96`: how many pixels one 96-DPI pixel of a program's design takes.
    pub scale: f64,
    /// Where `dpi` comes from.
    pub dpi_source: DpiSource,
    /// The panel's own density from its physical size, when the platform reports a plausible
    /// one; it can differ from `dpi`, which is what programs actually draw at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_dpi: Option<u32>,
}

/// Where a monitor's [`Dpi`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DpiSource {
    /// The platform's per-monitor setting (Windows: `GetDpiForMonitor`, effective DPI).
    Monitor,
    /// One setting for the whole desktop (Windows: the system DPI, when the per-monitor call
    /// fails).
    System,
    /// The X resource `Xft.dpi`, which the desktop sets for every monitor and GTK and Qt
    /// draw at.
    Xft,
    /// Nothing said: programs draw at 96.
    Assumed,
}

impl Dpi {
    /// The DPI every program assumes when nothing is set.
    pub const BASE: u32 = 96;

    pub fn new(dpi: u32, dpi_source: DpiSource, physical_dpi: Option<u32>) -> Dpi {
        Dpi { dpi, scale: f64::from(dpi) / f64::from(Self::BASE), dpi_source, physical_dpi }
    }

    /// 96 DPI, nothing known.
    pub fn assumed() -> Dpi {
        Dpi::new(Self::BASE, DpiSource::Assumed, None)
    }
}

/// The answer of `displays`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisplaysResult {
    pub displays: Vec<DisplayInfo>,
    /// The bounding box of all monitors: the coordinate space `at`, `from`, `to` live in.
    pub virtual_bounds: Rect,
}

/// One top-level window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WindowInfo {
    /// The platform window id (on X11 the client window's XID); usable as `handle`.
    pub id: u64,
    pub title: String,
    /// The window class (WM_CLASS class part on X11), e.g. `XTerm`.
    pub class_name: String,
    /// The instance name (WM_CLASS instance part), e.g. `xterm`.
    pub instance: String,
    /// Owning process id when the window advertises one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The owning process's short name (`/proc/<pid>/comm` on Linux).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
    /// Outer position and size on the virtual desktop; absent where the platform gives
    /// clients no window geometry (`wlr-foreign-toplevel-management`), with the reason in
    /// `bounds_unavailable`. Every X11, Windows and sway window has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Rect>,
    /// Why `bounds` is absent (names the protocol's limit); absent whenever `bounds` is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds_unavailable: Option<String>,
    /// True for the window that has the keyboard focus.
    pub foreground: bool,
    /// True when the window is minimised (iconic or hidden).
    pub minimized: bool,
}

impl WindowInfo {
    /// Whether this is one of mcec's own windows (banner, prompts, host, settings), which no
    /// tool lists or targets.
    pub fn is_mcecs_own(&self) -> bool {
        mcec_rules::own_windows::is_own_window(
            &self.class_name,
            &self.instance,
            self.process.as_deref(),
            self.pid,
        )
    }

    /// The window's position and size, or `unavailable` naming why the platform cannot tell
    /// (what window capture, window-relative points and move/resize checks answer there).
    pub fn geometry(&self) -> Result<Rect, ToolError> {
        self.bounds.ok_or_else(|| {
            let why = self.bounds_unavailable.as_deref().unwrap_or("the platform does not say");
            ToolError::new(
                mcec_rules::ErrorCode::Unavailable,
                format!("Window {} has no known position or size: {why}.", self.id),
            )
        })
    }
}

/// Which way one wheel notch turns (X11 buttons 4, 5, 6 and 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ScrollDirection {
    Up,
    Down,
    Left,
    Right,
}

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MouseButton {
    #[default]
    Left,
    Right,
    Middle,
}

/// Captured pixels, 8-bit RGB, rows top to bottom with no padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RgbImage {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

/// What a capture shows: the pixels, where mcec's own windows were left out of them, and how
/// the backend read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub image: RgbImage,
    pub left_out: Option<LeftOut>,
    pub via: CaptureVia,
}

/// How a backend read a capture's pixels: each backend has a fast path and a fallback, and the
/// answer says which one served the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CaptureVia {
    /// X11, the MIT-SHM extension (a shared memory segment).
    Xshm,
    /// X11, plain `GetImage` over the connection.
    Getimage,
    /// Windows, DXGI desktop duplication.
    Dxgi,
    /// Windows, a GDI `BitBlt` of the screen.
    Gdi,
    /// Wayland (wlroots), the `wlr-screencopy` protocol into a shared-memory buffer.
    Screencopy,
}

/// Where a capture left out mcec's own windows (banner, prompt, host window), which the
/// operator sees and the agent never does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LeftOut {
    /// The desktop rectangles mcec's windows covered.
    pub areas: Vec<Rect>,
    pub how: LeftOutHow,
}

/// How the pixels under mcec's windows were filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LeftOutHow {
    /// From the windows beneath (X Composite): the image shows what the application drew.
    Recomposed,
    /// From the windows beneath, but where no window lies beneath the desktop's background
    /// (the wallpaper) could not be read and is painted black.
    RecomposedOverBlack,
    /// Painted black: the display cannot tell what lies beneath (no X Composite).
    Blanked,
}

/// The pointer's image, as the display server draws it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CursorImage {
    /// Where the image's top-left corner lies on the desktop (the pointer minus the hot spot).
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    /// Premultiplied ARGB, one `u32` a pixel, row by row.
    pub argb: Vec<u32>,
}

impl RgbImage {
    /// The pixel at (x, y) as `[r, g, b]`, or `None` outside the image.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = (y as usize * self.width as usize + x as usize) * 3;
        Some([self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rect_geometry() {
        let a = Rect::new(0, 0, 100, 50);
        let b = Rect::new(50, 25, 100, 100);
        assert_eq!(a.intersect(&b), Some(Rect::new(50, 25, 50, 25)));
        assert_eq!(a.union(&b), Rect::new(0, 0, 150, 125));
        assert!(a.contains(Point::new(99, 49)));
        assert!(!a.contains(Point::new(100, 0)));
        assert!(!a.contains(Point::new(-1, 0)));
        assert_eq!(a.intersect(&Rect::new(100, 0, 5, 5)), None);
        assert_eq!(a.center(), Point::new(50, 25));
    }
}
