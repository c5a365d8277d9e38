//! The release a panic makes before the process ends.
//!
//! A release build aborts on panic (issue 30), so nothing unwinds to [`X11Desktop`]'s `Drop`.
//! The panicking thread may hold the backend's own connection and locks, so this release uses
//! neither: a fresh connection, and the server's view of what is down instead of the
//! backend's record. It lets go of every key and button the server has down, the operator's
//! own too (a crash is the one moment where a key held by nobody is worse than a key released
//! under a finger). A keycode remapped for typing stays remapped: no physical key sends it.

use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{BUTTON_RELEASE_EVENT, ConnectionExt as _, KEY_RELEASE_EVENT};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use super::X11Desktop;

impl X11Desktop {
    /// The release to run when this process panics (see the module's doc), for the display
    /// this backend drives.
    pub fn last_resort_release(&self) -> impl Fn() -> Result<(), String> + Send + Sync + 'static {
        let display = self.display.clone();
        move || release_everything_down(&display)
    }
}

/// Releases, through XTEST on a connection of its own, every key and pointer button the
/// server at `display` reports down.
pub fn release_everything_down(display: &str) -> Result<(), String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| format!("{what} on {display}: {e}");
    let (conn, screen) = RustConnection::connect(Some(display)).map_err(|e| fail("connect", &e))?;
    let root = conn.setup().roots[screen].root;
    let pointer = conn.query_pointer(root).map_err(|e| fail("query pointer", &e))?;
    let keymap = conn.query_keymap().map_err(|e| fail("query keymap", &e))?;
    let mask = u16::from(pointer.reply().map_err(|e| fail("query pointer", &e))?.mask);
    let keys = keymap.reply().map_err(|e| fail("query keymap", &e))?.keys;
    let release = |ty: u8, detail: u8| {
        conn.xtest_fake_input(ty, detail, x11rb::CURRENT_TIME, root, 0, 0, 0)
            .map(drop)
            .map_err(|e| fail("XTEST release", &e))
    };
    for button in 1..=5u8 {
        if mask & (0x80 << button) != 0 {
            release(BUTTON_RELEASE_EVENT, button)?;
        }
    }
    for keycode in 8..=255u8 {
        if keys[usize::from(keycode / 8)] & (1 << (keycode % 8)) != 0 {
            release(KEY_RELEASE_EVENT, keycode)?;
        }
    }
    conn.get_input_focus()
        .map_err(|e| fail("round trip", &e))?
        .reply()
        .map_err(|e| fail("round trip", &e))?;
    Ok(())
}
