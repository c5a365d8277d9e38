//! Closing the prompt window (WM_DELETE_WINDOW, as a window manager sends it) leaves the
//! stop latched, every time the prompt is reopened.

mod common;

use common::{Demo, Xvfb};
use mcec_operator::PROMPT_TITLE;

#[test]
fn closing_the_prompt_leaves_stopped() {
    let x = Xvfb::start(83);
    let mut demo = Demo::start(&x.display, &["prompt"]);
    demo.send("stop chord Ctrl+Alt+Shift+S");
    for round in 0..6 {
        if round > 0 {
            demo.send("open");
        }
        let prompt = common::wait_for_window(&x.display, PROMPT_TITLE);
        std::thread::sleep(std::time::Duration::from_millis(2000));
        send_delete_window(&x.display, prompt);
        let t0 = std::time::Instant::now();
        let mut got = Vec::new();
        while got.is_empty() && t0.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(50));
            got = demo.drain();
        }
        eprintln!("DEBUG round {round} window {prompt}: {got:?}");
        if got.is_empty() {
            eprintln!("DEBUG now: {:?}", common::xdotool(&x.display, &["search", "--name", PROMPT_TITLE]));
            send_delete_window(&x.display, prompt);
            std::thread::sleep(std::time::Duration::from_millis(1000));
            eprintln!("DEBUG after resend: {:?}", demo.drain());
            panic!("lost");
        }
        common::wait_until_gone(&x.display, PROMPT_TITLE);
    }
    demo.close_stdin();
    demo.expect("exit ok");
}

fn send_delete_window(display: &str, window: u32) {
    use x11rb::connection::Connection as _;
    use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt as _, EventMask};
    let (conn, _) = x11rb::connect(Some(display)).expect("connect");
    let atom = |name: &str| {
        conn.intern_atom(false, name.as_bytes())
            .expect("intern")
            .reply()
            .expect("atom")
            .atom
    };
    let protocols = atom("WM_PROTOCOLS");
    let delete = atom("WM_DELETE_WINDOW");
    let event = ClientMessageEvent::new(32, window, protocols, [delete, 0, 0, 0, 0]);
    conn.send_event(false, window, EventMask::NO_EVENT, event)
        .expect("send");
    conn.flush().expect("flush");
}
