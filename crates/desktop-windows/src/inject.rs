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
    MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP, MOUSEINPUT, SendInput,
};

use crate::provenance::MCEC_MARK;
use crate::vk::MODIFIER_VKS;

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

fn is_extended(vk: u16) -> bool {
    // Right Ctrl/Alt and both Windows keys are extended keys on a real keyboard.
    matches!(vk, 0xA3 | 0xA5 | 0x5B | 0x5C)
}

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

fn mouse_input(flags: u32, mark: Mark) -> INPUT {
    INPUT {
        r#type: INPUT_MOUSE,
        Anonymous: INPUT_0 {
            mi: MOUSEINPUT {
                dx: 0,
                dy: 0,
                mouseData: 0,
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
