//! The Win32 clipboard: text in and out as `CF_UNICODETEXT`, for the `clipboard` tool and the
//! Agent tab's Copy buttons, one implementation for both: [`WindowsClipboard`], mcec-desktop's
//! clipboard seam on Windows, which the binary hands to both.
//!
//! Unlike an X11 selection the Win32 clipboard is a store: what `set` puts there stays after
//! the call and after mcec exits, until another program empties it. Only one thread in the
//! session may have it open at a time, so opening is retried for a bounded time and a
//! clipboard still held after it is a `timeout` naming the program that holds it. Whatever
//! happens once it is open, it is closed again ([`Opened`]'s drop).

use std::time::{Duration, Instant};

use mcec_desktop::clipboard::{Clipboard, Selection};
use mcec_rules::{ErrorCode, StopFlag, ToolError};
use windows_sys::Win32::Foundation::{GlobalFree, HWND};
use windows_sys::Win32::System::DataExchange::{
    CloseClipboard, EmptyClipboard, GetClipboardData, GetOpenClipboardWindow, IsClipboardFormatAvailable,
    OpenClipboard, SetClipboardData,
};
use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
use windows_sys::Win32::System::Memory::{GMEM_MOVEABLE, GlobalAlloc, GlobalLock, GlobalSize, GlobalUnlock};
use windows_sys::Win32::System::Ole::CF_UNICODETEXT;
use windows_sys::Win32::UI::WindowsAndMessaging::{
    CreateWindowExW, DestroyWindow, GetWindowThreadProcessId, HWND_MESSAGE,
};

use super::win_err;
use super::windows::{process_name, text_of};
use crate::clipboard_text::{MAX_GET_UNITS, from_clipboard, to_clipboard};

/// How long another program may hold the clipboard open before mcec gives up.
const OPEN_PATIENCE: Duration = Duration::from_secs(1);
const RETRY: Duration = Duration::from_millis(10);

/// The Windows clipboard behind mcec-desktop's clipboard seam.
///
/// Windows has one clipboard; PRIMARY (the X11 selection pasted with the middle button) has no
/// Windows counterpart, so asking for it is `unavailable` rather than a silent write to the
/// one clipboard.
#[derive(Debug, Default, Clone, Copy)]
pub struct WindowsClipboard;

fn only_clipboard(which: Selection, outcome: &str) -> Result<(), ToolError> {
    match which {
        Selection::Clipboard => Ok(()),
        Selection::Primary => Err(ToolError::new(
            ErrorCode::Unavailable,
            format!("Windows has no PRIMARY selection (only X11 does; use `clipboard`); {outcome}."),
        )),
    }
}

impl Clipboard for WindowsClipboard {
    fn set(&self, which: Selection, text: String) -> Result<(), ToolError> {
        only_clipboard(which, "nothing was set")?;
        set_text(&text)
    }

    fn get(&self, which: Selection, stop: &StopFlag) -> Result<Option<String>, ToolError> {
        only_clipboard(which, "nothing was read")?;
        get_text(stop)
    }
}

/// Puts `text` on the clipboard (replacing everything there), as Unicode text.
pub fn set_text(text: &str) -> Result<(), ToolError> {
    let units = to_clipboard(text);
    let opened = Opened::open(None, "nothing was set")?;
    // SAFETY: the clipboard is open by this thread with `opened.owner` as owner; the block is
    // allocated with the size written into it, unlocked before it is handed over, and freed
    // here only when the clipboard did not take it.
    unsafe {
        if EmptyClipboard() == 0 {
            return Err(win_err("EmptyClipboard"));
        }
        let bytes = units.len() * 2;
        let block = GlobalAlloc(GMEM_MOVEABLE, bytes);
        if block.is_null() {
            return Err(win_err("GlobalAlloc"));
        }
        let at = GlobalLock(block) as *mut u16;
        if at.is_null() {
            GlobalFree(block);
            return Err(win_err("GlobalLock"));
        }
        std::ptr::copy_nonoverlapping(units.as_ptr(), at, units.len());
        GlobalUnlock(block);
        if SetClipboardData(u32::from(CF_UNICODETEXT), block).is_null() {
            let e = win_err("SetClipboardData");
            GlobalFree(block);
            return Err(e);
        }
    }
    drop(opened);
    Ok(())
}

/// The clipboard's text; `None` when it holds no text (empty, or only pictures, files ...).
pub fn get_text(stop: &StopFlag) -> Result<Option<String>, ToolError> {
    let opened = Opened::open(Some(stop), "nothing was read")?;
    // SAFETY: the clipboard is open by this thread; the handle it gives is only read, inside
    // its lock, for at most the block's size in whole UTF-16 units.
    let text = unsafe {
        if IsClipboardFormatAvailable(u32::from(CF_UNICODETEXT)) == 0 {
            return Ok(None);
        }
        let block = GetClipboardData(u32::from(CF_UNICODETEXT));
        if block.is_null() {
            return Ok(None);
        }
        let units = GlobalSize(block) / 2;
        if units > MAX_GET_UNITS {
            return Err(ToolError::new(
                ErrorCode::Unavailable,
                format!(
                    "The clipboard's text is too large to read ({units} UTF-16 units, at most {MAX_GET_UNITS})."
                ),
            ));
        }
        let at = GlobalLock(block) as *const u16;
        if at.is_null() {
            return Err(win_err("GlobalLock"));
        }
        let text = from_clipboard(std::slice::from_raw_parts(at, units));
        GlobalUnlock(block);
        text
    };
    drop(opened);
    Ok(Some(text))
}

/// The clipboard, open by this thread, with a message-only window of mcec's as its owner
/// (`SetClipboardData` needs one). Dropping it closes the clipboard, then the window.
struct Opened {
    owner: HWND,
}

impl Opened {
    /// Opens the clipboard, retrying while another program has it open, for at most
    /// [`OPEN_PATIENCE`]; `stop` ends the wait. `outcome` says what a refusal left undone.
    fn open(stop: Option<&StopFlag>, outcome: &str) -> Result<Opened, ToolError> {
        let class: Vec<u16> = "STATIC\0".encode_utf16().collect();
        // SAFETY: a message-only window of a system class, with a NUL-terminated class name
        // and no creation data; it is destroyed on every path below or by the drop.
        let owner = unsafe {
            CreateWindowExW(
                0,
                class.as_ptr(),
                std::ptr::null(),
                0,
                0,
                0,
                0,
                0,
                HWND_MESSAGE,
                std::ptr::null_mut(),
                GetModuleHandleW(std::ptr::null()),
                std::ptr::null(),
            )
        };
        if owner.is_null() {
            return Err(win_err("CreateWindowExW (the clipboard's owner)"));
        }
        let started = Instant::now();
        loop {
            // SAFETY: `owner` is this thread's live window.
            if unsafe { OpenClipboard(owner) } != 0 {
                return Ok(Opened { owner });
            }
            if stop.is_some_and(StopFlag::is_set) {
                // SAFETY: the window is ours and the clipboard was not opened.
                unsafe { DestroyWindow(owner) };
                return Err(ToolError::emergency_stopped());
            }
            if started.elapsed() >= OPEN_PATIENCE {
                let holder = holder();
                // SAFETY: as above.
                unsafe { DestroyWindow(owner) };
                return Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!(
                        "The clipboard is held open by {holder}; mcec tried for {} ms and {outcome}.",
                        OPEN_PATIENCE.as_millis()
                    ),
                ));
            }
            std::thread::sleep(RETRY);
        }
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        // SAFETY: the clipboard was opened by this thread and the window is ours.
        unsafe {
            CloseClipboard();
            DestroyWindow(self.owner);
        }
    }
}

/// Who has the clipboard open, for the error: the program and its window's title.
fn holder() -> String {
    // SAFETY: plain queries; a window gone since just yields no pid or title.
    let window = unsafe { GetOpenClipboardWindow() };
    if window.is_null() {
        return "another program (it opened the clipboard without a window, so Windows does not say which)"
            .to_string();
    }
    let mut pid = 0u32;
    // SAFETY: as above, into a local.
    unsafe { GetWindowThreadProcessId(window, &mut pid) };
    let program = (pid != 0).then(|| process_name(pid)).flatten().unwrap_or_else(|| "a program".to_string());
    let title = text_of(window);
    if title.is_empty() {
        format!("`{program}` (pid {pid})")
    } else {
        format!("`{program}` (pid {pid}, window \"{title}\")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primary_is_refused_without_touching_the_clipboard() {
        let stop = StopFlag::new();
        let set = WindowsClipboard.set(Selection::Primary, "x".into()).expect_err("no PRIMARY on Windows");
        assert_eq!(set.code, ErrorCode::Unavailable);
        assert!(set.detail.contains("nothing was set"), "{}", set.detail);
        let get = WindowsClipboard.get(Selection::Primary, &stop).expect_err("no PRIMARY on Windows");
        assert_eq!(get.code, ErrorCode::Unavailable);
        assert!(get.detail.contains("nothing was read"), "{}", get.detail);
    }
}
