//! Letting this user into a session's own X server (issue 26). The binary starts that server
//! with an authority file holding a fresh cookie, so nobody is let in before it is ready;
//! this connects once with the cookie and adds this user's id to the server's access list
//! (the server-interpreted `localuser` entry, checked by the kernel's peer credentials on the
//! local socket). From then on every connection of this process (the tools, the clipboard
//! owner) is let in by `X11Desktop::connect` with no cookie of its own, whatever
//! `XAUTHORITY` the process has for the operator's display. No other user gets in: a process
//! of this user could read the cookie file anyway (0600, the user's own).

use std::os::unix::net::UnixStream;
use std::path::Path;

use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{ConnectionExt as _, Family, HostMode};
use x11rb::rust_connection::{DefaultStream, RustConnection};

/// The authorization protocol the cookie is for.
pub const COOKIE_PROTOCOL: &[u8] = b"MIT-MAGIC-COOKIE-1";

/// Connect to display `number` through its socket in `socket_dir` with `cookie`, and add
/// user id `uid` (this process's) to the server's access list.
pub fn let_user_in(socket_dir: &Path, number: u32, cookie: &[u8], uid: u32) -> Result<(), String> {
    let socket = socket_dir.join(format!("X{number}"));
    let stream =
        UnixStream::connect(&socket).map_err(|e| format!("cannot reach {}: {e}", socket.display()))?;
    let (stream, _peer) = DefaultStream::from_unix_stream(stream)
        .map_err(|e| format!("cannot use {}: {e}", socket.display()))?;
    let conn = RustConnection::connect_to_stream_with_auth_info(
        stream,
        0,
        COOKIE_PROTOCOL.to_vec(),
        cookie.to_vec(),
    )
    .map_err(|e| format!("the new server refused its own cookie: {e}"))?;
    let address = format!("localuser\0#{uid}").into_bytes();
    conn.change_hosts(HostMode::INSERT, Family::SERVER_INTERPRETED, &address)
        .map_err(|e| format!("cannot add this user to the access list: {e}"))?
        .check()
        .map_err(|e| format!("the server refused to let this user in: {e}"))?;
    conn.flush().map_err(|e| format!("cannot reach the new server: {e}"))
}
