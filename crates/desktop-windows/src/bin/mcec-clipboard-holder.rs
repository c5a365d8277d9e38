//! A Windows test program that plays "another program" at the clipboard, for
//! `tests/windows/test_clipboard_wine.py`. Not part of mcec.
//!
//!   mcec-clipboard-holder hold    opens the clipboard (owner: a window titled
//!                                 "mcec clipboard holder"), prints `HELD`, and keeps it open
//!                                 until stdin closes; then prints `RELEASED`
//!   mcec-clipboard-holder bytes   replaces the clipboard with one non-text format (a few
//!                                 bytes of a registered format); prints `SET bytes`
//!
//! Exits 1 when Windows refuses (after printing `FAILED` and the call).

#![allow(unsafe_code)]

#[cfg(windows)]
fn main() {
    use std::io::Read;

    use windows_sys::Win32::System::DataExchange::{
        CloseClipboard, EmptyClipboard, OpenClipboard, RegisterClipboardFormatW, SetClipboardData,
    };
    use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
    use windows_sys::Win32::System::Memory::{GMEM_MOVEABLE, GlobalAlloc};
    use windows_sys::Win32::UI::WindowsAndMessaging::CreateWindowExW;

    fn wide(s: &str) -> Vec<u16> {
        s.encode_utf16().chain([0]).collect()
    }
    fn fail(what: &str) -> ! {
        println!("FAILED {what}");
        std::process::exit(1)
    }

    let mode = std::env::args().nth(1).unwrap_or_default();
    let (class, title) = (wide("STATIC"), wide("mcec clipboard holder"));
    // SAFETY: a hidden window of a system class with NUL-terminated names, no creation data.
    let window = unsafe {
        CreateWindowExW(
            0,
            class.as_ptr(),
            title.as_ptr(),
            0,
            0,
            0,
            10,
            10,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            GetModuleHandleW(std::ptr::null()),
            std::ptr::null(),
        )
    };
    if window.is_null() {
        fail("CreateWindowExW");
    }
    // SAFETY: `window` is this thread's.
    if unsafe { OpenClipboard(window) } == 0 {
        fail("OpenClipboard");
    }
    match mode.as_str() {
        "hold" => {
            println!("HELD");
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
            // SAFETY: opened above by this thread.
            unsafe { CloseClipboard() };
            println!("RELEASED");
        }
        "bytes" => {
            let format = wide("mcec test bytes");
            // SAFETY: the clipboard is open by this thread; the block is handed to it.
            unsafe {
                let id = RegisterClipboardFormatW(format.as_ptr());
                let block = GlobalAlloc(GMEM_MOVEABLE, 4);
                if id == 0
                    || block.is_null()
                    || EmptyClipboard() == 0
                    || SetClipboardData(id, block).is_null()
                {
                    CloseClipboard();
                    fail("setting the bytes");
                }
                CloseClipboard();
            }
            println!("SET bytes");
        }
        _ => {
            eprintln!("usage: mcec-clipboard-holder hold | bytes");
            std::process::exit(2)
        }
    }
}

#[cfg(not(windows))]
fn main() {
    eprintln!("mcec-clipboard-holder is a Windows program: build it with scripts/windows-build");
    std::process::exit(2);
}
