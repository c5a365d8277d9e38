//! Gathers the signals that tell a Wayland session's X server (XWayland) from a plain one;
//! [`mcec_desktop::monitor::wayland::judge`] weighs them.
//!
//! Read from the server: the `XWAYLAND` extension, RandR output names, XInput device names.
//! Read from the environment, only when `DISPLAY` came from it: `WAYLAND_DISPLAY` and
//! `XDG_SESSION_TYPE`. A request that fails is an error, never "no signal": the caller then
//! refuses to arm (fail closed).

use x11rb::connection::RequestConnection;
use x11rb::errors::{ConnectionError, ReplyError};
use x11rb::protocol::randr::{self, ConnectionExt as _};
use x11rb::protocol::xinput::{self, ConnectionExt as _};
use x11rb::protocol::xproto::Window;

use mcec_desktop::monitor::wayland::DisplaySignals;

/// The name XWayland 23.1 and later register their extension under.
const XWAYLAND_EXTENSION: &str = "XWAYLAND";

/// The environment's half of the signals, for a display taken from `$DISPLAY`.
pub fn env_signals(signals: &mut DisplaySignals) {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    signals.wayland_display = var("WAYLAND_DISPLAY");
    signals.session_type = var("XDG_SESSION_TYPE");
}

/// The server's half of the signals.
pub fn server_signals(conn: &impl RequestConnection, root: Window) -> Result<DisplaySignals, ReplyError> {
    Ok(DisplaySignals {
        xwayland_extension: conn.extension_information(XWAYLAND_EXTENSION)?.is_some(),
        output_names: output_names(conn, root)?,
        device_names: device_names(conn)?,
        ..DisplaySignals::default()
    })
}

fn output_names(conn: &impl RequestConnection, root: Window) -> Result<Vec<String>, ReplyError> {
    if conn.extension_information(randr::X11_EXTENSION_NAME)?.is_none() {
        return Ok(Vec::new());
    }
    conn.randr_query_version(1, 3)?.reply()?;
    let resources = conn.randr_get_screen_resources_current(root)?.reply()?;
    let cookies = resources
        .outputs
        .iter()
        .map(|&o| conn.randr_get_output_info(o, resources.config_timestamp))
        .collect::<Result<Vec<_>, ConnectionError>>()?;
    cookies.into_iter().map(|c| Ok(String::from_utf8_lossy(&c.reply()?.name).into_owned())).collect()
}

fn device_names(conn: &impl RequestConnection) -> Result<Vec<String>, ReplyError> {
    if conn.extension_information(xinput::X11_EXTENSION_NAME)?.is_none() {
        return Ok(Vec::new());
    }
    conn.xinput_xi_query_version(2, 2)?.reply()?;
    let reply = conn.xinput_xi_query_device(0u16)?.reply()?;
    Ok(reply.infos.iter().map(|d| String::from_utf8_lossy(&d.name).into_owned()).collect())
}
