//! Input injection with `SendInput`, every event marked as mcec's own.
//!
//! mcec's injected events carry [`MCEC_MARK`] in `dwExtraInfo`, so its own hook tells them
//! from a foreign program's: the stop's release of held modifiers shows up as `Mcec`, never
//! as the operator and never as the chord (injected events cannot fire it at all). The
//! unmarked variants exist only for the project's foreign-injector test program, which plays
//! "another program" under Wine.

#![allow(unsafe_code)]

use std::fmt;

use windows_sys::Win32::Foundation::GetLastError;
use windows_sys::Win32::UI::Input::KeyboardAndMouse::{
    INPUT, INPUT_0, INPUT_KEYBOARD, INPUT_MOUSE, KEYBDINPUT, KEYEVENTF_EXTENDEDKEY, KEYEVENTF_KEYUP,
    KEYEVENTF_UNICODE, MOUSEEVENTF_ABSOLUTE, MOUSEEVENTF_HWHEEL, MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP,
    MOUSEEVENTF_MOVE, MOUSEEVENTF_VIRTUALDESK, MOUSEEVENTF_WHEEL, MOUSEINPUT, SendInput,
};

use crate::provenance::MCEC_MARK;
use crate::vk::{MODIFIER_VKS, is_extended};

/// Whether events carry mcec's mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Mcec,
    /// Unmarked, as any other program's input: for the foreign-injector test program only.
    Foreign,
}

impl Mark {
    fn extra_info(self) -> usize {
        match self {
            Mark::Mcec => MCEC_MARK,
            Mark::Foreign => 0,
        }
    }
}

/// `SendInput` inserted fewer events than asked (blocked by UIPI, or the desktop is locked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectError {
    pub sent: u32,
    pub asked: usize,
    pub code: u32,
}

impl fmt::Display for InjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SendInput inserted {} of {} events (error {})", self.sent, self.asked, self.code)
    }
}

impl std::error::Error for InjectError {}

fn key_input(vk: u16, down: bool, mark: Mark) -> INPUT {
    let mut flags = if down { 0 } else { KEYEVENTF_KEYUP };
    if is_extended(vk) {
        flags |= KEYEVENTF_EXTENDEDKEY;
    }
    INPUT {
        r#type: INPUT_KEYBOARD,
        Anonymous: INPUT_0 {
            ki: KEYBDINPUT { wVk: vk, wScan: 0, dwFlags: flags, time: 0, dwExtraInfo: mark.extra_info() },
        },
    }
}

/// One UTF-16 unit typed as itself (`VK_PACKET`), whatever the keyboard layout.
fn unit_input(unit: u16, down: bool) -> INPUT {
    let flags = if down { KEYEVENTF_UNICODE } else { KEYEVENTF_UNICODE | KEYEVENTF_KEYUP };
    INPUT {
        r#type: INPUT_KEYBOARD,
        Anonymous: INPUT_0 {
            ki: KEYBDINPUT { wVk: 0, wScan: unit, dwFlags: flags, time: 0, dwExtraInfo: MCEC_MARK },
        },
    }
}

fn mouse_input(flags: u32, mark: Mark) -> INPUT {
    mouse_full(flags, 0, 0, 0, mark)
}

fn mouse_full(flags: u32, dx: i32, dy: i32, data: i32, mark: Mark) -> INPUT {
    INPUT {
        r#type: INPUT_MOUSE,
        Anonymous: INPUT_0 {
            mi: MOUSEINPUT {
                dx,
                dy,
                mouseData: data as u32,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: mark.extra_info(),
            },
        },
    }
}

fn send(inputs: &[INPUT]) -> Result<(), InjectError> {
    let size = std::mem::size_of::<INPUT>() as i32;
    // SAFETY: `inputs` is a valid slice of initialised INPUT structures of `size` bytes each.
    let sent = unsafe { SendInput(inputs.len() as u32, inputs.as_ptr(), size) };
    if sent as usize == inputs.len() {
        Ok(())
    } else {
        // SAFETY: plain Win32 call.
        Err(InjectError { sent, asked: inputs.len(), code: unsafe { GetLastError() } })
    }
}

/// Sends key strokes `(virtual key, down)` in order, in one `SendInput` call.
pub fn send_keys(strokes: &[(u16, bool)], mark: Mark) -> Result<(), InjectError> {
    let inputs: Vec<INPUT> = strokes.iter().map(|(vk, down)| key_input(*vk, *down, mark)).collect();
    send(&inputs)
}

/// Releases every modifier, both sides, marked as mcec's: what a stop does to held input.
pub fn release_modifiers() -> Result<usize, InjectError> {
    let strokes: Vec<(u16, bool)> = MODIFIER_VKS.iter().map(|vk| (*vk, false)).collect();
    send_keys(&strokes, Mark::Mcec)?;
    Ok(strokes.len())
}

/// A left click where the pointer is.
pub fn click_left(mark: Mark) -> Result<(), InjectError> {
    send(&[mouse_input(MOUSEEVENTF_LEFTDOWN, mark), mouse_input(MOUSEEVENTF_LEFTUP, mark)])
}

/// Presses or releases one UTF-16 unit as a Unicode key stroke, marked as mcec's.
pub fn send_unit(unit: u16, down: bool) -> Result<(), InjectError> {
    send(&[unit_input(unit, down)])
}

/// Types one character as Unicode key strokes: a character outside the Basic Multilingual
/// Plane is a surrogate pair, both units pressed, then both released, in one call.
pub fn send_char(c: char) -> Result<(), InjectError> {
    let mut units = [0u16; 2];
    let units = c.encode_utf16(&mut units);
    let mut inputs: Vec<INPUT> = units.iter().map(|u| unit_input(*u, true)).collect();
    inputs.extend(units.iter().map(|u| unit_input(*u, false)));
    send(&inputs)
}

/// Presses or releases mouse buttons by their `MOUSEEVENTF_*` flags, marked as mcec's.
pub fn send_mouse_flags(flags: u32) -> Result<(), InjectError> {
    send(&[mouse_input(flags, Mark::Mcec)])
}

/// Moves the pointer to `(nx, ny)` in normalised virtual-desktop coordinates (0..=65535).
pub fn send_move_absolute(nx: i32, ny: i32) -> Result<(), InjectError> {
    let flags = MOUSEEVENTF_MOVE | MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK;
    send(&[mouse_full(flags, nx, ny, 0, Mark::Mcec)])
}

/// One wheel notch of `delta` (`WHEEL_DELTA` = 120 a notch, positive away from the user or to
/// the right), vertical or horizontal.
pub fn send_wheel(delta: i32, horizontal: bool) -> Result<(), InjectError> {
    let flags = if horizontal { MOUSEEVENTF_HWHEEL } else { MOUSEEVENTF_WHEEL };
    send(&[mouse_full(flags, 0, 0, delta, Mark::Mcec)])
}

/// The normalised absolute coordinate `SendInput` wants for pixel `offset` into a span of
/// `extent` pixels: Windows maps `n` back to `n * extent / 65536` (rounded down), so this is
/// the smallest `n` that lands on `offset`.
pub fn normalise(offset: i64, extent: i64) -> i32 {
    if extent <= 0 {
        return 0;
    }
    ((offset * 65536 + extent - 1) / extent).clamp(0, 65535) as i32
}
