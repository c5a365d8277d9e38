//! A Windows test program: a window that runs mcec's emergency-stop hook monitor and prints,
//! one line each, what the hook saw and when the latch tripped. The Wine tests
//! (tests/windows) focus its window, type the chord from the X server (the operator's hand)
//! or with SendInput from another process, and read these lines. Not part of mcec.
//!
//!   mcec-stop-probe [--hotkey SPEC] [--release-on-trip]
//!
//! Lines: `READY`, `EVENT ...` per key or button, `LATCHED ...` per trip (`woke_ns`: from the
//! latch engaging in the hook callback to this worker holding the notice), `RELEASED n` after
//! mcec's own marked release of the modifiers (with `--release-on-trip`), `STATS ...` when
//! stdin closes, then the program exits.

#[cfg(windows)]
fn main() {
    probe::main();
}

#[cfg(not(windows))]
fn main() {
    eprintln!("mcec-stop-probe is a Windows program: build it with scripts/windows-build");
    std::process::exit(2);
}

#[cfg(windows)]
#[path = "common/test_window.rs"]
mod test_window;

#[cfg(windows)]
mod probe {
    use std::io::BufRead;
    use std::sync::mpsc;
    use std::time::UNIX_EPOCH;

    use mcec_desktop::monitor::{LastPhysicalInput, MonitorSink};
    use mcec_desktop_windows::hook::{self, HookConfig, HookEvent, HookInput};
    use mcec_desktop_windows::inject;
    use mcec_rules::StopFlag;
    use mcec_rules::hotkey::Hotkey;
    use mcec_rules::latch::Latch;
    use windows_sys::Win32::UI::WindowsAndMessaging::CW_USEDEFAULT;

    use crate::test_window::{self, Spec};

    pub const TITLE: &str = "mcec stop probe";

    pub fn main() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let hotkey = match args.iter().position(|a| a == "--hotkey") {
            Some(i) => match args.get(i + 1).map(|s| Hotkey::parse(s)) {
                Some(Ok(h)) => h,
                other => fail(&format!("bad --hotkey: {other:?}")),
            },
            None => Hotkey::default(),
        };
        let release_on_trip = args.iter().any(|a| a == "--release-on-trip");

        let latch = Latch::new(StopFlag::new());
        let (tx, rx) = mpsc::sync_channel::<HookEvent>(4096);
        let sink = MonitorSink::new(latch.clone(), hotkey, LastPhysicalInput::new());
        let cfg = HookConfig { sink, events: Some(tx) };
        let monitor = match hook::start(cfg) {
            Ok(m) => m,
            Err(e) => fail(&format!("HOOK-FAILED {e}")),
        };
        std::thread::spawn(move || print_events(rx));
        std::thread::spawn(move || print_trips(latch, release_on_trip));
        let spec = Spec {
            class: "McecStopProbe",
            title: TITLE,
            bounds: (CW_USEDEFAULT, CW_USEDEFAULT, 320, 200),
            background: None,
            wndproc: Some(test_window::default_wndproc),
        };
        let hwnd = test_window::open(&spec).unwrap_or_else(|call| fail(&format!("WINDOW-FAILED {call}")));
        println!("READY hwnd={:#x} chord={hotkey}", hwnd as usize);
        std::thread::spawn(move || {
            // Quit when the test closes stdin (or says "quit").
            for line in std::io::stdin().lock().lines() {
                if line.map_or(true, |l| l.trim() == "quit") {
                    break;
                }
            }
            let s = monitor.stats();
            println!(
                "STATS events={} total_ns={} max_ns={} running={}",
                s.events,
                s.total_nanos,
                s.max_nanos,
                monitor.is_running()
            );
            drop(monitor);
            std::process::exit(0);
        });
        test_window::run_message_loop();
    }

    fn fail(msg: &str) -> ! {
        println!("{msg}");
        std::process::exit(3);
    }

    /// Polls rather than blocks, so the hook's `try_send` never has to wake this thread from
    /// inside the callback.
    fn print_events(rx: mpsc::Receiver<HookEvent>) {
        loop {
            let ev = match rx.try_recv() {
                Ok(ev) => ev,
                Err(mpsc::TryRecvError::Empty) => {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    continue;
                }
                Err(mpsc::TryRecvError::Disconnected) => break,
            };
            let what = match ev.input {
                HookInput::Key { vk, .. } => format!("key vk={vk:#04x}"),
                HookInput::Button(b) => format!("button {b}"),
            };
            println!(
                "EVENT {what} down={} origin={} flags={:#x} work_ns={} tripped={}",
                u8::from(ev.down),
                ev.origin.name(),
                ev.flags,
                ev.work_nanos,
                u8::from(ev.tripped)
            );
        }
    }

    fn print_trips(latch: Latch, release_on_trip: bool) {
        while let Some(n) = latch.wait_for_trip() {
            let woke = n.trip.at.elapsed().as_nanos();
            let wall = n.trip.wall.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            println!("LATCHED kind={:?} wall_ns={wall} woke_ns={woke} reason={}", n.kind, n.trip.reason);
            if release_on_trip {
                match inject::release_modifiers() {
                    Ok(count) => println!("RELEASED {count}"),
                    Err(e) => println!("RELEASE-FAILED {e}"),
                }
            }
        }
    }
}
