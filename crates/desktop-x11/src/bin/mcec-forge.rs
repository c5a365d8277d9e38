//! `mcec-forge`: forges the emergency-stop chord the way an attacker would, to prove that
//! mcec's tamper detection catches it. It is a test tool, not shipped behaviour.
//!
//! On the display in `$DISPLAY` it presses and releases Ctrl+Alt+Shift+S with XTEST
//! `FakeInput` requests of the XInput 1 types `DeviceKeyPress` / `DeviceKeyRelease`, aimed at
//! the *physical* keyboard device. The server then delivers the keys through that device, so
//! XI2 reports a physical source; only the RECORD watch in the provenance monitor can tell.
//!
//! ```sh
//! DISPLAY=:71 mcec-forge                          # the device named "Xephyr virtual keyboard"
//! DISPLAY=:71 mcec-forge "AT Translated Set 2 keyboard"
//! ```
//!
//! Exit 0 when every request was sent and the server answered a round trip after them;
//! exit 1 with a message otherwise.

use std::process::ExitCode;

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::xinput::{self, ConnectionExt as _};
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

#[path = "common/keyboard.rs"]
mod keyboard;
use keyboard::keycode;

/// The keyboard aimed at when no device name is given: Xephyr's own (physical) keyboard.
const DEFAULT_DEVICE: &str = "Xephyr virtual keyboard";

/// XI 1.x event numbers, relative to the extension's first event.
const DEVICE_KEY_PRESS: u8 = 1;
const DEVICE_KEY_RELEASE: u8 = 2;

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The id of the first input device whose name contains `name`.
fn device_id(conn: &RustConnection, name: &str) -> Result<u8, String> {
    let devices = conn.xinput_xi_query_device(0u16).map_err(text)?.reply().map_err(text)?;
    let found = devices
        .infos
        .iter()
        .find(|d| String::from_utf8_lossy(&d.name).contains(name))
        .ok_or_else(|| format!("no input device named like {name:?} on this display"))?;
    u8::try_from(found.deviceid).map_err(text)
}

fn forge(device: &str) -> Result<(), String> {
    let (conn, screen) = RustConnection::connect(None).map_err(|e| format!("cannot open $DISPLAY: {e}"))?;
    let root = conn.setup().roots[screen].root;
    let xi = conn
        .extension_information(xinput::X11_EXTENSION_NAME)
        .map_err(text)?
        .ok_or("the server has no XInputExtension")?;
    if conn.extension_information(x11rb::protocol::xtest::X11_EXTENSION_NAME).map_err(text)?.is_none() {
        return Err("the server has no XTEST extension".into());
    }
    let dev = device_id(&conn, device)?;
    use xkeysym::key as k;
    let keys = [
        keycode(&conn, k::Control_L)?,
        keycode(&conn, k::Alt_L)?,
        keycode(&conn, k::Shift_L)?,
        keycode(&conn, k::s)?,
    ];
    for code in keys {
        conn.xtest_fake_input(xi.first_event + DEVICE_KEY_PRESS, code, 0, root, 0, 0, dev).map_err(text)?;
    }
    for code in keys.iter().rev() {
        conn.xtest_fake_input(xi.first_event + DEVICE_KEY_RELEASE, *code, 0, root, 0, 0, dev)
            .map_err(text)?;
    }
    // A round trip, so every request above has been processed before we exit.
    conn.get_input_focus().map_err(text)?.reply().map_err(text)?;
    println!("forged Ctrl+Alt+Shift+S as XI1 device events on device {dev} ({device})");
    Ok(())
}

fn main() -> ExitCode {
    let device = std::env::args().nth(1).unwrap_or_else(|| DEFAULT_DEVICE.to_owned());
    match forge(&device) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcec-forge: {e}");
            ExitCode::FAILURE
        }
    }
}
