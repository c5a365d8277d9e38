//! Whether an X server lets this user in: one connection set up and dropped. The display
//! search of the binary (`mcec_rules::desktop_choice`) uses it on each `/tmp/.X11-unix/X<n>`
//! when the client passed no `DISPLAY`; it lives here because only this crate talks to X.

use mcec_rules::desktop_choice::SocketAnswer;
use x11rb::errors::ConnectError;
use x11rb::rust_connection::RustConnection;

/// How `display` answered a connection with this process's authority (`XAUTHORITY`, else
/// `~/.Xauthority`).
pub fn answer(display: &str) -> SocketAnswer {
    let refused =
        |reason: &[u8]| SocketAnswer::RefusedAuthority(String::from_utf8_lossy(reason).trim().to_string());
    match RustConnection::connect(Some(display)) {
        Ok(_) => SocketAnswer::Accepts,
        Err(ConnectError::SetupAuthenticate(e)) => refused(&e.reason),
        Err(ConnectError::SetupFailed(e)) => refused(&e.reason),
        Err(e) => SocketAnswer::Silent(e.to_string()),
    }
}
