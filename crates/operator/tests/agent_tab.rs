//! The host settings window's Agent tab: `Settings…` in the host menu opens it (and asks the
//! core for the session list); the row `Delete`, `Delete all` and `Provision new…` only
//! report events; the checkbox only opens the confirmation prompt, whose `Confirm` asks for
//! the opposite of the value the core confirmed without flipping anything itself; inside a
//! session copy the checkbox is disabled.

mod common;

use common::{Demo, Rect, Shot, Xvfb};
use mcec_operator::{HOST_TITLE, OPT_IN_TITLE, SETTINGS_TITLE};

/// Offsets from the top-left corner of the window (egui's default dark theme at scale 1).
const MENU_BUTTON: (i32, i32) = (24, 12);
const MENU_SETTINGS_ITEM: (i32, i32) = (40, 40);
const CHECKBOX: (i32, i32) = (15, 43);
/// `Confirm` in the opt-in's confirmation prompt.
const CONFIRM: (i32, i32) = (40, 92);
/// A spot of the settings window with no control under it.
const EMPTY_SPOT: (i32, i32) = (500, 400);
const DELETE_ALL: (i32, i32) = (257, 145);
const FIRST_ROW_DELETE: (i32, i32) = (296, 191);
const PROVISION_NEW: (i32, i32) = (355, 145);
// The demo's sample handoff offers JSON, Claude Desktop and Codex CLI.
const CLAUDE_DESKTOP: (i32, i32) = (162, 330);
const CODEX_CLI: (i32, i32) = (261, 330);
const COPY_STDIO: (i32, i32) = (63, 353);
const COPY_HTTP: (i32, i32) = (182, 353);

fn window(display: &str, title: &str) -> Rect {
    let id = common::wait_for_window(display, &format!("^{title}$"));
    common::geometry(display, id)
}

#[test]
fn agent_tab_reports_clicks_and_never_flips_the_checkbox_itself() {
    let x = Xvfb::start();
    let mut demo = Demo::start(&x.display, &["--main-thread", "host"]);
    let host = window(&x.display, HOST_TITLE);

    let before = Shot::take(&x.display, "agent-host.png");
    let menu_rows = Rect { x: host.x, y: host.y + 25, w: 120, h: 60 };
    common::click_until_changed(&x.display, host, MENU_BUTTON, &before, menu_rows, "agent-host-menu.png");
    common::click(&x.display, host, MENU_SETTINGS_ITEM);
    demo.expect("event RefreshSessions");
    let settings = window(&x.display, SETTINGS_TITLE);

    let empty = common::wait_for_shot(&x.display, "agent-tab.png", "the settings window", |s| {
        (s.count_near(settings, [0, 0, 0], 0) as i32) < settings.w * settings.h / 2
    });
    demo.send("session 0123456789ab 5m 12_KiB stale");
    demo.send("session 00000000000b 3h 40.0_MiB running");
    let rows = Rect { x: settings.x, y: settings.y + 165, w: settings.w, h: 65 };
    common::wait_for_shot(&x.display, "agent-tab-rows.png", "the session rows", |s| {
        s.count_changed(&empty, rows) > 100
    });

    // Off as confirmed: a click opens the confirmation, whose Confirm asks for on (twice: the
    // prompt stays until the core says the value changed), and nothing flips by itself.
    common::click(&x.display, settings, CHECKBOX);
    let confirm = window(&x.display, OPT_IN_TITLE);
    common::click(&x.display, confirm, CONFIRM);
    demo.expect("event SetProvisioning { enabled: true");
    common::click(&x.display, confirm, CONFIRM);
    demo.expect("event SetProvisioning { enabled: true");
    demo.send("agent allow");
    common::wait_until_gone(&x.display, OPT_IN_TITLE);
    // A first click on the settings window after the prompt's focus only focuses it.
    common::click(&x.display, settings, EMPTY_SPOT);
    common::click(&x.display, settings, CHECKBOX);
    let confirm = window(&x.display, OPT_IN_TITLE);
    common::click(&x.display, confirm, CONFIRM);
    demo.expect("event SetProvisioning { enabled: false");
    demo.send("agent deny");
    common::wait_until_gone(&x.display, OPT_IN_TITLE);
    common::click(&x.display, settings, EMPTY_SPOT);

    common::click(&x.display, settings, FIRST_ROW_DELETE);
    demo.expect("event DeleteSession { id: \"0123456789ab\" }");
    common::click(&x.display, settings, DELETE_ALL);
    demo.expect("event DeleteAllSessions");
    demo.send("agent allow");
    common::click(&x.display, settings, PROVISION_NEW);
    demo.expect("event ProvisionNew");
    let before = Shot::take(&x.display, "agent-tab-before-handoff.png");
    demo.send("handoff");
    let handoff_area = Rect { x: settings.x, y: settings.y + 300, w: settings.w, h: 80 };
    let handoff = common::wait_for_shot(&x.display, "agent-tab-handoff.png", "the handoff", |s| {
        s.count_changed(&before, handoff_area) > 100
    });

    // The client choice picks which entry a Copy names; a client without an HTTP entry has
    // its HTTP Copy disabled (the next event must be the stdio Copy that follows it).
    let codex = common::click_until_changed(
        &x.display,
        settings,
        CODEX_CLI,
        &handoff,
        handoff_area,
        "agent-tab-codex.png",
    );
    common::click(&x.display, settings, COPY_STDIO);
    demo.expect("event CopyHandoff { client: \"Codex CLI\", part: Stdio }");
    common::click(&x.display, settings, COPY_HTTP);
    demo.expect("event CopyHandoff { client: \"Codex CLI\", part: Http }");
    let claude = "agent-tab-claude-desktop.png";
    common::click_until_changed(&x.display, settings, CLAUDE_DESKTOP, &codex, handoff_area, claude);
    common::click(&x.display, settings, COPY_HTTP);
    common::click(&x.display, settings, COPY_STDIO);
    demo.expect("event CopyHandoff { client: \"Claude Desktop\", part: Stdio }");

    // Inside a session copy the checkbox is disabled (drawn dimmer): a click reports nothing.
    let enabled = Shot::take(&x.display, "agent-tab-enabled.png");
    demo.send("agent copy");
    let checkbox_row = Rect { x: settings.x, y: settings.y + 30, w: settings.w, h: 30 };
    common::wait_for_shot(&x.display, "agent-tab-session-copy.png", "the disabled checkbox", |s| {
        s.count_changed(&enabled, checkbox_row) > 100
    });
    common::click(&x.display, settings, CHECKBOX);
    // The UI takes clicks in order: once the Copy that follows is reported, the checkbox's
    // click has been handled, and `expect` fails on any event reported before it.
    common::click(&x.display, settings, COPY_STDIO);
    demo.expect("event CopyHandoff { client: \"Claude Desktop\", part: Stdio }");

    demo.send("quit");
    demo.expect("exit ok");
}
