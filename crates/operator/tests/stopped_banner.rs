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
    demo.send("narrate click (412, 300)");
    demo.send("narrate type \"hello\"");
    demo.send("acting");
    demo.send("stop chord Ctrl+Alt+Shift+S");

    let prompt = common::wait_for_window(&x.display, PROMPT_TITLE);
    let overlay = common::wait_for_window(&x.display, OVERLAY_TITLE);
    // Let both windows paint their first frames.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let shot = Shot::take(&x.display, "stopped-banner.png");

    let banner = common::geometry(&x.display, overlay);
    assert_eq!(banner.y, 0, "overlay sits at the top: {banner:?}");
    let top = Rect { x: 0, y: 0, w: shot.width as i32, h: 40 };
    let red = shot.count_near(top, STOP_RED, 12);
    assert!(red > 10_000, "only {red} red pixels at the top");
    // The banner is centred: the screen corners stay untouched.
    assert_eq!(shot.pixel(2, 2), [0, 0, 0]);

    // Click-through: the pointer over the banner is over whatever lies beneath it.
    common::xdotool(&x.display, &["mousemove", "640", "20"]);
    let under = common::xdotool(&x.display, &["getmouselocation", "--shell"]);
    assert!(under.contains("WINDOW="), "{under}");
    assert!(!under.contains(&format!("WINDOW={overlay}\n")), "the overlay takes the pointer: {under}");

    let prompt_rect = common::geometry(&x.display, prompt);
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
