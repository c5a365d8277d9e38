//! A Windows test program: a window of one known colour that prints, one line each, every
//! click, key, character and wheel notch it receives. The backend's integration tests
//! (crates/desktop-windows/tests) act on it through the desktop tools and read these lines.
//! Not part of mcec.
//!
//! `mcec-wintest TITLE RRGGBB X Y WIDTH HEIGHT [CLASS]`
//!
//! CLASS (default `McecWinTest`) lets a test play one of mcec's own windows (`mcec-overlay`).
//!
//! Lines (stdout, flushed): `READY hwnd=0x.. pid=N client=X,Y,W,H` (client area in desktop
//! pixels), `DOWN button=B x=X y=Y` / `UP button=B ...` (client pixels), each followed by
//! `MESSAGE DOWN|UP button=B time=T pt=X,Y sent=0|1` (the message's time and desktop point,
//! and whether another thread sent it), `KEY vk=0x.. down=0|1`,
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
#[path = "common/test_window.rs"]
mod test_window;

#[cfg(windows)]
#[allow(unsafe_code)]
mod wintest {
    use std::cell::Cell;
    use std::io::{Read, Write};

    use windows_sys::Win32::Foundation::{HWND, LPARAM, LRESULT, POINT, RECT, WPARAM};
    use windows_sys::Win32::Graphics::Gdi::ClientToScreen;
    use windows_sys::Win32::UI::WindowsAndMessaging::{
        GetClientRect, GetMessagePos, GetMessageTime, InSendMessage, SetForegroundWindow, WM_CHAR,
        WM_KEYDOWN, WM_KEYUP, WM_LBUTTONDOWN, WM_LBUTTONUP, WM_MBUTTONDOWN, WM_MBUTTONUP, WM_MOUSEHWHEEL,
        WM_MOUSEWHEEL, WM_RBUTTONDOWN, WM_RBUTTONUP, WM_SYSKEYDOWN, WM_SYSKEYUP,
    };

    use crate::test_window::{self, Spec};

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
            // SAFETY: plain queries of this thread's message state.
            let (time, pos, sent) = unsafe { (GetMessageTime(), GetMessagePos(), InSendMessage()) };
            let (px, py) = (lo(pos as LPARAM), hi(pos as LPARAM));
            let what = if down { "DOWN" } else { "UP" };
            say(&format!("{what} button={b} x={} y={}", lo(l), hi(l)));
            say(&format!(
                "MESSAGE {what} button={b} time={} pt={px},{py} sent={}",
                time as u32,
                i32::from(sent != 0)
            ));
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
            _ => {}
        }
        if matches!(msg, WM_SYSKEYDOWN | WM_SYSKEYUP) {
            // Reported, not acted on: Alt must not open the system menu mid-test.
            return 0;
        }
        // SAFETY: the default procedure, for our own window's message.
        unsafe { test_window::default_wndproc(hwnd, msg, w, l) }
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
        let spec = Spec {
            class: args.get(6).map_or("McecWinTest", String::as_str),
            title: &title,
            bounds: (x, y, w, h),
            background: Some(rgb),
            wndproc: Some(wndproc),
        };
        let hwnd = test_window::open(&spec).unwrap_or_else(|call| fail(&format!("FAILED {call}")));
        // SAFETY: our own window, just created.
        unsafe { SetForegroundWindow(hwnd) };
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
        test_window::run_message_loop();
    }
}
