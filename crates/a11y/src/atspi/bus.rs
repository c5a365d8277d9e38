//! Finding the accessibility bus: `AT_SPI_BUS_ADDRESS` when set, otherwise the address the
//! `org.a11y.Bus` service on the session bus hands out (at-spi2-core's bus launcher). A
//! session with a display of its own names its own session bus instead, and then the
//! environment (the operator's desktop) is not asked at all.

use mcec_rules::{ErrorCode, ToolError};
use zbus::blocking::Connection;
use zbus::blocking::connection::Builder;

use super::CALL_TIMEOUT;

/// Messages zbus keeps for readers that have not taken them yet: room for every reply of the
/// calls [`super::calls::strings`] has in flight, and the signals around them.
const MAX_QUEUED: usize = 1_024;

/// What the operator does to get an accessibility tree; every "no tree" error ends with it.
pub const HOW_TO_ENABLE: &str = "Accessibility needs a D-Bus session with the AT-SPI2 bus (Debian `at-spi2-core`, \
started by the desktop session or `/usr/libexec/at-spi-bus-launcher`) and applications that publish their tree: \
GTK 3 needs `libatk-adaptor` (and no `NO_AT_BRIDGE=1`), Qt `QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1`, Chromium and Electron \
`--force-renderer-accessibility`, Firefox `GNOME_ACCESSIBILITY=1`; start the application again after changing its environment.";

fn no_bus(why: impl std::fmt::Display) -> ToolError {
    ToolError::new(ErrorCode::Unavailable, format!("No accessibility bus: {why}. {HOW_TO_ENABLE}"))
}

/// Connect to the accessibility bus, with [`CALL_TIMEOUT`] on every method call: the one of
/// `session_bus` when given, else the environment's.
pub fn connect(session_bus: Option<&str>) -> Result<Connection, ToolError> {
    let address = match (session_bus, std::env::var("AT_SPI_BUS_ADDRESS")) {
        (Some(bus), _) => address_from_session(Builder::address(bus))?,
        (None, Ok(a)) if !a.is_empty() => a,
        (None, _) if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() => {
            return Err(no_bus("this process has no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)"));
        }
        (None, _) => address_from_session(Builder::session())?,
    };
    Builder::address(address.as_str())
        .and_then(|b| b.method_timeout(CALL_TIMEOUT).max_queued(MAX_QUEUED).build())
        .map_err(|e| no_bus(format!("cannot connect to {address}: {e}")))
}

fn address_from_session(session: zbus::Result<Builder<'_>>) -> Result<String, ToolError> {
    let session = session
        .and_then(|b| b.method_timeout(CALL_TIMEOUT).build())
        .map_err(|e| no_bus(format!("cannot reach the D-Bus session bus: {e}")))?;
    let reply = session
        .call_method(Some("org.a11y.Bus"), "/org/a11y/bus", Some("org.a11y.Bus"), "GetAddress", &())
        .map_err(|e| no_bus(format!("the session bus has no working org.a11y.Bus service ({e})")))?;
    reply.body().deserialize::<String>().map_err(|e| no_bus(format!("org.a11y.Bus answered oddly: {e}")))
}
