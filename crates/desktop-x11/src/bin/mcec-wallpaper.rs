//! `mcec-wallpaper`: sets a striped wallpaper on the X root window the way hsetroot, feh and
//! Esetroot do, so tests can check what an agent's capture shows of it. A test tool, not
//! shipped behaviour.
//!
//! It fills a screen-sized pixmap of the root's depth, names it in the root property given
//! (`_XROOTPMAP_ID` or `ESETROOT_PMAP_ID`), makes it the root's background, and exits with its
//! resources kept (`RetainPermanent`), as those tools do. Row `y` has the colour
//! `(y * 5 % 256, 0x80, 255 - y % 256)`, so every row differs from its neighbours.
//!
//! ```sh
//! DISPLAY=:71 mcec-wallpaper _XROOTPMAP_ID
//! ```

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ChangeGCAux, ChangeWindowAttributesAux, CloseDown, ConnectionExt as _, CreateGCAux, PropMode,
    Rectangle,
};
use x11rb::wrapper::ConnectionExt as _;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The colour of row `y` (the module's documentation states it for the tests).
fn stripe(y: u16) -> u32 {
    let y = u32::from(y);
    (y * 5 % 256) << 16 | 0x80 << 8 | (255 - y % 256)
}

fn main() -> Res<()> {
    let property = std::env::args().nth(1).ok_or("usage: mcec-wallpaper PROPERTY")?;
    let (conn, screen_num) = x11rb::connect(None)?;
    let screen = &conn.setup().roots[screen_num];
    let (root, width, height) = (screen.root, screen.width_in_pixels, screen.height_in_pixels);
    if screen.root_depth != 24 && screen.root_depth != 32 {
        return Err(format!("the root's depth is {}, not 24 or 32", screen.root_depth).into());
    }
    let pixmap = conn.generate_id()?;
    conn.create_pixmap(screen.root_depth, pixmap, root, width, height)?;
    let gc = conn.generate_id()?;
    conn.create_gc(gc, pixmap, &CreateGCAux::new())?;
    for y in 0..height {
        conn.change_gc(gc, &ChangeGCAux::new().foreground(stripe(y)))?;
        conn.poly_fill_rectangle(pixmap, gc, &[Rectangle { x: 0, y: y as i16, width, height: 1 }])?;
    }
    conn.free_gc(gc)?;
    let atom = conn.intern_atom(false, property.as_bytes())?.reply()?.atom;
    conn.change_property32(PropMode::REPLACE, root, atom, AtomEnum::PIXMAP, &[pixmap])?;
    conn.change_window_attributes(root, &ChangeWindowAttributesAux::new().background_pixmap(pixmap))?;
    conn.clear_area(false, root, 0, 0, 0, 0)?;
    conn.set_close_down_mode(CloseDown::RETAIN_PERMANENT)?;
    conn.sync()?;
    Ok(())
}
