//! Closing the prompt window (WM_DELETE_WINDOW, as a window manager sends it) leaves the
//! stop latched and hides the prompt, also after it was reopened. One request per window:
//! the first is answered (`prompt_stress.rs` checks that over many windows).

mod common;

use common::{Demo, Xvfb};
use mcec_operator::PROMPT_TITLE;

#[test]
fn closing_the_prompt_leaves_stopped() {
    let x = Xvfb::start();
    let mut demo = Demo::start(&x.display, &["prompt"]);
    demo.send("stop chord Ctrl+Alt+Shift+S");
    for round in 0..3 {
        if round > 0 {
            demo.send("open");
        }
        let prompt = common::wait_for_window(&x.display, PROMPT_TITLE);
        common::send_delete_window(&x.display, prompt);
        demo.expect("event LeaveStopped");
        let rest: Vec<_> = demo.drain().into_iter().filter(|l| l.starts_with("event")).collect();
        assert!(rest.is_empty(), "round {round}: more than one answer: {rest:?}");
        common::wait_until_gone(&x.display, PROMPT_TITLE);
    }
    demo.close_stdin();
    demo.expect("exit ok");
}
