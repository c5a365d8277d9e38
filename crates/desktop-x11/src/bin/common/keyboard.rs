//! The X11 test tools' one way to find a key: the key code the server's keyboard map gives a
//! keysym. Shared by `mcec-forge`, `mcec-sendevent` and `stop-bench` through `#[path]`; not part
//! of mcec (the backend keeps its own map in `desktop/keymap.rs`).

use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

/// The first key code whose unshifted keysym is `sym`.
pub fn keycode(conn: &RustConnection, sym: u32) -> Result<u8, String> {
    let setup = conn.setup();
    let (min, max) = (setup.min_keycode, setup.max_keycode);
    let map = conn
        .get_keyboard_mapping(min, max - min + 1)
        .map_err(|e| e.to_string())?
        .reply()
        .map_err(|e| e.to_string())?;
    let per = usize::from(map.keysyms_per_keycode.max(1));
    let idx = map
        .keysyms
        .chunks(per)
        .position(|c| c.first() == Some(&sym))
        .ok_or_else(|| format!("keysym {sym:#x} is not on the keyboard map"))?;
    u8::try_from(idx).map(|i| min + i).map_err(|e| e.to_string())
}
