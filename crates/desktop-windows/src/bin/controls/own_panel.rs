//! The own panel of `mcec-controls own`: a custom-drawn child window (no standard control,
//! so nothing of Wine's stands in for it) that answers `WM_GETOBJECT` for its client area
//! with its own `IAccessible` ([`crate::own_accessible::Panel`], handed over with
//! `LresultFromObject`), and paints what its parts are and the state they are in, so the
//! operator sees what an agent did.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicUsize, Ordering};

use windows::Win32::Foundation::WPARAM as WinWparam;
use windows::Win32::UI::Accessibility::{IAccessible, LresultFromObject};
use windows::core::Interface;
use windows_sys::Win32::Foundation::{HWND, LPARAM, LRESULT, WPARAM};
use windows_sys::Win32::Graphics::Gdi::{
    BeginPaint, EndPaint, InvalidateRect, PAINTSTRUCT, Rectangle, SetBkMode, TRANSPARENT, TextOutW,
};
use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
use windows_sys::Win32::UI::WindowsAndMessaging::{
    CreateWindowExW, DefWindowProcW, RegisterClassW, WM_GETOBJECT, WM_PAINT, WNDCLASSW, WS_BORDER, WS_CHILD,
    WS_VISIBLE,
};

use crate::own_accessible::{LAYOUT, Panel, item_rect};
use crate::own_state::{self, COLOURS, Focus};

/// `OBJID_CLIENT`, as `WM_GETOBJECT`'s `lParam` carries it (a 32-bit id).
const OBJID_CLIENT: i32 = -4;

/// The panel window, once made (0 before).
static PANEL: AtomicUsize = AtomicUsize::new(0);

/// The panel's control id.
pub const PANEL_ID: i32 = 200;

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// Makes the panel in `parent` at `at` (left, top, width, height); `None` if a call failed.
pub fn open(parent: HWND, at: (i32, i32, i32, i32)) -> Option<HWND> {
    let class = wide("McecOwnPanel");
    let title = wide("Own controls");
    // SAFETY: the buffers outlive the calls; the window procedure has the WNDPROC signature.
    let hwnd = unsafe {
        let module = GetModuleHandleW(std::ptr::null());
        let mut wc: WNDCLASSW = std::mem::zeroed();
        wc.lpfnWndProc = Some(wndproc);
        wc.hInstance = module;
        wc.lpszClassName = class.as_ptr();
        wc.hbrBackground = 6 as _; // COLOR_WINDOW + 1
        if RegisterClassW(&wc) == 0 {
            return None;
        }
        CreateWindowExW(
            0,
            class.as_ptr(),
            title.as_ptr(),
            WS_CHILD | WS_VISIBLE | WS_BORDER,
            at.0,
            at.1,
            at.2,
            at.3,
            parent,
            PANEL_ID as isize as _,
            module,
            std::ptr::null(),
        )
    };
    if hwnd.is_null() {
        return None;
    }
    PANEL.store(hwnd as usize, Ordering::SeqCst);
    Some(hwnd)
}

/// Paints the panel again (its state changed).
pub fn repaint() {
    let hwnd = PANEL.load(Ordering::SeqCst);
    if hwnd != 0 {
        // SAFETY: our own window; a null rectangle is the whole client area.
        unsafe { InvalidateRect(hwnd as HWND, std::ptr::null(), 1) };
    }
}

unsafe extern "system" fn wndproc(hwnd: HWND, msg: u32, w: WPARAM, l: LPARAM) -> LRESULT {
    if msg == WM_GETOBJECT && l as i32 == OBJID_CLIENT {
        let acc = IAccessible::from(Panel { hwnd: hwnd as usize });
        // SAFETY: the interface is ours and alive for the call; the system keeps its own
        // reference for the client.
        return unsafe { LresultFromObject(&IAccessible::IID, WinWparam(w), &acc) }.0;
    }
    if msg == WM_PAINT {
        paint(hwnd);
        return 0;
    }
    // SAFETY: default handling of a message for our own window.
    unsafe { DefWindowProcW(hwnd, msg, w, l) }
}

fn paint(hwnd: HWND) {
    let s = own_state::get();
    let boxed = |dc, (x, y, w, h): (i32, i32, i32, i32), text: &str| {
        let t: Vec<u16> = text.encode_utf16().collect();
        // SAFETY: drawing on the paint DC of our own window; the text outlives the call.
        unsafe {
            Rectangle(dc, x, y, x + w, y + h);
            TextOutW(dc, x + 4, y + 4, t.as_ptr(), t.len() as i32);
        }
    };
    let text = |dc, x: i32, y: i32, text: &str| {
        let t: Vec<u16> = text.encode_utf16().collect();
        // SAFETY: as above.
        unsafe { TextOutW(dc, x, y, t.as_ptr(), t.len() as i32) };
    };
    // SAFETY: the paint pair on our own window's WM_PAINT.
    unsafe {
        let mut ps: PAINTSTRUCT = std::mem::zeroed();
        let dc = BeginPaint(hwnd, &mut ps);
        SetBkMode(dc, TRANSPARENT as _);
        boxed(dc, LAYOUT.apply, "Apply");
        boxed(dc, LAYOUT.bold, if s.bold { "[x] Bold" } else { "[ ] Bold" });
        let (x, y, w, h) = LAYOUT.list;
        Rectangle(dc, x, y, x + w, y + h);
        for (i, name) in COLOURS.iter().enumerate() {
            let (ix, iy, _, _) = item_rect(i);
            let mark = match (s.selected == Some(i), s.focus == Some(Focus::Item(i))) {
                (true, true) => "*>",
                (true, false) => "* ",
                (false, true) => " >",
                (false, false) => "  ",
            };
            text(dc, ix + 2, iy + 3, &format!("{mark} {name}"));
        }
        text(dc, 140, 50, &format!("applied {}", s.applied));
        text(dc, 140, 70, &format!("selected {}", s.selected.map_or("-", |i| COLOURS[i])));
        EndPaint(hwnd, &ps);
    }
}
