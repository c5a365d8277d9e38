//! Plain `mcec`: the host window shows the status, its menu offers the re-arm item only while
//! stopped and reports it; the overlay narrates while acting and says `Re-armed` briefly.
//! The UI runs on the process's main thread here (`run_operator_ui`).

mod common;

use common::{Demo, Rect, Shot, Xvfb};
use mcec_operator::{HOST_TITLE, OVERLAY_TITLE};

const ACTING_NAVY: [u8; 3] = [0x1F, 0x2A, 0x44];
const REARMED_GREEN: [u8; 3] = [0x2E, 0x7D, 0x32];
/// The painted ⛔ in the menu item, and the menu bar's `mcec` button, relative to the host
/// window (egui's default dark theme at scale 1).
const MENU_BUTTON: (i32, i32) = (24, 12);
const MENU_REARM_ITEM: (i32, i32) = (110, 40);
/// `Quit` follows `Settings…` while armed (the re-arm item is absent).
const MENU_QUIT_ITEM_ARMED: (i32, i32) = (22, 62);

fn click(display: &str, host: Rect, at: (i32, i32)) {
    let (x, y) = (host.x + at.0, host.y + at.1);
    common::xdotool(display, &["mousemove", &x.to_string(), &y.to_string()]);
    std::thread::sleep(std::time::Duration::from_millis(200));
    common::xdotool(display, &["click", "1"]);
    std::thread::sleep(std::time::Duration::from_millis(500));
}

fn top_strip(shot: &Shot) -> Rect {
    Rect { x: 0, y: 0, w: shot.width as i32, h: 30 }
}

#[test]
fn host_menu_rearm_and_overlay_states() {
    let x = Xvfb::start();
    let mut demo = Demo::start(&x.display, &["--main-thread", "overlay", "host"]);
    let host_name = format!("^{HOST_TITLE}$");
    let host = common::wait_for_window(&x.display, &host_name);
    let host = common::geometry(&x.display, host);

    demo.send("door MCP on 127.0.0.1:8765");
    demo.send("acting");
    demo.send("narrate click (412, 300)");
    demo.send("narrate type \"hello\"");
    common::wait_for_window(&x.display, OVERLAY_TITLE);
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let acting = Shot::take(&x.display, "acting-banner.png");
    let navy = acting.count_near(top_strip(&acting), ACTING_NAVY, 6);
    assert!(navy > 5_000, "acting banner missing ({navy} px)");

    // Not stopped: the menu has no re-arm item (no red sign in its first row). The menu did
    // open: its first rows changed when the button was clicked.
    let first_row = Rect { x: host.x, y: host.y + 25, w: 60, h: 30 };
    let closed = Shot::take(&x.display, "host-menu-closed.png");
    click(&x.display, host, MENU_BUTTON);
    let menu = Shot::take(&x.display, "host-menu-armed.png");
    click(&x.display, host, (MENU_BUTTON.0 + 300, MENU_BUTTON.1 + 100));
    let opened = menu.count_changed(&closed, Rect { h: 60, w: 120, ..first_row });
    assert!(opened > 300, "the menu did not open ({opened} px changed)");
    let red_sign = menu.count_near(first_row, [0xE5, 0x39, 0x35], 10);
    assert_eq!(red_sign, 0, "re-arm item shown while armed");

    demo.send("stop chord Ctrl+Alt+Shift+S");
    std::thread::sleep(std::time::Duration::from_millis(800));
    click(&x.display, host, MENU_BUTTON);
    Shot::take(&x.display, "host-menu-stopped.png");
    click(&x.display, host, MENU_REARM_ITEM);
    demo.expect("event MenuRearm");

    demo.send("rearm");
    std::thread::sleep(std::time::Duration::from_millis(400));
    let rearmed = Shot::take(&x.display, "rearmed.png");
    let green = rearmed.count_near(top_strip(&rearmed), REARMED_GREEN, 6);
    assert!(green > 5_000, "re-armed line missing ({green} px)");
    common::wait_until_gone(&x.display, OVERLAY_TITLE);

    click(&x.display, host, MENU_BUTTON);
    click(&x.display, host, MENU_QUIT_ITEM_ARMED);
    demo.expect("event Quit");
    demo.expect("exit ok");
    let rest: Vec<_> = demo.drain().into_iter().filter(|l| l.starts_with("event")).collect();
    assert!(rest.is_empty(), "unexpected events {rest:?}");
}
