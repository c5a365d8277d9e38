//! The one top-level window each Wine test program opens (`mcec-wintest`, `mcec-stop-probe`):
//! its class registered and the window created, the message loop, and the window procedure's
//! default (quit on `WM_DESTROY`). Each program includes this file with `#[path]`; what it
//! prints and how it is called stay its own.

use windows_sys::Win32::Foundation::{HWND, LPARAM, LRESULT, WPARAM};
use windows_sys::Win32::Graphics::Gdi::{CreateSolidBrush, HBRUSH};
use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
use windows_sys::Win32::UI::WindowsAndMessaging::{
    CreateWindowExW, DefWindowProcW, DispatchMessageW, GetMessageW, MSG, PostQuitMessage, RegisterClassW,
    TranslateMessage, WM_DESTROY, WNDCLASSW, WNDPROC, WS_OVERLAPPEDWINDOW, WS_VISIBLE,
};

/// What to open: a visible overlapped window of class `class` titled `title`.
pub struct Spec<'a> {
    pub class: &'a str,
    pub title: &'a str,
    /// Left, top, width, height (`CW_USEDEFAULT` where the system may choose).
    pub bounds: (i32, i32, i32, i32),
    /// The client area's colour as `0xRRGGBB`; `None` leaves it to the system.
    pub background: Option<u32>,
    pub wndproc: WNDPROC,
}

/// Registers the class and opens the window. On failure, the Win32 call that failed.
#[allow(unsafe_code)]
pub fn open(spec: &Spec) -> Result<HWND, &'static str> {
    let class = wide(spec.class);
    let title = wide(spec.title);
    let (x, y, w, h) = spec.bounds;
    // SAFETY: the class and title buffers outlive the calls; the window procedure has the
    // WNDPROC signature.
    unsafe {
        let module = GetModuleHandleW(std::ptr::null());
        let mut wc: WNDCLASSW = std::mem::zeroed();
        wc.lpfnWndProc = spec.wndproc;
        wc.hInstance = module;
        wc.lpszClassName = class.as_ptr();
        if let Some(rgb) = spec.background {
            wc.hbrBackground = solid_brush(rgb);
        }
        if RegisterClassW(&wc) == 0 {
            return Err("RegisterClassW");
        }
        let hwnd = CreateWindowExW(
            0,
            class.as_ptr(),
            title.as_ptr(),
            WS_OVERLAPPEDWINDOW | WS_VISIBLE,
            x,
            y,
            w,
            h,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            module,
            std::ptr::null(),
        );
        if hwnd.is_null() { Err("CreateWindowExW") } else { Ok(hwnd) }
    }
}

/// A brush of `0xRRGGBB` (a COLORREF is `0x00BBGGRR`).
#[allow(unsafe_code)]
fn solid_brush(rgb: u32) -> HBRUSH {
    let colorref = ((rgb & 0xFF) << 16) | (rgb & 0xFF00) | ((rgb >> 16) & 0xFF);
    // SAFETY: creates a GDI object from a plain value; the program keeps it until it exits.
    unsafe { CreateSolidBrush(colorref) }
}

/// Dispatches the thread's messages until `WM_QUIT` (or an error).
#[allow(unsafe_code)]
pub fn run_message_loop() {
    // SAFETY: msg is a valid MSG to fill; the loop ends on WM_QUIT or an error.
    unsafe {
        let mut msg: MSG = std::mem::zeroed();
        loop {
            let got = GetMessageW(&mut msg, std::ptr::null_mut(), 0, 0);
            if got == 0 || got == -1 {
                break;
            }
            TranslateMessage(&msg);
            DispatchMessageW(&msg);
        }
    }
}

/// The window procedure for what a program does not handle itself: `WM_DESTROY` ends the
/// message loop, anything else gets the system's default.
#[allow(unsafe_code)]
pub unsafe extern "system" fn default_wndproc(hwnd: HWND, msg: u32, w: WPARAM, l: LPARAM) -> LRESULT {
    if msg == WM_DESTROY {
        // SAFETY: plain Win32 call on the window's own thread.
        unsafe { PostQuitMessage(0) };
        return 0;
    }
    // SAFETY: default handling of a message for our own window.
    unsafe { DefWindowProcW(hwnd, msg, w, l) }
}

/// `s` as a NUL-terminated UTF-16 string.
fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}
