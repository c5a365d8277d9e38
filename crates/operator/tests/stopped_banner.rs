//! In the stopped state the overlay shows a red banner at the top of the screen and the
//! re-arm prompt is open; the overlay is tagged so the desktop tools can exclude it.

mod common;

use common::{Demo, Rect, Shot, Xvfb};
use mcec_operator::{OVERLAY_CLASS, OVERLAY_TITLE, PROMPT_TITLE};

const STOP_RED: [u8; 3] = [0xC6, 0x28, 0x28];

#[test]
fn stop_shows_red_banner_and_prompt() {
    let x = Xvfb::start();
    let mut demo = Demo::start(&x.display, &["overlay", "prompt"]);
    demo.send("narrate clicked at (412, 300)");
    demo.send("narrate typed 5 characters");
    demo.send("acting");
    demo.send("stop chord Ctrl+Alt+Shift+S");

    let prompt = common::wait_for_window(&x.display, PROMPT_TITLE);
    let overlay = common::wait_for_window(&x.display, OVERLAY_TITLE);
    let banner = common::geometry(&x.display, overlay);
    assert_eq!(banner.y, 0, "overlay sits at the top: {banner:?}");
    let prompt_rect = common::geometry(&x.display, prompt);
    // Both windows have painted their first frames: the banner's red, and the prompt no
    // longer the black of the bare screen.
    let top = |shot: &Shot| Rect { x: 0, y: 0, w: shot.width as i32, h: 40 };
    let what = "the red banner (over 10000 red pixels at the top) and the prompt";
    let shot = common::wait_for_shot(&x.display, "stopped-banner.png", what, |shot| {
        let prompt_black = shot.count_near(prompt_rect, [0, 0, 0], 0) as i32;
        shot.count_near(top(shot), STOP_RED, 12) > 10_000 && prompt_black < prompt_rect.w * prompt_rect.h / 2
    });
    // The banner is centred: the screen corners stay untouched.
    assert_eq!(shot.pixel(2, 2), [0, 0, 0]);

    // Click-through: the pointer over the banner is over whatever lies beneath it.
    common::xdotool(&x.display, &["mousemove", "640", "20"]);
    let under = common::xdotool(&x.display, &["getmouselocation", "--shell"]);
    assert!(under.contains("WINDOW="), "{under}");
    assert!(!under.contains(&format!("WINDOW={overlay}\n")), "the overlay takes the pointer: {under}");

    assert!(prompt_rect.w > 300 && prompt_rect.h > 150, "{prompt_rect:?}");

    // The tag is applied from a helper thread shortly after the overlay maps.
    let tagged = |class: &str, hints: &str| {
        class.contains(OVERLAY_CLASS) && hints.contains("input or input focus: False")
    };
    let deadline = std::time::Instant::now() + common::PATIENCE;
    let (mut class, mut hints) = (String::new(), String::new());
    while !tagged(&class, &hints) && std::time::Instant::now() < deadline {
        class = common::xprop(&x.display, overlay, "WM_CLASS");
        hints = common::xprop(&x.display, overlay, "WM_HINTS");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(class.contains(OVERLAY_CLASS), "{class}");
    assert!(hints.contains("input or input focus: False"), "{hints}");

    demo.send("quit");
    demo.expect("exit ok");
}
