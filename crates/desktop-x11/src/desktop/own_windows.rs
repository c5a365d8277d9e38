//! Leaving mcec's own windows (the banner, the re-arm prompt, the host window) out of every
//! capture, while the operator goes on seeing them.
//!
//! The screen's pixels under the banner are the banner's. To show the agent what lies beneath
//! it, mcec asks the X server at connect time to keep every top-level window's contents in an
//! offscreen pixmap (Composite `RedirectSubwindows(root, Automatic)`; the server still paints
//! the screen itself, and under a compositing window manager, which already redirects them,
//! the request changes nothing). A capture then reads the screen as usual and, only where one
//! of mcec's windows lies, paints the rectangle again from the windows beneath it in stacking
//! order (`NameWindowPixmap` + `GetImage`). Where those windows leave part of the rectangle
//! bare, the desktop's background goes beneath them (`root_background`: the wallpaper pixmap a
//! desktop names, else the root window's own background); when neither can be read that part
//! is black and `leftOut.how` says `recomposedOverBlack`.
//!
//! A window with no pixmap of its own (a compositor's overlay window, which shows the
//! composed screen with the banner in it) is left out of that repaint. Without Composite the
//! rectangle is blanked instead, and the capture answer says so: the agent never sees mcec
//! either way.
//! mcec's windows are recognised by `WM_CLASS` (`mcec_rules::own_windows`), on a top-level or on the
//! client a window manager framed.

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::composite::{self, ConnectionExt as _, Redirect};
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, ImageFormat, MapState, Window, WindowClass};
use x11rb::rust_connection::RustConnection;

use super::capture::PixelFormat;
use super::root_background::covered_by;
use super::{X11Desktop, conn_err, reply_err};
use mcec_desktop::types::{LeftOut, LeftOutHow, Rect, RgbImage};
use mcec_rules::ToolError;
use mcec_rules::own_windows::is_own_window_class;

/// Ask the server to keep every top-level's pixels offscreen. Returns whether Composite is
/// there to name those pixmaps later.
pub(crate) fn redirect_top_levels(conn: &RustConnection, root: Window) -> bool {
    if conn.extension_information(composite::X11_EXTENSION_NAME).ok().flatten().is_none() {
        tracing::warn!("no Composite extension: mcec's own windows are blanked out of captures");
        return false;
    }
    let version = composite::query_version(conn, 0, 4).ok().and_then(|c| c.reply().ok());
    if version.is_none_or(|v| (v.major_version, v.minor_version) < (0, 2)) {
        tracing::warn!("Composite older than 0.2: mcec's own windows are blanked out of captures");
        return false;
    }
    match conn.composite_redirect_subwindows(root, Redirect::AUTOMATIC).map(|c| c.check()) {
        Ok(Ok(())) => true,
        // Someone else holds the redirection: their pixmaps can still be named.
        Ok(Err(e)) => {
            tracing::info!("Composite redirect refused ({e:?}); relying on the existing one");
            true
        }
        Err(e) => {
            tracing::warn!("Composite redirect failed: {e}");
            false
        }
    }
}

/// A mapped top-level window, bottom of the stack first.
struct TopLevel {
    id: Window,
    /// Outer rectangle (border included), in root coordinates.
    rect: Rect,
    own: bool,
    depth: u8,
    visual: u32,
}

fn is_own_class(value: &[u8]) -> bool {
    value.split(|b| *b == 0).any(|part| std::str::from_utf8(part).is_ok_and(is_own_window_class))
}

fn wm_class_cookie<C: Connection>(
    conn: &C,
    id: Window,
) -> Result<x11rb::cookie::Cookie<'_, C, x11rb::protocol::xproto::GetPropertyReply>, ToolError> {
    conn.get_property(false, id, AtomEnum::WM_CLASS, AtomEnum::STRING, 0, 64).map_err(conn_err)
}

/// Where mcec's own windows are mapped on the X display `display` (outer rectangles in root
/// coordinates): on a compositor's XWayland, where they are in the Wayland layout too, for a
/// Wayland backend that cannot locate them itself.
pub fn own_window_rects(display: &str) -> Result<Vec<Rect>, String> {
    let (conn, screen) = RustConnection::connect(Some(display)).map_err(|e| format!("{display}: {e}"))?;
    let root = conn.setup().roots.get(screen).map(|s| s.root).ok_or("no screen")?;
    let tops = top_levels(&conn, root).map_err(|e| e.detail)?;
    Ok(tops.into_iter().filter(|t| t.own).map(|t| t.rect).collect())
}

/// The mapped InputOutput children of the root in stacking order, each marked when it is
/// (or frames) one of mcec's windows. Every request of a round is sent before any reply is
/// read: three round trips whatever the number of windows.
fn top_levels<C: Connection>(conn: &C, root: Window) -> Result<Vec<TopLevel>, ToolError> {
    let tree = conn.query_tree(root).map_err(conn_err)?.reply().map_err(reply_err)?;
    let attrs = tree
        .children
        .iter()
        .map(|w| conn.get_window_attributes(*w).map_err(conn_err))
        .collect::<Result<Vec<_>, _>>()?;
    let mut mapped = Vec::new();
    for (id, cookie) in tree.children.iter().zip(attrs) {
        // A window closed meanwhile is simply not there.
        let Ok(a) = cookie.reply() else { continue };
        if a.map_state == MapState::VIEWABLE && a.class == WindowClass::INPUT_OUTPUT {
            mapped.push((*id, a.visual));
        }
    }
    let mut pending = Vec::with_capacity(mapped.len());
    for (id, visual) in mapped {
        let geom = conn.get_geometry(id).map_err(conn_err)?;
        let class = wm_class_cookie(conn, id)?;
        let children = conn.query_tree(id).map_err(conn_err)?;
        pending.push((id, visual, geom, class, children));
    }
    let mut tops = Vec::with_capacity(pending.len());
    let mut inner = Vec::new();
    for (id, visual, geom, class, children) in pending {
        let (Ok(g), Ok(class), Ok(children)) = (geom.reply(), class.reply(), children.reply()) else {
            continue;
        };
        let border = u32::from(g.border_width) * 2;
        let rect = Rect::new(
            i32::from(g.x),
            i32::from(g.y),
            u32::from(g.width) + border,
            u32::from(g.height) + border,
        );
        let own = is_own_class(&class.value);
        if !own && class.value.is_empty() {
            // Perhaps a window manager's frame: the client is one of its children.
            for child in children.children {
                inner.push((tops.len(), wm_class_cookie(conn, child)?));
            }
        }
        tops.push(TopLevel { id, rect, own, depth: g.depth, visual });
    }
    for (index, cookie) in inner {
        if cookie.reply().is_ok_and(|c| is_own_class(&c.value)) {
            tops[index].own = true;
        }
    }
    Ok(tops)
}

impl X11Desktop {
    /// Take mcec's own windows out of `img`, which shows `area` of the screen.
    pub(crate) fn leave_out_own(&self, area: Rect, img: &mut RgbImage) -> Result<Option<LeftOut>, ToolError> {
        self.leave_out_own_with(area, &mut |part, pixels| paste(img, area, part, pixels))
    }

    /// [`X11Desktop::leave_out_own`] for a frame in any layout: `paste` puts RGB `pixels` of
    /// a desktop rectangle in its place.
    pub(crate) fn leave_out_own_with(
        &self,
        area: Rect,
        paste: &mut dyn FnMut(Rect, &[u8]),
    ) -> Result<Option<LeftOut>, ToolError> {
        let tops = top_levels(self.conn.as_ref(), self.root)?;
        let covered: Vec<Rect> =
            tops.iter().filter(|t| t.own).filter_map(|t| t.rect.intersect(&area)).collect();
        if covered.is_empty() {
            return Ok(None);
        }
        let mut how = LeftOutHow::Recomposed;
        for rect in &covered {
            let pixels = match self.composite.then(|| self.recompose(&tops, *rect)) {
                Some(Ok((p, unknown_background))) => {
                    if unknown_background && how == LeftOutHow::Recomposed {
                        how = LeftOutHow::RecomposedOverBlack;
                    }
                    p
                }
                failed => {
                    if let Some(Err(e)) = failed {
                        tracing::warn!("recomposing under mcec's window failed, blanking it: {e}");
                    }
                    how = LeftOutHow::Blanked;
                    vec![0; rect.width as usize * rect.height as usize * 3]
                }
            };
            paste(*rect, &pixels);
        }
        Ok(Some(LeftOut { areas: covered, how }))
    }

    /// The pixels of `rect` as they would be without mcec's windows: every other window's own
    /// pixmap, bottom first, over the desktop's background where they leave any of `rect`
    /// bare. The flag is set when that background was needed and could not be read (black).
    fn recompose(&self, tops: &[TopLevel], rect: Rect) -> Result<(Vec<u8>, bool), String> {
        let mut layers = Vec::new();
        for t in tops.iter().filter(|t| !t.own) {
            let Some(part) = t.rect.intersect(&rect) else { continue };
            let format = PixelFormat::for_visual(self.conn.setup(), t.depth, t.visual)
                .ok_or_else(|| format!("window {} has a pixel format mcec cannot read", t.id))?;
            let pixmap = self.conn.generate_id().map_err(|e| e.to_string())?;
            // Its error, if any, shows in the GetImage reply below.
            self.conn.composite_name_window_pixmap(t.id, pixmap).map_err(|e| e.to_string())?.ignore_error();
            let image = self
                .conn
                .get_image(
                    ImageFormat::Z_PIXMAP,
                    pixmap,
                    (part.x - t.rect.x) as i16,
                    (part.y - t.rect.y) as i16,
                    part.width as u16,
                    part.height as u16,
                    !0,
                )
                .map_err(|e| e.to_string())?
                .reply();
            if let Ok(cookie) = self.conn.free_pixmap(pixmap) {
                cookie.ignore_error();
            }
            let image = match image {
                Ok(image) => image,
                // Not redirected, so it has no pixmap of its own: a compositor's overlay
                // window (which shows the composed screen, banner included) or a window
                // mapped a moment ago. Leaving it out never shows mcec.
                Err(e) => {
                    tracing::debug!("window {} has no pixmap to recompose from: {e:?}", t.id);
                    continue;
                }
            };
            let mut rgb = Vec::with_capacity(part.width as usize * part.height as usize * 3);
            format.convert_rows(&image.data, part.width, part.height, &mut rgb);
            layers.push((part, rgb));
        }
        let bare = !covered_by(rect, layers.iter().map(|(part, _)| *part));
        let background = if bare { self.root_background(rect) } else { None };
        let unknown = bare && background.is_none();
        let pixels = background.unwrap_or_else(|| vec![0; rect.width as usize * rect.height as usize * 3]);
        let mut out = RgbImage { width: rect.width, height: rect.height, pixels };
        for (part, rgb) in layers {
            paste(&mut out, rect, part, &rgb);
        }
        Ok((out.pixels, unknown))
    }
}

/// Copy `pixels` (an RGB image of `part`) into `img`, which shows `area`; `part` lies inside
/// `area`.
fn paste(img: &mut RgbImage, area: Rect, part: Rect, pixels: &[u8]) {
    let (dx, dy) = ((part.x - area.x) as usize, (part.y - area.y) as usize);
    let row = part.width as usize * 3;
    for (y, src) in pixels.chunks_exact(row).take(part.height as usize).enumerate() {
        let at = ((dy + y) * img.width as usize + dx) * 3;
        if let Some(dst) = img.pixels.get_mut(at..at + row) {
            dst.copy_from_slice(src);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_classes_are_matched_whole() {
        assert!(is_own_class(b"mcec-overlay\0mcec-overlay\0"));
        assert!(is_own_class(b"mcec\0mcec\0"));
        assert!(!is_own_class(b"mcectestwin\0McecTestWin\0"));
        assert!(!is_own_class(b""));
    }

    #[test]
    fn paste_lands_at_the_offset() {
        let mut img = RgbImage { width: 4, height: 3, pixels: vec![0; 36] };
        paste(&mut img, Rect::new(10, 10, 4, 3), Rect::new(12, 11, 2, 1), &[1, 1, 1, 2, 2, 2]);
        assert_eq!(img.pixel(2, 1), Some([1, 1, 1]));
        assert_eq!(img.pixel(3, 1), Some([2, 2, 2]));
        assert_eq!(img.pixel(1, 1), Some([0, 0, 0]));
    }
}
