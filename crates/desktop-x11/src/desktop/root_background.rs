//! The desktop's background (the wallpaper) in a rectangle of the screen, for the parts of a
//! capture where mcec's own window lies over no other window.
//!
//! Two sources, in this order:
//! - The pixmap a desktop names in `_XROOTPMAP_ID` or `ESETROOT_PMAP_ID` (feh, hsetroot,
//!   Esetroot and most window managers set one; compositing managers paint the wallpaper from
//!   it), read when it has the root's depth and covers the rectangle.
//! - Otherwise the root window's own background (`xsetroot -solid`, `-mod`, `-bitmap`), which
//!   no request reads back. The server paints it for us: a window with a
//!   `ParentRelative` background shows its parent's background, tile origin and all, so a
//!   throwaway override-redirect child of the root with that background, mapped at the bottom
//!   of the stack under mcec's window, gets the root's background painted into the pixmap
//!   Composite keeps for it, which `NameWindowPixmap` + `GetImage` read. At the bottom of the
//!   stack and the size of the area mcec's window covers, it is hidden by that window; where it
//!   could show it shows exactly what was there (the root's background), it takes no input
//!   (empty input shape) and carries an mcec class, so no mcec lists it to an agent. Its
//!   pixels are used only when the server is seen to paint every one of them (two reads over
//!   two different sentinel fills agree), and never under a compositing manager, which paints
//!   the bare desktop itself.

use x11rb::connection::Connection;
use x11rb::protocol::composite::ConnectionExt as _;
use x11rb::protocol::shape::SK;
use x11rb::protocol::xfixes::ConnectionExt as _;
use x11rb::protocol::xproto::{
    AtomEnum, BackPixmap, ChangeGCAux, ConfigureWindowAux, ConnectionExt as _, CreateGCAux, CreateWindowAux,
    ImageFormat, PropMode, Rectangle, StackMode, WindowClass,
};
use x11rb::wrapper::ConnectionExt as _;
use x11rb::{COPY_DEPTH_FROM_PARENT, COPY_FROM_PARENT};

use super::X11Desktop;
use mcec_desktop::types::Rect;
use mcec_rules::own_windows::PROBE_CLASS;

/// Whether the `parts` (rectangles inside `rect`) cover all of `rect`. Every edge cuts `rect`
/// into cells, and each cell is either inside a part or not, so testing one point per cell
/// is exact.
pub(crate) fn covered_by(rect: Rect, parts: impl Iterator<Item = Rect> + Clone) -> bool {
    let edges = |start: i32, end: i64, cuts: &mut dyn Iterator<Item = (i32, i64)>| {
        let mut at: Vec<i64> = vec![i64::from(start), end];
        for (a, b) in cuts {
            at.extend([i64::from(a), b]);
        }
        at.retain(|v| *v >= i64::from(start) && *v <= end);
        at.sort_unstable();
        at.dedup();
        at
    };
    let xs = edges(rect.x, rect.right(), &mut parts.clone().map(|p| (p.x, p.right())));
    let ys = edges(rect.y, rect.bottom(), &mut parts.clone().map(|p| (p.y, p.bottom())));
    let inside = |p: &Rect, x: i64, y: i64| {
        (i64::from(p.x)..p.right()).contains(&x) && (i64::from(p.y)..p.bottom()).contains(&y)
    };
    xs.windows(2).all(|cx| ys.windows(2).all(|cy| parts.clone().any(|p| inside(&p, cx[0], cy[0]))))
}

impl X11Desktop {
    /// The RGB pixels of the desktop's background in `rect`, or `None` when the server will
    /// not say (then the caller keeps the area black).
    pub(crate) fn root_background(&self, rect: Rect) -> Option<Vec<u8>> {
        for prop in [self.atoms._XROOTPMAP_ID, self.atoms.ESETROOT_PMAP_ID] {
            if let Some(pixels) = self.named_wallpaper(prop, rect) {
                return Some(pixels);
            }
        }
        match self.painted_background(rect) {
            Ok(pixels) => Some(pixels),
            Err(e) => {
                tracing::debug!("the root window's background could not be read: {e}");
                None
            }
        }
    }

    /// The pixels of `rect` in the pixmap the root property `prop` names, when it names one of
    /// the root's depth that covers `rect` (a stale id or a smaller pixmap is no wallpaper).
    fn named_wallpaper(&self, prop: u32, rect: Rect) -> Option<Vec<u8>> {
        let reply =
            self.conn.get_property(false, self.root, prop, AtomEnum::PIXMAP, 0, 1).ok()?.reply().ok()?;
        let pixmap = reply.value32()?.next()?;
        let geom = self.conn.get_geometry(pixmap).ok()?.reply().ok()?;
        let depth = self.conn.setup().roots.iter().find(|s| s.root == self.root)?.root_depth;
        let (w, h) = (i64::from(geom.width), i64::from(geom.height));
        if geom.depth != depth || rect.right() > w || rect.bottom() > h {
            return None;
        }
        self.read_rgb(pixmap, rect).ok()
    }

    /// The root window's own background in `rect`, painted by the server into a probe window
    /// (see the module's documentation).
    fn painted_background(&self, rect: Rect) -> Result<Vec<u8>, String> {
        if self.compositing_manager()? {
            return Err("a compositing manager paints the bare desktop itself".into());
        }
        let err = |e: &dyn std::fmt::Display| e.to_string();
        let probe = self.conn.generate_id().map_err(|e| err(&e))?;
        let aux = CreateWindowAux::new().background_pixmap(BackPixmap::PARENT_RELATIVE).override_redirect(1);
        self.conn
            .create_window(
                COPY_DEPTH_FROM_PARENT,
                probe,
                self.root,
                rect.x as i16,
                rect.y as i16,
                rect.width as u16,
                rect.height as u16,
                0,
                WindowClass::INPUT_OUTPUT,
                COPY_FROM_PARENT,
                &aux,
            )
            .map_err(|e| err(&e))?;
        let read = self.map_and_read_probe(probe, rect);
        // Waited for, so the probe is gone from the screen when the capture returns.
        let gone = self
            .conn
            .destroy_window(probe)
            .map_err(|e| e.to_string())
            .and_then(|c| c.check().map_err(|e| format!("{e:?}")));
        if let Err(e) = gone {
            tracing::warn!("destroying the background probe window: {e}");
        }
        read
    }

    /// Whether a compositing manager holds this screen's `_NET_WM_CM_S<n>` selection: it then
    /// paints the bare desktop as it likes (xcompmgr: grey without a wallpaper property), not
    /// with the root's background.
    fn compositing_manager(&self) -> Result<bool, String> {
        let screen = self.conn.setup().roots.iter().position(|s| s.root == self.root).unwrap_or(0);
        let name = format!("_NET_WM_CM_S{screen}");
        let atom = self
            .conn
            .intern_atom(true, name.as_bytes())
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| format!("{e:?}"))?
            .atom;
        if atom == x11rb::NONE {
            return Ok(false);
        }
        let owner = self
            .conn
            .get_selection_owner(atom)
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| format!("{e:?}"))?;
        Ok(owner.owner != x11rb::NONE)
    }

    fn map_and_read_probe(&self, probe: u32, rect: Rect) -> Result<Vec<u8>, String> {
        let err = |e: &dyn std::fmt::Display| e.to_string();
        let class = [PROBE_CLASS.as_bytes(), b"\0", PROBE_CLASS.as_bytes(), b"\0"].concat();
        self.conn
            .change_property8(PropMode::REPLACE, probe, AtomEnum::WM_CLASS, AtomEnum::STRING, &class)
            .map_err(|e| err(&e))?;
        // XFixes answers only clients that said which version they speak; the reply itself is
        // of no use, the requests below are handled after it.
        drop(self.conn.xfixes_query_version(5, 0).map_err(|e| err(&e))?);
        let region = self.conn.generate_id().map_err(|e| err(&e))?;
        self.conn.xfixes_create_region(region, &[]).map_err(|e| err(&e))?.ignore_error();
        let shaped = self
            .conn
            .xfixes_set_window_shape_region(probe, SK::INPUT, 0, 0, region)
            .map_err(|e| err(&e))?
            .check();
        self.conn.xfixes_destroy_region(region).map_err(|e| err(&e))?.ignore_error();
        // A probe the pointer could land on is not mapped.
        shaped.map_err(|e| format!("no empty input shape for the probe: {e:?}"))?;
        // Lowest of the root's children before it is mapped, so it is never above anything.
        self.conn
            .configure_window(probe, &ConfigureWindowAux::new().stack_mode(StackMode::BELOW))
            .map_err(|e| err(&e))?;
        self.conn.map_window(probe).map_err(|e| err(&e))?;
        let pixmap = self.conn.generate_id().map_err(|e| err(&e))?;
        self.conn.composite_name_window_pixmap(probe, pixmap).map_err(|e| err(&e))?.ignore_error();
        let gc = self.conn.generate_id().map_err(|e| err(&e))?;
        self.conn.create_gc(gc, probe, &CreateGCAux::new()).map_err(|e| err(&e))?.ignore_error();
        let screen = self.conn.setup().roots.iter().find(|s| s.root == self.root);
        let (black, white) = screen.map_or((0, 0xff_ffff), |s| (s.black_pixel, s.white_pixel));
        let first = self.repaint_probe(probe, gc, pixmap, rect, black);
        let second = self.repaint_probe(probe, gc, pixmap, rect, white);
        if let Ok(cookie) = self.conn.free_gc(gc) {
            cookie.ignore_error();
        }
        if let Ok(cookie) = self.conn.free_pixmap(pixmap) {
            cookie.ignore_error();
        }
        // A new window's pixmap starts as a copy of the screen beneath, mcec's window included.
        // Every pixel was overwritten by a sentinel colour and then by the background, twice
        // with different sentinels: a pixel the server left unpainted (as under a compositing
        // manager's Manual redirect, where a ParentRelative background paints nothing) differs
        // between the two reads, and then nothing is used.
        let (first, second) = (first?, second?);
        if first != second {
            return Err("the server did not paint the root's background into the probe".into());
        }
        Ok(first)
    }

    /// Fill the probe with `sentinel`, have the server paint its (the root's) background over
    /// it (`ClearArea`), and read the probe's pixmap.
    fn repaint_probe(
        &self,
        probe: u32,
        gc: u32,
        pixmap: u32,
        rect: Rect,
        sentinel: u32,
    ) -> Result<Vec<u8>, String> {
        let err = |e: &dyn std::fmt::Display| e.to_string();
        let (w, h) = (rect.width as u16, rect.height as u16);
        self.conn.change_gc(gc, &ChangeGCAux::new().foreground(sentinel)).map_err(|e| err(&e))?;
        // Checked: a fill that did not happen (a bad GC among them) would leave the copy of the
        // screen in both reads alike.
        self.conn
            .poly_fill_rectangle(probe, gc, &[Rectangle { x: 0, y: 0, width: w, height: h }])
            .map_err(|e| err(&e))?
            .check()
            .map_err(|e| format!("filling the probe: {e:?}"))?;
        self.conn.clear_area(false, probe, 0, 0, 0, 0).map_err(|e| err(&e))?;
        self.read_rgb(pixmap, Rect::new(0, 0, rect.width, rect.height))
    }

    /// `part` of `drawable` (of the root's depth and format) as RGB.
    fn read_rgb(&self, drawable: u32, part: Rect) -> Result<Vec<u8>, String> {
        let image = self
            .conn
            .get_image(
                ImageFormat::Z_PIXMAP,
                drawable,
                part.x as i16,
                part.y as i16,
                part.width as u16,
                part.height as u16,
                !0,
            )
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| format!("{e:?}"))?;
        let mut rgb = Vec::with_capacity(part.width as usize * part.height as usize * 3);
        self.pixels.convert_rows(&image.data, part.width, part.height, &mut rgb);
        Ok(rgb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_is_exact() {
        let rect = Rect::new(10, 10, 100, 40);
        let cover = |parts: &[Rect]| covered_by(rect, parts.iter().copied());
        assert!(cover(&[rect]));
        assert!(!cover(&[]));
        assert!(cover(&[Rect::new(10, 10, 50, 40), Rect::new(60, 10, 50, 40)]));
        assert!(!cover(&[Rect::new(10, 10, 50, 40), Rect::new(61, 10, 49, 40)]), "a 1 px gap");
        assert!(!cover(&[Rect::new(10, 10, 100, 39)]), "the last row is bare");
        assert!(cover(&[Rect::new(10, 10, 100, 20), Rect::new(10, 30, 60, 20), Rect::new(50, 30, 60, 20)]));
    }
}
