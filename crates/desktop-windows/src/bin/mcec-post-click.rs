//! A Windows test program that plays "another program" clicking without any input at all: it
//! finds a top-level window by its exact title and hands it a left click as window messages,
//! so no low-level hook ever sees an event. The Wine tests check that such a click on an
//! operator window (Re-arm, Allow, the Agent tab's opt-in) never counts. Not part of mcec.
//!
//!   mcec-post-click post TITLE X Y [--count N] [--every MS]
//!         `PostMessageW` of `WM_MOUSEMOVE`, `WM_LBUTTONDOWN`, `WM_LBUTTONUP` at the desktop
//!         point (X, Y), given to the window in its client coordinates
//!   mcec-post-click send TITLE X Y [--count N] [--every MS]
//!         the same with `SendMessageW` (the window procedure runs at once, off its queue)
//!   mcec-post-click bm-click TITLE [--count N] [--every MS]
//!         `SendMessageW(BM_CLICK)`, which a button control turns into a press and release
//!   mcec-post-click broadcast NAME
//!         `SendNotifyMessageW(HWND_BROADCAST)` of the registered message NAME to every
//!         top-level window, as Explorer broadcasts `TaskbarCreated` when it starts
//!
//! `--count` repeats the click (default 1), `--every` waits between repeats (default 200 ms),
//! as an agent's loop would. Prints `POSTED <how> hwnd=0x.. client=X,Y count=N` and exits 0,
//! or prints `NO-WINDOW`/`FAILED` and exits 1.

#![allow(unsafe_code)]

#[cfg(windows)]
fn main() {
    use std::time::Duration;

    use windows_sys::Win32::Foundation::{HWND, POINT};
    use windows_sys::Win32::Graphics::Gdi::ScreenToClient;
    use windows_sys::Win32::UI::WindowsAndMessaging::{
        BM_CLICK, FindWindowW, HWND_BROADCAST, PostMessageW, RegisterWindowMessageW, SendMessageW,
        SendNotifyMessageW, WM_LBUTTONDOWN, WM_LBUTTONUP, WM_MOUSEMOVE,
    };

    /// `MK_LBUTTON` (winuser.h): the left button is down, in a mouse message's `wparam`.
    const MK_LBUTTON: usize = 0x0001;

    fn usage() -> ! {
        eprintln!(
            "usage: mcec-post-click post|send TITLE X Y [--count N] [--every MS] | bm-click TITLE [...] \
             | broadcast NAME"
        );
        std::process::exit(2)
    }
    fn fail(what: &str) -> ! {
        println!("FAILED {what}");
        std::process::exit(1)
    }
    fn option(args: &[String], name: &str, default: u64) -> u64 {
        match args.iter().position(|a| a == name) {
            Some(i) => args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or_else(|| usage()),
            None => default,
        }
    }

    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(how), Some(title)) = (args.first(), args.get(1)) else { usage() };
    if how == "broadcast" {
        let name: Vec<u16> = title.encode_utf16().chain([0]).collect();
        // SAFETY: a NUL-terminated name; then plain values broadcast without waiting.
        let sent = unsafe {
            let message = RegisterWindowMessageW(name.as_ptr());
            message != 0 && SendNotifyMessageW(HWND_BROADCAST, message, 0, 0) != 0
        };
        if !sent {
            fail("SendNotifyMessageW");
        }
        println!("BROADCAST {title}");
        return;
    }
    let count = option(&args, "--count", 1);
    let every = Duration::from_millis(option(&args, "--every", 200));
    let title_w: Vec<u16> = title.encode_utf16().chain([0]).collect();
    // SAFETY: a NUL-terminated title; no class name.
    let hwnd: HWND = unsafe { FindWindowW(std::ptr::null(), title_w.as_ptr()) };
    if hwnd.is_null() {
        println!("NO-WINDOW {title}");
        std::process::exit(1);
    }
    let point = |i: usize| args.get(i).and_then(|v| v.parse::<i32>().ok()).unwrap_or_else(|| usage());
    let mut client = POINT { x: 0, y: 0 };
    if how != "bm-click" {
        client = POINT { x: point(2), y: point(3) };
        // SAFETY: hwnd is a window handle (a stale one only makes the call fail); client is valid.
        if unsafe { ScreenToClient(hwnd, &mut client) } == 0 {
            fail("ScreenToClient");
        }
    }
    let lparam = ((client.y as u16 as isize) << 16) | (client.x as u16 as isize);
    let messages: &[(u32, usize)] = match how.as_str() {
        "post" | "send" => &[(WM_MOUSEMOVE, 0), (WM_LBUTTONDOWN, MK_LBUTTON), (WM_LBUTTONUP, 0)],
        "bm-click" => &[(BM_CLICK, 0)],
        _ => usage(),
    };
    for round in 0..count {
        if round > 0 {
            std::thread::sleep(every);
        }
        for &(msg, wparam) in messages {
            let lp = if msg == BM_CLICK { 0 } else { lparam };
            if how == "post" {
                // SAFETY: posting plain values to a window handle.
                if unsafe { PostMessageW(hwnd, msg, wparam, lp) } == 0 {
                    fail("PostMessageW");
                }
            } else {
                // SAFETY: sending plain values; the answer is ignored.
                unsafe { SendMessageW(hwnd, msg, wparam, lp) };
            }
        }
    }
    println!("POSTED {how} hwnd={:#x} client={},{} count={count}", hwnd as usize, client.x, client.y);
}

#[cfg(not(windows))]
fn main() {
    eprintln!("mcec-post-click is a Windows program: build it with scripts/windows-build");
    std::process::exit(2);
}
