//! The re-arm prompt reports a click on `Re-arm` (with no verdict of its own), shows the
//! core's refusal, leaves the stop latched on Esc and Enter, and reopens on request.
//! The UI runs on a dedicated thread here.

mod common;

use common::{Demo, Rect, Shot, Xvfb};
use mcec_operator::PROMPT_TITLE;

/// egui's dark-theme fill of an idle button.
const BUTTON_FILL: [u8; 3] = [50, 50, 50];
/// The colour the prompt draws the core's refusal in.
const REFUSAL_RED: [u8; 3] = [0xE5, 0x73, 0x73];
const REFUSAL: &str = "Re-arm refused: the click was not physical input";

/// Find the `Re-arm` button (the first idle-looking button in the prompt's lower half; the
/// focused `Leave stopped` looks different) and return the screen point at its centre.
fn rearm_button(shot: &Shot, prompt: Rect) -> (i32, i32) {
    let lower = Rect { x: prompt.x, y: prompt.y + prompt.h / 2, w: prompt.w, h: prompt.h / 2 };
    let mut top = None;
    let mut bottom = 0;
    for y in lower.y..lower.y + lower.h {
        let wide: Vec<_> =
            shot.runs(lower, y, BUTTON_FILL, 6).into_iter().filter(|(_, len)| *len >= 30).collect();
        if !wide.is_empty() {
            top.get_or_insert((y, wide[0]));
            bottom = y;
        }
    }
    let (top_y, (start, len)) = top.expect("a button in the prompt's lower half");
    (start + len / 2, (top_y + bottom) / 2)
}

#[test]
fn rearm_click_is_reported_and_dismissals_leave_stopped() {
    let x = Xvfb::start();
    let mut demo = Demo::start(&x.display, &["prompt"]);
    demo.send("stop chord Ctrl+Alt+Shift+S");
    let prompt = common::wait_for_window(&x.display, PROMPT_TITLE);
    let rect = common::geometry(&x.display, prompt);
    let shot =
        common::wait_for_shot(&x.display, "rearm-prompt-initial.png", "the prompt's buttons", |shot| {
            let lower = Rect { x: rect.x, y: rect.y + rect.h / 2, w: rect.w, h: rect.h / 2 };
            shot.count_near(lower, BUTTON_FILL, 6) > 1_000
        });
    let (bx, by) = rearm_button(&shot, rect);

    // An xdotool click is injected input: the toolkit presses the button all the same, and
    // only reports it. Deciding is the core's job.
    common::xdotool(&x.display, &["mousemove", &bx.to_string(), &by.to_string()]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    common::xdotool(&x.display, &["click", "1"]);
    demo.expect("event RearmClicked");
    assert!(
        !common::visible_windows(&x.display, PROMPT_TITLE).is_empty(),
        "the prompt waits for the core's verdict"
    );

    // Nothing in the refusal's colour before the refusal: the wait below cannot pass early.
    let red_text_in = |shot: &Shot| shot.count_near(rect, REFUSAL_RED, 30);
    assert!(red_text_in(&shot) <= 50, "refusal-coloured pixels before any refusal");
    demo.send(&format!("refuse {REFUSAL}"));
    let what = "the refusal text (over 50 pixels of its red)";
    common::wait_for_shot(&x.display, "rearm-prompt.png", what, |shot| red_text_in(shot) > 50);

    // Esc leaves it stopped and hides the prompt (the prompt took the keyboard focus when it
    // opened).
    common::xdotool(&x.display, &["key", "Escape"]);
    demo.expect("event LeaveStopped");
    common::wait_until_gone(&x.display, PROMPT_TITLE);

    // The chord again while stopped: the core reopens the prompt.
    demo.send("open");
    common::wait_for_window(&x.display, PROMPT_TITLE);
    std::thread::sleep(std::time::Duration::from_millis(500));
    common::xdotool(&x.display, &["key", "Return"]);
    demo.expect("event LeaveStopped");
    common::wait_until_gone(&x.display, PROMPT_TITLE);

    // Nothing else was reported: in particular no re-arm from Enter.
    let rest: Vec<_> = demo.drain().into_iter().filter(|l| l.starts_with("event")).collect();
    assert!(rest.is_empty(), "unexpected events {rest:?}");

    demo.close_stdin();
    demo.expect("exit ok");
}
