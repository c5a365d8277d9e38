//! A Windows test program: a window of one known colour that prints, one line each, every
//! click, key, character and wheel notch it receives. The backend's integration tests
//! (crates/desktop-windows/tests) act on it through the desktop tools and read these lines.
//! Not part of mcec.
//!
//!   mcec-wintest TITLE RRGGBB X Y WIDTH HEIGHT [CLASS]
//!
//! CLASS (default `McecWinTest`) lets a test play one of mcec's own windows (`mcec-overlay`).
//!
//! Lines (stdout, flushed): `READY hwnd=0x.. pid=N client=X,Y,W,H` (client area in desktop
//! pixels), `DOWN button=B x=X y=Y` / `UP button=B ...` (client pixels), `KEY vk=0x.. down=0|1`,
//! `CHAR cp=0x..` (a whole code point, surrogate pairs joined), `WHEEL delta=D` /
//! `HWHEEL delta=D`. The program ends when stdin closes.

#[cfg(windows)]
fn main() {
    wintest::main();
}

#[cfg(not(windows))]
fn main() {
    eprintln!("mcec-wintest is a Windows program: build it with scripts/windows-build");
    std::process::exit(2);
}

#[cfg(windows)]
#[allow(unsafe_code)]
mod wintest {
    use std::cell::Cell;
    use std::io::{Read, Write};

    use windows_sys::Win32::Foundation::{HWND, LPARAM, LRESULT, POINT, RECT, WPARAM};
    use windows_sys::Win32::Graphics::Gdi::{ClientToScreen, CreateSolidBrush};
    use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
    use windows_sys::Win32::UI::WindowsAndMessaging::{
        CreateWindowExW, DefWindowProcW, DispatchMessageW, GetClientRect, GetMessageW, MSG, PostQuitMessage,
        RegisterClassW, SetForegroundWindow, TranslateMessage, WM_CHAR, WM_DESTROY, WM_KEYDOWN, WM_KEYUP,
        WM_LBUTTONDOWN, WM_LBUTTONUP, WM_MBUTTONDOWN, WM_MBUTTONUP, WM_MOUSEHWHEEL, WM_MOUSEWHEEL,
        WM_RBUTTONDOWN, WM_RBUTTONUP, WM_SYSKEYDOWN, WM_SYSKEYUP, WNDCLASSW, WS_OVERLAPPEDWINDOW, WS_VISIBLE,
    };

    thread_local! {
        static HIGH: Cell<u16> = const { Cell::new(0) };
    }

    fn say(line: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    fn fail(msg: &str) -> ! {
        say(msg);
        std::process::exit(3);
    }

    fn wide(s: &str) -> Vec<u16> {
        s.encode_utf16().chain(std::iter::once(0)).collect()
    }

    fn lo(l: LPARAM) -> i32 {
        i32::from((l & 0xFFFF) as u16 as i16)
    }

    fn hi(l: LPARAM) -> i32 {
        i32::from(((l >> 16) & 0xFFFF) as u16 as i16)
    }

    fn on_char(unit: u16) {
        let high = HIGH.with(Cell::get);
        if (0xD800..0xDC00).contains(&unit) {
            HIGH.with(|h| h.set(unit));
            return;
        }
        HIGH.with(|h| h.set(0));
        let units: Vec<u16> =
            if (0xDC00..0xE000).contains(&unit) && high != 0 { vec![high, unit] } else { vec![unit] };
        for c in char::decode_utf16(units) {
            match c {
                Ok(c) => say(&format!("CHAR cp={:#x}", u32::from(c))),
                Err(e) => say(&format!("CHAR bad={:#x}", e.unpaired_surrogate())),
            }
        }
    }

    unsafe extern "system" fn wndproc(hwnd: HWND, msg: u32, w: WPARAM, l: LPARAM) -> LRESULT {
        let button = |b: &str, down: bool| {
            say(&format!("{} button={b} x={} y={}", if down { "DOWN" } else { "UP" }, lo(l), hi(l)));
        };
        match msg {
            WM_LBUTTONDOWN => button("left", true),
            WM_LBUTTONUP => button("left", false),
            WM_RBUTTONDOWN => button("right", true),
            WM_RBUTTONUP => button("right", false),
            WM_MBUTTONDOWN => button("middle", true),
            WM_MBUTTONUP => button("middle", false),
            WM_KEYDOWN | WM_SYSKEYDOWN => say(&format!("KEY vk={w:#04x} down=1")),
            WM_KEYUP | WM_SYSKEYUP => say(&format!("KEY vk={w:#04x} down=0")),
            WM_CHAR => on_char(w as u16),
            WM_MOUSEWHEEL => say(&format!("WHEEL delta={}", hi(w as LPARAM))),
            WM_MOUSEHWHEEL => say(&format!("HWHEEL delta={}", hi(w as LPARAM))),
            WM_DESTROY => {
                // SAFETY: plain Win32 call on the window's own thread.
                unsafe { PostQuitMessage(0) };
                return 0;
            }
            _ => {}
        }
        if matches!(msg, WM_SYSKEYDOWN | WM_SYSKEYUP) {
            // Reported, not acted on: Alt must not open the system menu mid-test.
            return 0;
        }
        // SAFETY: default handling of a message for our own window.
        unsafe { DefWindowProcW(hwnd, msg, w, l) }
    }

    fn arg<T: std::str::FromStr>(args: &[String], i: usize, what: &str) -> T {
        args.get(i).and_then(|a| a.parse().ok()).unwrap_or_else(|| fail(&format!("USAGE bad {what}")))
    }

    pub fn main() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let title = args.first().cloned().unwrap_or_else(|| fail("USAGE no title"));
        let rgb = u32::from_str_radix(args.get(1).map_or("", String::as_str), 16)
            .unwrap_or_else(|_| fail("USAGE bad colour"));
        let (x, y, w, h): (i32, i32, i32, i32) =
            (arg(&args, 2, "x"), arg(&args, 3, "y"), arg(&args, 4, "width"), arg(&args, 5, "height"));
        // COLORREF is 0x00BBGGRR.
        let colorref = ((rgb & 0xFF) << 16) | (rgb & 0xFF00) | ((rgb >> 16) & 0xFF);
        let class = wide(args.get(6).map_or("McecWinTest", String::as_str));
        let title_w = wide(&title);
        // SAFETY: the buffers outlive the calls; wndproc has the WNDPROC signature.
        let hwnd = unsafe {
            let module = GetModuleHandleW(std::ptr::null());
            let mut wc: WNDCLASSW = std::mem::zeroed();
            wc.lpfnWndProc = Some(wndproc);
            wc.hInstance = module;
            wc.lpszClassName = class.as_ptr();
            wc.hbrBackground = CreateSolidBrush(colorref);
            if RegisterClassW(&wc) == 0 {
                fail("FAILED RegisterClassW");
            }
            let hwnd = CreateWindowExW(
                0,
                class.as_ptr(),
                title_w.as_ptr(),
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
            if hwnd.is_null() {
                fail("FAILED CreateWindowExW");
            }
            SetForegroundWindow(hwnd);
            hwnd
        };
        let mut rect = RECT { left: 0, top: 0, right: 0, bottom: 0 };
        let mut origin = POINT { x: 0, y: 0 };
        // SAFETY: locals to fill for our own window.
        unsafe {
            GetClientRect(hwnd, &mut rect);
            ClientToScreen(hwnd, &mut origin);
        }
        say(&format!(
            "READY hwnd={:#x} pid={} client={},{},{},{}",
            hwnd as usize,
            std::process::id(),
            origin.x,
            origin.y,
            rect.right - rect.left,
            rect.bottom - rect.top
        ));
        std::thread::spawn(|| {
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
            std::process::exit(0);
        });
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
}
