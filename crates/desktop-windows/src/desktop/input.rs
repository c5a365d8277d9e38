//! Synthetic input through `SendInput`, every event marked as mcec's ([`crate::inject`]).
//!
//! Keys are virtual keys; a character key goes through the active layout (`VkKeyScanW`), and
//! one the layout cannot produce without modifiers is sent as its Unicode character
//! (`KEYEVENTF_UNICODE`), as `type` sends all text, so no layout is ever changed. The backend
//! remembers what it pressed so [`Injector::release_all`] can undo it, and also releases
//! buttons 1-3 and modifiers Windows still reports down (`GetAsyncKeyState`), with marked
//! events that the stop's hook sees as mcec's own and can never count towards the chord.

use mcec_desktop::keys::Key;
use mcec_desktop::seams::Injector;
use mcec_desktop::types::{MouseButton, Point, ScrollDirection};
use mcec_rules::{StopFlag, ToolError, progress};
use windows_sys::Win32::Foundation::POINT;
use windows_sys::Win32::UI::Input::KeyboardAndMouse::{
    GetAsyncKeyState, MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP, MOUSEEVENTF_MIDDLEDOWN, MOUSEEVENTF_MIDDLEUP,
    MOUSEEVENTF_RIGHTDOWN, MOUSEEVENTF_RIGHTUP, VK_LBUTTON, VK_MBUTTON, VK_RBUTTON, VK_RETURN, VK_TAB,
    VkKeyScanW,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{
    GetCursorPos, GetSystemMetrics, SM_CXVIRTUALSCREEN, SM_CYVIRTUALSCREEN, SM_XVIRTUALSCREEN,
    SM_YVIRTUALSCREEN, SetCursorPos, WHEEL_DELTA,
};

use super::{WindowsDesktop, inject_err, win_err};
use crate::inject::{self, Mark};
use crate::vk::{MODIFIER_VKS, desktop_vk};

/// One thing the backend holds down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pressed {
    Vk(u16),
    /// A character sent as Unicode (`VK_PACKET`), by its UTF-16 unit.
    Unit(u16),
    Button(MouseButton),
}

/// What the backend holds down right now, in press order.
#[derive(Debug, Default)]
pub(super) struct Held(Vec<Pressed>);

impl Held {
    fn note(&mut self, p: Pressed, down: bool) {
        self.0.retain(|q| *q != p);
        if down {
            self.0.push(p);
        }
    }
}

fn button_flags(b: MouseButton, down: bool) -> u32 {
    match (b, down) {
        (MouseButton::Left, true) => MOUSEEVENTF_LEFTDOWN,
        (MouseButton::Left, false) => MOUSEEVENTF_LEFTUP,
        (MouseButton::Right, true) => MOUSEEVENTF_RIGHTDOWN,
        (MouseButton::Right, false) => MOUSEEVENTF_RIGHTUP,
        (MouseButton::Middle, true) => MOUSEEVENTF_MIDDLEDOWN,
        (MouseButton::Middle, false) => MOUSEEVENTF_MIDDLEUP,
    }
}

fn is_down(vk: u16) -> bool {
    // SAFETY: plain query; the high bit says "down now".
    (unsafe { GetAsyncKeyState(i32::from(vk)) } as u16) & 0x8000 != 0
}

/// How `key` is pressed here: a virtual key, or the character itself as Unicode.
fn resolve(key: Key) -> Result<Pressed, ToolError> {
    if let Some(vk) = desktop_vk(key) {
        return Ok(Pressed::Vk(vk));
    }
    let Key::Char(c) = key else {
        return Err(ToolError::bad_argument("keys", "names a key Windows has no virtual key for"));
    };
    let mut units = [0u16; 2];
    let [unit] = c.encode_utf16(&mut units) else {
        return Err(ToolError::bad_argument(
            "keys",
            format!("`{c}` is outside the Basic Multilingual Plane; use `type` for it"),
        ));
    };
    // SAFETY: plain query on the active layout. Low byte: virtual key; high byte: the shift
    // state it needs; -1: none.
    let scan = unsafe { VkKeyScanW(*unit) };
    if scan != -1 && (scan as u16) >> 8 == 0 {
        Ok(Pressed::Vk((scan as u16) & 0xFF))
    } else {
        Ok(Pressed::Unit(*unit))
    }
}

fn send(p: Pressed, down: bool) -> Result<(), ToolError> {
    match p {
        Pressed::Vk(vk) => inject::send_keys(&[(vk, down)], Mark::Mcec),
        Pressed::Unit(u) => inject::send_unit(u, down),
        Pressed::Button(b) => inject::send_mouse_flags(button_flags(b, down)),
    }
    .map_err(inject_err)
}

fn tap(vk: u16) -> Result<(), ToolError> {
    inject::send_keys(&[(vk, true), (vk, false)], Mark::Mcec).map_err(inject_err)
}

impl WindowsDesktop {
    fn press(&self, p: Pressed, down: bool) -> Result<(), ToolError> {
        send(p, down)?;
        self.held().note(p, down);
        Ok(())
    }

    fn type_inner(&self, text: &str, stop: &StopFlag) -> Result<(), ToolError> {
        let total = text.chars().count();
        for (done, c) in text.chars().enumerate() {
            if stop.is_set() {
                let base = ToolError::emergency_stopped();
                return Err(ToolError::new(
                    base.code,
                    format!("{} Typed {done} of {total} characters before the stop.", base.detail),
                ));
            }
            match c {
                '\n' => tap(VK_RETURN)?,
                '\t' => tap(VK_TAB)?,
                c => inject::send_char(c).map_err(inject_err)?,
            }
            progress::report(done as u64 + 1, total as u64, "characters");
        }
        Ok(())
    }
}

impl Injector for WindowsDesktop {
    fn pointer_move(&self, to: Point) -> Result<(), ToolError> {
        // SAFETY: plain queries.
        let (vx, vy, vw, vh) = unsafe {
            (
                GetSystemMetrics(SM_XVIRTUALSCREEN),
                GetSystemMetrics(SM_YVIRTUALSCREEN),
                GetSystemMetrics(SM_CXVIRTUALSCREEN),
                GetSystemMetrics(SM_CYVIRTUALSCREEN),
            )
        };
        let nx = inject::normalise(i64::from(to.x) - i64::from(vx), i64::from(vw));
        let ny = inject::normalise(i64::from(to.y) - i64::from(vy), i64::from(vh));
        inject::send_move_absolute(nx, ny).map_err(inject_err)?;
        // Normalised coordinates can miss by a pixel where a system rounds otherwise; put the
        // pointer exactly where it was asked to be (no input event, nothing for a hook).
        if self.pointer_position()? != to {
            // SAFETY: plain call.
            if unsafe { SetCursorPos(to.x, to.y) } == 0 {
                return Err(win_err("SetCursorPos"));
            }
        }
        Ok(())
    }

    fn pointer_position(&self) -> Result<Point, ToolError> {
        let mut p = POINT { x: 0, y: 0 };
        // SAFETY: `p` is a valid POINT to fill.
        if unsafe { GetCursorPos(&mut p) } == 0 {
            return Err(win_err("GetCursorPos"));
        }
        Ok(Point::new(p.x, p.y))
    }

    fn button(&self, button: MouseButton, down: bool) -> Result<(), ToolError> {
        self.press(Pressed::Button(button), down)
    }

    fn scroll(&self, direction: ScrollDirection) -> Result<(), ToolError> {
        let notch = WHEEL_DELTA as i32;
        let (delta, horizontal) = match direction {
            ScrollDirection::Up => (notch, false),
            ScrollDirection::Down => (-notch, false),
            ScrollDirection::Right => (notch, true),
            ScrollDirection::Left => (-notch, true),
        };
        inject::send_wheel(delta, horizontal).map_err(inject_err)
    }

    /// `SendInput` never waits before a press, so `stop` (asked by the caller's gate right
    /// before this) needs no second look.
    fn key(&self, key: Key, down: bool, _stop: &StopFlag) -> Result<(), ToolError> {
        self.press(resolve(key)?, down)
    }

    fn type_text(&self, text: &str, stop: &StopFlag) -> Result<(), ToolError> {
        let result = self.type_inner(text, stop);
        let released = if result.is_err() { self.release_all() } else { self.settle() };
        result.and(released)
    }

    /// `SendInput` returns once the events are in the system's input queue and every
    /// low-level hook has seen them (the stop's hook included), which is as far as X11's
    /// round trip goes too: applications read them in their own time.
    fn settle(&self) -> Result<(), ToolError> {
        Ok(())
    }

    fn release_all(&self) -> Result<(), ToolError> {
        let held = std::mem::take(&mut self.held().0);
        let mut first_err = None;
        for p in held.into_iter().rev() {
            if let Err(e) = send(p, false) {
                first_err.get_or_insert(e);
            }
        }
        let system = release_what_windows_holds();
        first_err.map_or(system, Err)
    }
}

impl WindowsDesktop {
    /// The release to run when this process panics: a release build aborts (issue 30), so
    /// nothing unwinds to `Drop`, and the panicking thread may hold this backend's locks.
    pub fn last_resort_release(&self) -> impl Fn() -> Result<(), String> + Send + Sync + 'static {
        || release_what_windows_holds().map_err(|e| e.to_string())
    }
}

/// Releases buttons 1-3 and the modifier keys Windows reports down, whoever pressed them.
/// Uses no state of the backend's.
fn release_what_windows_holds() -> Result<(), ToolError> {
    let mut first_err = None;
    for (vk, b) in
        [(VK_LBUTTON, MouseButton::Left), (VK_RBUTTON, MouseButton::Right), (VK_MBUTTON, MouseButton::Middle)]
    {
        if is_down(vk)
            && let Err(e) = send(Pressed::Button(b), false)
        {
            first_err.get_or_insert(e);
        }
    }
    let mods: Vec<(u16, bool)> =
        MODIFIER_VKS.iter().filter(|vk| is_down(**vk)).map(|vk| (*vk, false)).collect();
    if !mods.is_empty()
        && let Err(e) = inject::send_keys(&mods, Mark::Mcec)
    {
        first_err.get_or_insert(inject_err(e));
    }
    first_err.map_or(Ok(()), Err)
}
