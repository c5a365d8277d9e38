//! A Windows test program: a window of standard controls (a push button `&OK`, an edit box,
//! a check box `&Remember me` and a label `Name:`), for the accessibility tests under Wine
//! (crates/a11y/tests/msaa_wine.rs), which read them through MSAA from another process.
//! Not part of mcec.
//!
//! `mcec-controls TITLE X Y [hang | own]`
//!
//! With `hang` the window plays a hung accessibility provider: it answers `WM_GETOBJECT`
//! (what `AccessibleObjectFromWindow` sends first) only after 20 s.
//!
//! With `own` the window also holds a custom-drawn panel that serves its own accessible
//! objects (`controls/own_*.rs`): a push button `Apply`, a check box `Bold` and a list
//! `Colours` (Red, Green, Blue) with default actions, `accSelect` and `accFocus`, what Wine's
//! `oleacc` offers for no standard control.
//!
//! Lines (stdout, flushed): `READY hwnd=0x.. pid=N`, then one per notification from a
//! control: `CLICKED id=N` (a button pressed), `CHECK id=N state=0|1`, `EDIT text=...` (the
//! edit box changed), and one per change of the own panel: `OWN press|toggle|select|focus|
//! select+focus applied=N bold=0|1 selected=NAME|- focus=NAME|-`.
//!
//! Lines on stdin: `state` is answered `STATE applied=...` (the own panel's state now, in the
//! same form); `later MS` makes one more push button `&Later` MS milliseconds later (control
//! ids 103, 104, ..., each printed `LATER id=N` once it exists: a control that appears after a
//! delay, and two of the same name); `close` closes the window, printed `CLOSED` once it is
//! gone, while the program goes on running (an element of a window that closed). Anything
//! else is answered `UNKNOWN <line>`. The program ends when stdin closes.

#[cfg(windows)]
fn main() {
    controls::main();
}

#[cfg(not(windows))]
fn main() {
    eprintln!("mcec-controls is a Windows program: build it with scripts/windows-build");
    std::process::exit(2);
}

#[cfg(windows)]
#[path = "common/test_window.rs"]
mod test_window;

#[cfg(windows)]
#[path = "controls/own_state.rs"]
mod own_state;

#[cfg(windows)]
#[path = "controls/own_accessible.rs"]
mod own_accessible;

#[cfg(windows)]
#[path = "controls/own_panel.rs"]
mod own_panel;

#[cfg(windows)]
#[allow(unsafe_code)]
mod controls {
    use std::io::{BufRead, Write};
    use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
    use std::time::Duration;

    use windows_sys::Win32::Foundation::{HWND, LPARAM, LRESULT, WPARAM};
    use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
    use windows_sys::Win32::UI::WindowsAndMessaging::{
        BM_GETCHECK, BN_CLICKED, BS_AUTOCHECKBOX, BS_PUSHBUTTON, CreateWindowExW, EN_CHANGE, ES_AUTOHSCROLL,
        GetDlgItem, GetWindowTextW, PostMessageW, SendMessageW, SetForegroundWindow, WM_APP, WM_CLOSE,
        WM_COMMAND, WM_GETOBJECT, WS_BORDER, WS_CHILD, WS_TABSTOP, WS_VISIBLE,
    };

    use crate::test_window::{self, Spec};
    use crate::{own_panel, own_state};

    pub const OK: i32 = 1;
    pub const EDIT: i32 = 100;
    pub const CHECK: i32 = 101;
    pub const LABEL: i32 = 102;
    /// The first `Later` button's control id; each next one takes the next id.
    pub const LATER: i32 = 103;

    /// What stdin's reader posts to the window for `later`: make one more `Later` button.
    const WM_LATER: u32 = WM_APP + 1;

    /// Whether `WM_GETOBJECT` hangs (the `hang` argument).
    static HANG: AtomicBool = AtomicBool::new(false);
    /// The main window, for stdin's reader (0 before it exists).
    static MAIN: AtomicUsize = AtomicUsize::new(0);
    /// `Later` buttons made so far.
    static LATERS: AtomicI32 = AtomicI32::new(0);

    pub fn say(line: &str) {
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

    /// One child control of `parent`.
    fn child(parent: HWND, class: &str, text: &str, style: u32, id: i32, at: (i32, i32, i32, i32)) {
        let (class, text) = (wide(class), wide(text));
        // SAFETY: the buffers outlive the call; `parent` is our own window.
        let hwnd = unsafe {
            CreateWindowExW(
                0,
                class.as_ptr(),
                text.as_ptr(),
                WS_CHILD | WS_VISIBLE | style,
                at.0,
                at.1,
                at.2,
                at.3,
                parent,
                id as isize as _,
                GetModuleHandleW(std::ptr::null()),
                std::ptr::null(),
            )
        };
        if hwnd.is_null() {
            fail("FAILED CreateWindowExW (child)");
        }
    }

    unsafe extern "system" fn wndproc(hwnd: HWND, msg: u32, w: WPARAM, l: LPARAM) -> LRESULT {
        if msg == WM_GETOBJECT && HANG.load(Ordering::SeqCst) {
            say("GETOBJECT hanging");
            std::thread::sleep(std::time::Duration::from_secs(20));
        }
        if msg == WM_LATER {
            let n = LATERS.fetch_add(1, Ordering::SeqCst);
            let id = LATER + n;
            // Two a row right of OK, rows below it; past three rows they overlap (no test makes so many).
            let at = (110 + 90 * (n % 2), 90 + 34 * (n / 2).min(2), 80, 28);
            child(hwnd, "BUTTON", "&Later", WS_TABSTOP | BS_PUSHBUTTON as u32, id, at);
            say(&format!("LATER id={id}"));
            return 0;
        }
        if msg == WM_COMMAND {
            let id = (w & 0xFFFF) as i32;
            let code = ((w >> 16) & 0xFFFF) as u32;
            // SAFETY: queries of our own child windows.
            unsafe {
                match (id, code) {
                    (CHECK, BN_CLICKED) => {
                        let state = SendMessageW(GetDlgItem(hwnd, CHECK), BM_GETCHECK, 0, 0);
                        say(&format!("CHECK id={id} state={state}"));
                    }
                    (_, BN_CLICKED) => say(&format!("CLICKED id={id}")),
                    (EDIT, EN_CHANGE) => {
                        let mut buf = [0u16; 256];
                        let n = GetWindowTextW(GetDlgItem(hwnd, EDIT), buf.as_mut_ptr(), buf.len() as i32);
                        say(&format!("EDIT text={}", String::from_utf16_lossy(&buf[..n.max(0) as usize])));
                    }
                    _ => {}
                }
            }
            let _ = l;
            return 0;
        }
        // SAFETY: the default procedure, for our own window's message.
        unsafe { test_window::default_wndproc(hwnd, msg, w, l) }
    }

    pub fn main() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let title = args.first().cloned().unwrap_or_else(|| fail("USAGE no title"));
        let at = |i: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or_else(|| fail("USAGE bad x/y"));
        let (x, y): (i32, i32) = (at(1), at(2));
        HANG.store(args.get(3).is_some_and(|a| a == "hang"), Ordering::SeqCst);
        let own = args.get(3).is_some_and(|a| a == "own");
        if own {
            // The own panel's objects are called from other processes through COM: a
            // single-threaded apartment, served by this thread's message loop.
            // SAFETY: once, on the window's thread, before any COM call.
            let hr = unsafe {
                windows::Win32::System::Com::CoInitializeEx(
                    None,
                    windows::Win32::System::Com::COINIT_APARTMENTTHREADED,
                )
            };
            if hr.is_err() {
                fail(&format!("FAILED CoInitializeEx {hr:?}"));
            }
        }
        let spec = Spec {
            class: "McecControls",
            title: &title,
            bounds: (x, y, if own { 640 } else { 360 }, 220),
            background: Some(0xF0F0F0),
            wndproc: Some(wndproc),
        };
        let hwnd = test_window::open(&spec).unwrap_or_else(|call| fail(&format!("FAILED {call}")));
        child(hwnd, "STATIC", "Name:", 0, LABEL, (10, 14, 60, 20));
        child(
            hwnd,
            "EDIT",
            "hello msaa",
            WS_BORDER | WS_TABSTOP | ES_AUTOHSCROLL as u32,
            EDIT,
            (80, 10, 200, 24),
        );
        child(hwnd, "BUTTON", "&Remember me", WS_TABSTOP | BS_AUTOCHECKBOX as u32, CHECK, (10, 50, 160, 24));
        child(hwnd, "BUTTON", "&OK", WS_TABSTOP | BS_PUSHBUTTON as u32, OK, (10, 90, 90, 28));
        if own && own_panel::open(hwnd, (360, 10, 260, 160)).is_none() {
            fail("FAILED the own panel");
        }
        // SAFETY: our own window, just created.
        unsafe { SetForegroundWindow(hwnd) };
        say(&format!("READY hwnd={:#x} pid={}", hwnd as usize, std::process::id()));
        MAIN.store(hwnd as usize, Ordering::SeqCst);
        std::thread::spawn(|| {
            for line in std::io::stdin().lock().lines().map_while(Result::ok) {
                command(line.trim());
            }
            std::process::exit(0);
        });
        test_window::run_message_loop();
        say("CLOSED");
        // The window is gone, the program is not: its thread goes on serving COM calls (the own
        // panel's objects, still referenced from elsewhere) until stdin closes.
        test_window::run_message_loop();
    }

    /// One line from stdin.
    fn command(line: &str) {
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("state"), None, _) => say(&format!("STATE {}", own_state::get().line())),
            (Some("later"), Some(ms), None) => match ms.parse::<u64>() {
                Ok(ms) => {
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(ms));
                        post(WM_LATER);
                    });
                }
                Err(_) => say(&format!("UNKNOWN {line}")),
            },
            (Some("close"), None, _) => post(WM_CLOSE),
            _ => say(&format!("UNKNOWN {line}")),
        }
    }

    /// Posts `msg` to the main window (handled on its thread).
    fn post(msg: u32) {
        // SAFETY: a message without pointers to our own window (a stale handle is refused).
        unsafe { PostMessageW(MAIN.load(Ordering::SeqCst) as HWND, msg, 0, 0) };
    }
}
