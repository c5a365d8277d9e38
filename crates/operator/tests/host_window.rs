//! Plain `mcec`: the host window shows the status, its menu offers the re-arm item only while
//! stopped and reports it; the overlay narrates while acting and says `Re-armed` briefly.
//! The UI runs on the process's main thread here (`run_operator_ui`).

mod common;

use common::{Demo, Rect, Shot, Xvfb};
use mcec_operator::{HOST_TITLE, OVERLAY_TITLE, PROMPT_TITLE};

const ACTING_NAVY: [u8; 3] = [0x1F, 0x2A, 0x44];
const REARMED_GREEN: [u8; 3] = [0x2E, 0x7D, 0x32];
/// The host window's status text while acting, stopped and armed.
const ACTING_BLUE: [u8; 3] = [0x64, 0xB5, 0xF6];
const STOPPED_RED: [u8; 3] = [0xE5, 0x39, 0x35];
const ARMED_GREEN: [u8; 3] = [0x81, 0xC7, 0x84];
/// The painted ⛔ in the menu item, and the menu bar's `mcec` button, relative to the host
/// window (egui's default dark theme at scale 1).
const MENU_BUTTON: (i32, i32) = (24, 12);
const MENU_REARM_ITEM: (i32, i32) = (110, 40);
/// `Quit` follows `Settings…` while armed (the re-arm item is absent).
const MENU_QUIT_ITEM_ARMED: (i32, i32) = (22, 62);

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
    demo.send("narrate clicked at (412, 300)");
    demo.send("narrate typed 5 characters");
    common::wait_for_window(&x.display, OVERLAY_TITLE);
    let status = Rect { x: host.x, y: host.y + 25, w: 300, h: 40 };
    let what = "the acting banner (over 5000 navy pixels) and the host's acting status";
    let acting = common::wait_for_shot(&x.display, "acting-banner.png", what, |s| {
        s.count_near(top_strip(s), ACTING_NAVY, 6) > 5_000 && s.count_near(status, ACTING_BLUE, 40) > 50
    });

    // Not stopped: the menu has no re-arm item (no red sign in its first row). The menu did
    // open: its first rows changed when the button was clicked.
    let first_row = Rect { x: host.x, y: host.y + 25, w: 60, h: 30 };
    let menu_rows = Rect { h: 60, w: 120, ..first_row };
    let menu =
        common::click_until_changed(&x.display, host, MENU_BUTTON, &acting, menu_rows, "host-menu-armed.png");
    let red_sign = menu.count_near(first_row, STOPPED_RED, 10);
    assert_eq!(red_sign, 0, "re-arm item shown while armed");
    common::click_until_changed(
        &x.display,
        host,
        (MENU_BUTTON.0 + 300, MENU_BUTTON.1 + 100),
        &menu,
        menu_rows,
        "host-menu-closed.png",
    );

    demo.send("stop chord Ctrl+Alt+Shift+S");
    let stopped = common::wait_for_shot(&x.display, "host-stopped.png", "the host's stopped status", |s| {
        s.count_near(status, STOPPED_RED, 10) > 50
    });
    common::click_until_changed(&x.display, host, MENU_BUTTON, &stopped, menu_rows, "host-menu-stopped.png");
    // The item decides nothing: it opens the re-arm prompt, whose click the core judges.
    common::click(&x.display, host, MENU_REARM_ITEM);
    common::wait_for_window(&x.display, PROMPT_TITLE);

    demo.send("rearm");
    common::wait_for_shot(&x.display, "rearmed.png", "the re-armed line (over 5000 green pixels)", |s| {
        s.count_near(top_strip(s), REARMED_GREEN, 6) > 5_000
    });
    common::wait_until_gone(&x.display, OVERLAY_TITLE);

    let armed = common::wait_for_shot(&x.display, "host-armed.png", "the host's armed status", |s| {
        s.count_near(status, ARMED_GREEN, 40) > 50
    });
    common::click_until_changed(&x.display, host, MENU_BUTTON, &armed, menu_rows, "host-menu-quit.png");
    common::click(&x.display, host, MENU_QUIT_ITEM_ARMED);
    demo.expect("event Quit");
    demo.expect("exit ok");
    let rest: Vec<_> = demo.drain().into_iter().filter(|l| l.starts_with("event")).collect();
    assert!(rest.is_empty(), "unexpected events {rest:?}");
}
