//! Closing the prompt window (WM_DELETE_WINDOW, as a window manager sends it) leaves the
//! stop latched and hides the prompt, also after it was reopened.
//!
//! Known issue: under Xvfb with eframe 0.37 the first close request to a fresh prompt window
//! is occasionally dropped before it reaches the prompt (about one window in five here); a
//! second request always worked. Dropping it is fail-safe (the prompt stays up, the stop
//! stays latched), so the test allows up to three requests per window.

mod common;

use std::time::{Duration, Instant};

use common::{Demo, Xvfb};
use mcec_operator::PROMPT_TITLE;

const TRIES: usize = 3;

#[test]
fn closing_the_prompt_leaves_stopped() {
    let x = Xvfb::start(83);
    let mut demo = Demo::start(&x.display, &["prompt"]);
    demo.send("stop chord Ctrl+Alt+Shift+S");
    for round in 0..3 {
        if round > 0 {
            demo.send("open");
        }
        let prompt = common::wait_for_window(&x.display, PROMPT_TITLE);
        std::thread::sleep(Duration::from_millis(500));
        let mut events = Vec::new();
        for _ in 0..TRIES {
            send_delete_window(&x.display, prompt);
            let asked = Instant::now();
            while events.is_empty() && asked.elapsed() < Duration::from_secs(3) {
                std::thread::sleep(Duration::from_millis(50));
                events = demo.drain();
            }
            if !events.is_empty() {
                break;
            }
        }
        assert_eq!(events, ["event LeaveStopped"], "round {round}");
        common::wait_until_gone(&x.display, PROMPT_TITLE);
    }
    demo.close_stdin();
    demo.expect("exit ok");
}

fn send_delete_window(display: &str, window: u32) {
    use x11rb::connection::Connection as _;
    use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt as _, EventMask};
    let (conn, _) = x11rb::connect(Some(display)).expect("connect");
    let atom =
        |name: &str| conn.intern_atom(false, name.as_bytes()).expect("intern").reply().expect("atom").atom;
    let protocols = atom("WM_PROTOCOLS");
    let delete = atom("WM_DELETE_WINDOW");
    let event = ClientMessageEvent::new(32, window, protocols, [delete, 0, 0, 0, 0]);
    conn.send_event(false, window, EventMask::NO_EVENT, event).expect("send");
    conn.flush().expect("flush");
}
