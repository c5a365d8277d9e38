//! A Windows test program that plays "another program": it sends the emergency-stop chord or
//! a left click with `SendInput`, as any process on the desktop could. The Wine tests check
//! that mcec's hook sees these events (as injected) and that the chord does not latch.
//! Not part of mcec.
//!
//!   mcec-send-input chord [--hotkey SPEC] [--mark]
//!   mcec-send-input click [--mark]
//!
//! `--mark` puts mcec's own `dwExtraInfo` mark on the events (to show the hook classifies
//! them as mcec's, not as the operator's). Prints `SENT ...` and exits 0, or exits 1.

#[cfg(windows)]
fn main() {
    use mcec_desktop_windows::inject::{self, Mark};
    use mcec_desktop_windows::vk::chord_strokes;
    use mcec_rules::hotkey::Hotkey;

    let args: Vec<String> = std::env::args().skip(1).collect();
    let mark = if args.iter().any(|a| a == "--mark") { Mark::Mcec } else { Mark::Foreign };
    let hotkey = match args.iter().position(|a| a == "--hotkey").and_then(|i| args.get(i + 1)) {
        Some(spec) => Hotkey::parse(spec).unwrap_or_else(|e| {
            eprintln!("bad --hotkey: {e}");
            std::process::exit(2)
        }),
        None => Hotkey::default(),
    };
    let result = match args.first().map(String::as_str) {
        Some("chord") => {
            let strokes = chord_strokes(hotkey);
            inject::send_keys(&strokes, mark).map(|()| format!("chord {hotkey} events={}", strokes.len()))
        }
        Some("click") => inject::click_left(mark).map(|()| "click events=2".to_string()),
        _ => {
            eprintln!("usage: mcec-send-input chord [--hotkey SPEC] [--mark] | click [--mark]");
            std::process::exit(2)
        }
    };
    match result {
        Ok(what) => println!("SENT {what} mark={mark:?}"),
        Err(e) => {
            println!("SEND-FAILED {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(not(windows))]
fn main() {
    eprintln!("mcec-send-input is a Windows program: build it with scripts/windows-build");
    std::process::exit(2);
}
