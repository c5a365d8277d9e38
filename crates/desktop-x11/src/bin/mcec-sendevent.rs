//! `mcec-sendevent`: clicks or presses a key in a window with `XSendEvent`, as a program
//! (or an agent's shell loop, `xdotool click --window`) would, to prove that mcec's operator
//! windows ignore such input. It is a test tool, not shipped behaviour.
//!
//! The events are core `ButtonPress`/`ButtonRelease` or `KeyPress`/`KeyRelease` sent straight
//! to the window named `title` (its `WM_NAME`), at `x`,`y` inside it. The server sets the
//! send-event bit; everything else, the time included, is the sender's choice. With
//! `--time-of-raw` the tool first waits for the next raw press from any device (the operator's
//! own click or key elsewhere) and stamps its events with that press's server time, the
//! strongest form of the forgery against a check that matches event times.
//!
//! ```sh
//! DISPLAY=:71 mcec-sendevent click "mcec: emergency stop" 60 150
//! DISPLAY=:71 mcec-sendevent --time-of-raw key "mcec: emergency stop" space
//! ```
//!
//! Exit 0 when the events were sent and the server answered a round trip after them; exit 1
//! with a message otherwise.

use std::process::ExitCode;

use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xinput::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    AtomEnum, BUTTON_PRESS_EVENT, BUTTON_RELEASE_EVENT, ButtonPressEvent, ConnectionExt as _, EventMask,
    KEY_PRESS_EVENT, KEY_RELEASE_EVENT, KeyButMask, KeyPressEvent, Window,
};
use x11rb::rust_connection::RustConnection;

#[path = "common/keyboard.rs"]
mod keyboard;
use keyboard::keycode;

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The first window under `root` (three levels deep) whose `WM_NAME` is `title`.
fn find(conn: &RustConnection, root: Window, title: &str, depth: u32) -> Result<Option<Window>, String> {
    let tree = conn.query_tree(root).map_err(text)?.reply().map_err(text)?;
    for &w in &tree.children {
        let name = conn.get_property(false, w, AtomEnum::WM_NAME, AtomEnum::ANY, 0, 256).map_err(text)?;
        if name.reply().is_ok_and(|n| n.value == title.as_bytes()) {
            return Ok(Some(w));
        }
    }
    if depth > 0 {
        for &w in &tree.children {
            if let Some(found) = find(conn, w, title, depth - 1)? {
                return Ok(Some(found));
            }
        }
    }
    Ok(None)
}

/// Waits for the next raw key or button press from any device and returns its server time.
fn next_raw_press_time(conn: &RustConnection, root: Window) -> Result<u32, String> {
    conn.xinput_xi_query_version(2, 2).map_err(text)?.reply().map_err(text)?;
    let mask = xinput::XIEventMask::RAW_KEY_PRESS | xinput::XIEventMask::RAW_BUTTON_PRESS;
    let masks = [xinput::EventMask { deviceid: 1, mask: vec![mask] }];
    conn.xinput_xi_select_events(root, &masks).map_err(text)?.check().map_err(text)?;
    println!("waiting for a raw press");
    loop {
        match conn.wait_for_event().map_err(text)? {
            Event::XinputRawKeyPress(e) => return Ok(e.time),
            Event::XinputRawButtonPress(e) => return Ok(e.time),
            _ => {}
        }
    }
}

fn keysym(name: &str) -> Result<u32, String> {
    use xkeysym::key as k;
    Ok(match name {
        "space" => k::space,
        "Return" => k::Return,
        "Tab" => k::Tab,
        "Escape" => k::Escape,
        other => return Err(format!("unknown key {other:?} (space, Return, Tab, Escape)")),
    })
}

enum What {
    Click { x: i16, y: i16 },
    Key(String),
}

fn send(title: &str, what: &What, copy_raw_time: bool) -> Result<(), String> {
    let (conn, screen) = RustConnection::connect(None).map_err(|e| format!("cannot open $DISPLAY: {e}"))?;
    let root = conn.setup().roots[screen].root;
    let window = find(&conn, root, title, 3)?.ok_or_else(|| format!("no window named {title:?}"))?;
    let time = if copy_raw_time { next_raw_press_time(&conn, root)? } else { x11rb::CURRENT_TIME };
    match what {
        What::Click { x, y } => {
            for (response_type, mask, state) in [
                (BUTTON_PRESS_EVENT, EventMask::BUTTON_PRESS, KeyButMask::default()),
                (BUTTON_RELEASE_EVENT, EventMask::BUTTON_RELEASE, KeyButMask::BUTTON1),
            ] {
                let ev = ButtonPressEvent {
                    response_type,
                    detail: 1,
                    sequence: 0,
                    time,
                    root,
                    event: window,
                    child: x11rb::NONE,
                    root_x: *x,
                    root_y: *y,
                    event_x: *x,
                    event_y: *y,
                    state,
                    same_screen: true,
                };
                conn.send_event(false, window, mask, ev).map_err(text)?;
            }
        }
        What::Key(name) => {
            let detail = keycode(&conn, keysym(name)?)?;
            for (response_type, mask) in
                [(KEY_PRESS_EVENT, EventMask::KEY_PRESS), (KEY_RELEASE_EVENT, EventMask::KEY_RELEASE)]
            {
                let ev = KeyPressEvent {
                    response_type,
                    detail,
                    sequence: 0,
                    time,
                    root,
                    event: window,
                    child: x11rb::NONE,
                    root_x: 0,
                    root_y: 0,
                    event_x: 0,
                    event_y: 0,
                    state: KeyButMask::default(),
                    same_screen: true,
                };
                conn.send_event(false, window, mask, ev).map_err(text)?;
            }
        }
    }
    // A round trip, so the events have been delivered before we exit.
    conn.get_input_focus().map_err(text)?.reply().map_err(text)?;
    println!("sent to window {window:#x} ({title}) with time {time}");
    Ok(())
}

fn parse(args: &[String]) -> Result<(String, What, bool), String> {
    let usage = "usage: mcec-sendevent [--time-of-raw] click TITLE X Y | key TITLE KEY";
    let (copy, rest) = match args.first().map(String::as_str) {
        Some("--time-of-raw") => (true, &args[1..]),
        _ => (false, args),
    };
    match rest {
        [cmd, title, x, y] if cmd == "click" => {
            let x = x.parse().map_err(|_| usage.to_owned())?;
            let y = y.parse().map_err(|_| usage.to_owned())?;
            Ok((title.clone(), What::Click { x, y }, copy))
        }
        [cmd, title, key] if cmd == "key" => Ok((title.clone(), What::Key(key.clone()), copy)),
        _ => Err(usage.to_owned()),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args).and_then(|(title, what, copy)| send(&title, &what, copy)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcec-sendevent: {e}");
            ExitCode::FAILURE
        }
    }
}
