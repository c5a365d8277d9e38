//! The host settings window's Agent tab: `Settings…` in the host menu opens it (and asks the
//! core for the session list); the checkbox, the row `Delete`, `Delete all` and `Provision
//! new…` only report events, and the checkbox asks for the opposite of the value the core
//! confirmed without flipping itself; inside a session copy the checkbox is disabled.

mod common;

use std::time::Duration;

use common::{Demo, Rect, Shot, Xvfb};
use mcec_operator::{HOST_TITLE, SETTINGS_TITLE};

/// Offsets from the top-left corner of the window (egui's default dark theme at scale 1).
const MENU_BUTTON: (i32, i32) = (24, 12);
const MENU_SETTINGS_ITEM: (i32, i32) = (40, 40);
const CHECKBOX: (i32, i32) = (15, 43);
const DELETE_ALL: (i32, i32) = (257, 145);
const FIRST_ROW_DELETE: (i32, i32) = (296, 191);
const PROVISION_NEW: (i32, i32) = (355, 145);
// The demo's sample handoff offers JSON, Claude Desktop and Codex CLI.
const CLAUDE_DESKTOP: (i32, i32) = (162, 330);
const CODEX_CLI: (i32, i32) = (261, 330);
const COPY_STDIO: (i32, i32) = (63, 353);
const COPY_HTTP: (i32, i32) = (182, 353);

fn click(display: &str, window: Rect, at: (i32, i32)) {
    let (x, y) = (window.x + at.0, window.y + at.1);
    common::xdotool(display, &["mousemove", &x.to_string(), &y.to_string()]);
    std::thread::sleep(Duration::from_millis(200));
    common::xdotool(display, &["click", "1"]);
    std::thread::sleep(Duration::from_millis(500));
}

fn window(display: &str, title: &str) -> Rect {
    let id = common::wait_for_window(display, &format!("^{title}$"));
    common::geometry(display, id)
}

#[test]
fn agent_tab_reports_clicks_and_never_flips_the_checkbox_itself() {
    let x = Xvfb::start();
    let mut demo = Demo::start(&x.display, &["--main-thread", "host"]);
    let host = window(&x.display, HOST_TITLE);

    click(&x.display, host, MENU_BUTTON);
    Shot::take(&x.display, "agent-host-menu.png");
    click(&x.display, host, MENU_SETTINGS_ITEM);
    demo.expect("event RefreshSessions");
    let settings = window(&x.display, SETTINGS_TITLE);

    demo.send("session 0123456789ab 5m 12_KiB stale");
    demo.send("session 00000000000b 3h 40.0_MiB running");
    std::thread::sleep(Duration::from_millis(500));
    Shot::take(&x.display, "agent-tab-rows.png");

    // Off as confirmed: a click asks for on, and the box stays as the core last said.
    click(&x.display, settings, CHECKBOX);
    demo.expect("event SetProvisioning { enabled: true");
    click(&x.display, settings, CHECKBOX);
    demo.expect("event SetProvisioning { enabled: true");
    demo.send("agent allow");
    click(&x.display, settings, CHECKBOX);
    demo.expect("event SetProvisioning { enabled: false");

    click(&x.display, settings, FIRST_ROW_DELETE);
    demo.expect("event DeleteSession { id: \"0123456789ab\" }");
    click(&x.display, settings, DELETE_ALL);
    demo.expect("event DeleteAllSessions");
    demo.send("agent allow");
    click(&x.display, settings, PROVISION_NEW);
    demo.expect("event ProvisionNew");
    demo.send("handoff");
    std::thread::sleep(Duration::from_millis(500));
    Shot::take(&x.display, "agent-tab-handoff.png");

    // The client choice picks which entry a Copy names; a client without an HTTP entry has
    // its HTTP Copy disabled (the next event must be the stdio Copy that follows it).
    click(&x.display, settings, CODEX_CLI);
    click(&x.display, settings, COPY_STDIO);
    demo.expect("event CopyHandoff { client: \"Codex CLI\", part: Stdio }");
    click(&x.display, settings, COPY_HTTP);
    demo.expect("event CopyHandoff { client: \"Codex CLI\", part: Http }");
    click(&x.display, settings, CLAUDE_DESKTOP);
    Shot::take(&x.display, "agent-tab-claude-desktop.png");
    click(&x.display, settings, COPY_HTTP);
    click(&x.display, settings, COPY_STDIO);
    demo.expect("event CopyHandoff { client: \"Claude Desktop\", part: Stdio }");

    // Inside a session copy the checkbox is disabled: a click reports nothing.
    demo.send("agent copy");
    std::thread::sleep(Duration::from_millis(300));
    click(&x.display, settings, CHECKBOX);
    Shot::take(&x.display, "agent-tab-session-copy.png");
    let events: Vec<_> = demo.drain().into_iter().filter(|l| l.starts_with("event")).collect();
    assert!(events.is_empty(), "clicks on a disabled checkbox were reported: {events:?}");

    demo.send("quit");
    demo.expect("exit ok");
}
