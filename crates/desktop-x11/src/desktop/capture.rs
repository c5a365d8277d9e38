//! Monitors (RandR) and screen pixels (MIT-SHM or core `GetImage`) on X11.
//!
//! MIT-SHM: we ask the server to create the segment (`ShmCreateSegment`, MIT-SHM 1.2), which
//! hands us a file descriptor, and map it; the server writes the image there and the frame is
//! scaled and converted where it lies. No multi-megabyte reply streams through the socket, and
//! no copy of the frame is made (reading a 4K frame back with `pread` took 8 to 30 ms).

use std::fs::File;

use memmap2::{MmapMut, MmapOptions};

use mcec_rules::{ErrorCode, ToolError};
use x11rb::connection::Connection;
use x11rb::protocol::randr::ConnectionExt as _;
use x11rb::protocol::shm;
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat, ImageOrder, Screen, Setup};
use x11rb::rust_connection::RustConnection;

use super::{X11Desktop, conn_err, lock, reply_err};
use mcec_desktop::image;
use mcec_desktop::seams::Screens;
use mcec_desktop::types::{CaptureVia, Captured, CursorImage, DisplayInfo, Rect, RgbImage};

/// Largest reply asked for in one core `GetImage` strip.
const STRIP_BYTES: usize = 8 << 20;
/// How long a monitor list is trusted without asking RandR again. Changes to outputs and
/// CRTCs are reported at once; this bounds how long a monitor RandR does not report (one
/// made with `xrandr --setmonitor`) can go unseen.
pub(crate) const MONITORS_KEPT: std::time::Duration = std::time::Duration::from_secs(1);
/// Segments larger than this are dropped after use instead of kept for the next capture.
const KEEP_SEGMENT_MAX: usize = 64 << 20;

/// How the root window's pixels are laid out in a `ZPixmap` image.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PixelFormat {
    bits_per_pixel: u8,
    scanline_pad: u8,
    lsb_first: bool,
    masks: [u32; 3],
}

impl PixelFormat {
    pub(crate) fn from_setup(setup: &Setup, screen: &Screen) -> Option<PixelFormat> {
        Self::for_visual(setup, screen.root_depth, screen.root_visual)
    }

    /// The layout of a drawable of `depth` whose window uses `visual` (on any screen).
    pub(crate) fn for_visual(setup: &Setup, depth: u8, visual: u32) -> Option<PixelFormat> {
        let format = setup.pixmap_formats.iter().find(|f| f.depth == depth)?;
        let visual = setup
            .roots
            .iter()
            .flat_map(|s| s.allowed_depths.iter())
            .flat_map(|d| d.visuals.iter())
            .find(|v| v.visual_id == visual)?;
        if !matches!(format.bits_per_pixel, 16 | 24 | 32)
            || visual.red_mask == 0
            || visual.green_mask == 0
            || visual.blue_mask == 0
        {
            return None;
        }
        Some(PixelFormat {
            bits_per_pixel: format.bits_per_pixel,
            scanline_pad: format.scanline_pad,
            lsb_first: setup.image_byte_order == ImageOrder::LSB_FIRST,
            masks: [visual.red_mask, visual.green_mask, visual.blue_mask],
        })
    }

    /// Whether pixels are 32-bit little-endian BGRX (what nearly every X server uses), the
    /// layout a frame can be scaled in before conversion.
    fn is_bgrx(&self) -> bool {
        self.bits_per_pixel == 32 && self.lsb_first && self.masks == [0xff_0000, 0xff00, 0xff]
    }

    /// Bytes per row of a `width`-pixel image.
    fn stride(&self, width: u32) -> usize {
        let bits = width as usize * usize::from(self.bits_per_pixel);
        let pad = usize::from(self.scanline_pad.max(8));
        bits.div_ceil(pad) * pad / 8
    }

    /// Append `rows` rows of `width` pixels from `data` to `out` as RGB.
    pub(crate) fn convert_rows(&self, data: &[u8], width: u32, rows: u32, out: &mut Vec<u8>) {
        let stride = self.stride(width);
        let w = width as usize;
        if self.is_bgrx() {
            // BGRX to RGB into preallocated rows: this loop vectorises (a 4K frame is 8 Mpx).
            let start = out.len();
            out.resize(start + w * rows as usize * 3, 0);
            for (src, dst) in
                data.chunks(stride).take(rows as usize).zip(out[start..].chunks_exact_mut(w * 3))
            {
                for (s, d) in src[..w * 4].chunks_exact(4).zip(dst.chunks_exact_mut(3)) {
                    d[0] = s[2];
                    d[1] = s[1];
                    d[2] = s[0];
                }
            }
            return;
        }
        for row in data.chunks(stride).take(rows as usize) {
            let bpp = usize::from(self.bits_per_pixel) / 8;
            for px in row[..w * bpp].chunks_exact(bpp) {
                let mut v = 0u32;
                for (i, b) in px.iter().enumerate() {
                    let shift = if self.lsb_first { i } else { bpp - 1 - i } * 8;
                    v |= u32::from(*b) << shift;
                }
                for mask in self.masks {
                    out.push(channel(v, mask));
                }
            }
        }
    }
}

/// One colour channel of pixel value `v`, scaled to 8 bits.
fn channel(v: u32, mask: u32) -> u8 {
    let shift = mask.trailing_zeros();
    let max = mask >> shift;
    let c = (v & mask) >> shift;
    if max == 0xff { c as u8 } else { ((u64::from(c) * 255 + u64::from(max) / 2) / u64::from(max)) as u8 }
}

struct Segment {
    id: u32,
    /// The segment's pages, mapped into this process.
    map: MmapMut,
    size: usize,
}

/// Map the segment the server created for this connection.
#[allow(unsafe_code)]
fn map_segment(file: &File, size: usize) -> std::io::Result<MmapMut> {
    // SAFETY: the mapping is a plain byte buffer (every value is a valid `u8`) that lives in
    // `Segment` and is unmapped only when the segment is dropped. The server writes into it
    // while it serves this connection's `ShmGetImage`; `ShmState::with_frame` awaits that reply,
    // under the `ShmState` lock, before it lends the bytes out, and sends nothing naming the
    // segment while they are lent. (Another X client that guessed the segment's id could have
    // the server write pixels there at any time; that changes bytes of a picture, as drawing
    // on the screen would, and nothing else reads those bytes as anything but pixels.)
    unsafe { MmapOptions::new().len(size).map_mut(file) }
}

/// The MIT-SHM segment (created and mapped on first use), whether to use it, and the scaler
/// whose work buffers are kept between captures.
pub(crate) struct ShmState {
    enabled: bool,
    seg: Option<Segment>,
    scaler: image::Scaler,
}

impl ShmState {
    pub(crate) fn new(offered: bool) -> Self {
        ShmState { enabled: offered, seg: None, scaler: image::Scaler::default() }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    pub(crate) fn set_enabled(&mut self, on: bool, conn: &RustConnection) {
        if !on {
            self.detach(conn);
        }
        self.enabled = on;
    }

    pub(crate) fn detach(&mut self, conn: &RustConnection) {
        if let Some(seg) = self.seg.take() {
            let _ = shm::detach(conn, seg.id);
        }
    }

    /// Have the server write `area` of `root` (`need` bytes) into the segment, then lend the
    /// frame and the scaler to `use_frame`. `Err` only when shared memory failed.
    fn with_frame<T>(
        &mut self,
        conn: &RustConnection,
        root: u32,
        area: Rect,
        need: usize,
        use_frame: impl FnOnce(&mut [u8], &mut image::Scaler) -> T,
    ) -> Result<T, String> {
        if self.seg.as_ref().is_none_or(|s| s.size < need) {
            self.detach(conn);
            let size = need.next_multiple_of(1 << 20);
            let id = conn.generate_id().map_err(|e| e.to_string())?;
            let reply = shm::create_segment(conn, id, size as u32, false)
                .map_err(|e| e.to_string())?
                .reply()
                .map_err(|e| e.to_string())?;
            match map_segment(&File::from(reply.shm_fd), size) {
                Ok(map) => self.seg = Some(Segment { id, map, size }),
                Err(e) => {
                    let _ = shm::detach(conn, id);
                    return Err(format!("mapping the segment: {e}"));
                }
            }
        }
        let Some(seg) = self.seg.as_mut() else {
            return Err("no segment".into());
        };
        shm::get_image(
            conn,
            root,
            area.x as i16,
            area.y as i16,
            area.width as u16,
            area.height as u16,
            !0,
            ImageFormat::Z_PIXMAP.into(),
            seg.id,
            0,
        )
        .map_err(|e| e.to_string())?
        .reply()
        .map_err(|e| e.to_string())?;
        let out = use_frame(&mut seg.map[..need], &mut self.scaler);
        if seg.size > KEEP_SEGMENT_MAX {
            self.detach(conn);
        }
        self.scaler.trim(KEEP_SEGMENT_MAX);
        Ok(out)
    }
}

impl X11Desktop {
    fn capture_core(&self, area: Rect) -> Result<RgbImage, ToolError> {
        let stride = self.pixels.stride(area.width);
        let rows_per_strip = (STRIP_BYTES / stride.max(1)).clamp(1, area.height as usize) as u32;
        let mut cookies = Vec::new();
        let mut y = 0u32;
        while y < area.height {
            let rows = rows_per_strip.min(area.height - y);
            let cookie = self
                .conn
                .get_image(
                    ImageFormat::Z_PIXMAP,
                    self.root,
                    area.x as i16,
                    (area.y + y as i32) as i16,
                    area.width as u16,
                    rows as u16,
                    !0,
                )
                .map_err(conn_err)?;
            cookies.push((cookie, rows));
            y += rows;
        }
        let mut out = Vec::with_capacity(area.width as usize * area.height as usize * 3);
        for (cookie, rows) in cookies {
            let reply = cookie.reply().map_err(reply_err)?;
            self.pixels.convert_rows(&reply.data, area.width, rows, &mut out);
        }
        Ok(RgbImage { width: area.width, height: area.height, pixels: out })
    }

    /// The root window's size, the fallback monitor when RandR says nothing.
    fn root_rect(&self) -> Result<Rect, ToolError> {
        let g = self.conn.get_geometry(self.root).map_err(conn_err)?.reply().map_err(reply_err)?;
        Ok(Rect::new(0, 0, u32::from(g.width), u32::from(g.height)))
    }

    fn randr_monitors(&self) -> Option<Vec<DisplayInfo>> {
        let resources = super::dpi::ask_resources(&*self.conn, self.root);
        let reply = self.conn.randr_get_monitors(self.root, true).ok()?.reply().ok()?;
        let xft = super::dpi::xft_dpi(resources);
        // An atom's name never changes: ask the server once per monitor name, not per call
        // (every pointer action checks its point against the monitors).
        let mut known = lock(&self.atom_names);
        let names: Vec<_> = reply
            .monitors
            .iter()
            .map(|m| match known.get(&m.name) {
                Some(_) => None,
                None => self.conn.get_atom_name(m.name).ok(),
            })
            .collect();
        let mut out = Vec::new();
        for (i, (m, cookie)) in reply.monitors.iter().zip(names).enumerate() {
            if let Some(r) = cookie.and_then(|c| c.reply().ok()) {
                known.insert(m.name, String::from_utf8_lossy(&r.name).into_owned());
            }
            let name = known.get(&m.name).cloned().unwrap_or_else(|| format!("monitor-{i}"));
            out.push(DisplayInfo {
                index: i as u32,
                name,
                primary: m.primary,
                bounds: Rect::new(i32::from(m.x), i32::from(m.y), u32::from(m.width), u32::from(m.height)),
                dpi: super::dpi::monitor_dpi(
                    xft,
                    super::dpi::physical_dpi(
                        u32::from(m.width),
                        u32::from(m.height),
                        m.width_in_millimeters,
                        m.height_in_millimeters,
                    ),
                ),
            });
        }
        (!out.is_empty()).then_some(out)
    }
}

/// Ask RandR to report screen, CRTC and output changes to this connection, so the monitor
/// list can be kept until one of them arrives. `false` when RandR will not.
pub(crate) fn watch_monitors(conn: &RustConnection, root: u32) -> bool {
    use x11rb::protocol::randr::NotifyMask;
    // RandR answers CRTC and output events only to clients that said they speak 1.2 or later.
    let speaks = conn.randr_query_version(1, 5).ok().and_then(|c| c.reply().ok());
    if speaks.is_none_or(|v| (v.major_version, v.minor_version) < (1, 5)) {
        return false;
    }
    let mask = NotifyMask::SCREEN_CHANGE | NotifyMask::CRTC_CHANGE | NotifyMask::OUTPUT_CHANGE;
    conn.randr_select_input(root, mask).ok().and_then(|c| c.check().ok()).is_some()
}

impl Screens for X11Desktop {
    fn displays(&self) -> Result<Vec<DisplayInfo>, ToolError> {
        if self.randr_events {
            // Every pointer action checks its point against the monitors: answer from the
            // list RandR gave last unless it has said since that something changed.
            self.pump_events()?;
            if let Some((at, known)) = lock(&self.monitors).as_ref()
                && at.elapsed() < MONITORS_KEPT
            {
                return Ok(known.clone());
            }
        }
        if self.has_randr
            && let Some(monitors) = self.randr_monitors()
        {
            if self.randr_events {
                *lock(&self.monitors) = Some((std::time::Instant::now(), monitors.clone()));
            }
            return Ok(monitors);
        }
        let xft = super::dpi::xft_dpi(super::dpi::ask_resources(&*self.conn, self.root));
        let dpi = super::dpi::monitor_dpi(xft, None);
        Ok(vec![DisplayInfo {
            index: 0,
            name: "screen".into(),
            primary: true,
            bounds: self.root_rect()?,
            dpi,
        }])
    }

    fn cursor(&self) -> Result<Option<CursorImage>, ToolError> {
        use x11rb::protocol::xfixes::ConnectionExt as _;
        // XFixes must be told which version the client speaks before it answers anything.
        let Ok(version) = self.conn.xfixes_query_version(4, 0) else {
            return Ok(None);
        };
        if version.reply().is_err() {
            return Ok(None);
        }
        let img = self.conn.xfixes_get_cursor_image().map_err(conn_err)?.reply().map_err(reply_err)?;
        Ok(Some(CursorImage {
            x: i32::from(img.x) - i32::from(img.xhot),
            y: i32::from(img.y) - i32::from(img.yhot),
            width: u32::from(img.width),
            height: u32::from(img.height),
            argb: img.cursor_image,
        }))
    }

    fn capture(&self, area: Rect) -> Result<Captured, ToolError> {
        let (mut image, via) = self.screen_pixels(area)?;
        let left_out = self.leave_out_own(area, &mut image)?;
        Ok(Captured { image, left_out, via })
    }

    fn capture_scaled(&self, area: Rect, width: u32, height: u32) -> Result<Captured, ToolError> {
        let smaller = width < area.width || height < area.height;
        if smaller && self.pixels.is_bgrx() {
            self.check_area(area)?;
            let need = self.pixels.stride(area.width) * area.height as usize;
            let mut shm = lock(&self.shm);
            if shm.enabled() {
                let (w, h) = (width.clamp(1, area.width), height.clamp(1, area.height));
                let scaled = shm.with_frame(&self.conn, self.root, area, need, |frame, scaler| {
                    let left_out = self
                        .leave_out_own_with(area, &mut |part, rgb| paste_into_bgrx(frame, area, part, rgb))?;
                    let small = scaler.downscale_x4(frame, area.width, area.height, w, h)?;
                    let mut pixels = Vec::with_capacity(w as usize * h as usize * 3);
                    self.pixels.convert_rows(&small, w, h, &mut pixels);
                    Ok(Captured {
                        image: RgbImage { width: w, height: h, pixels },
                        left_out,
                        via: CaptureVia::Xshm,
                    })
                });
                match scaled {
                    Ok(captured) => return captured,
                    Err(e) => {
                        tracing::warn!("MIT-SHM capture failed, using GetImage from now on: {e}");
                        shm.set_enabled(false, &self.conn);
                    }
                }
            }
        }
        let shot = self.capture(area)?;
        Ok(Captured { image: image::downscale(shot.image, width, height)?, ..shot })
    }
}

/// Put RGB `rgb` of desktop rectangle `part` into `frame`, the BGRX pixels of `area`.
fn paste_into_bgrx(frame: &mut [u8], area: Rect, part: Rect, rgb: &[u8]) {
    let (dx, dy) = ((part.x - area.x) as usize, (part.y - area.y) as usize);
    let (w, stride) = (part.width as usize, area.width as usize * 4);
    for (y, src) in rgb.chunks_exact(w * 3).take(part.height as usize).enumerate() {
        let at = (dy + y) * stride + dx * 4;
        let Some(dst) = frame.get_mut(at..at + w * 4) else { continue };
        for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(3)) {
            d[..3].copy_from_slice(&[s[2], s[1], s[0]]);
        }
    }
}

impl X11Desktop {
    /// `no-target` unless `area` is a non-empty part of the screen.
    fn check_area(&self, area: Rect) -> Result<(), ToolError> {
        let root = self.root_rect()?;
        if area.x < 0 || area.y < 0 || area.right() > root.right() || area.bottom() > root.bottom() {
            return Err(ToolError::new(
                ErrorCode::NoTarget,
                "The capture area lies (partly) outside the screen.",
            ));
        }
        if area.is_empty() {
            return Err(ToolError::new(ErrorCode::NoTarget, "The capture area is empty."));
        }
        Ok(())
    }

    /// The screen's pixels in `area`, as the operator sees them, and how they were read.
    fn screen_pixels(&self, area: Rect) -> Result<(RgbImage, CaptureVia), ToolError> {
        self.check_area(area)?;
        let need = self.pixels.stride(area.width) * area.height as usize;
        {
            let mut shm = lock(&self.shm);
            if shm.enabled() {
                let read = shm.with_frame(&self.conn, self.root, area, need, |data, _| {
                    let mut out = Vec::with_capacity(area.width as usize * area.height as usize * 3);
                    self.pixels.convert_rows(data, area.width, area.height, &mut out);
                    RgbImage { width: area.width, height: area.height, pixels: out }
                });
                match read {
                    Ok(image) => return Ok((image, CaptureVia::Xshm)),
                    Err(e) => {
                        tracing::warn!("MIT-SHM capture failed, using GetImage from now on: {e}");
                        shm.set_enabled(false, &self.conn);
                    }
                }
            }
        }
        Ok((self.capture_core(area)?, CaptureVia::Getimage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rgb_pasted_into_a_bgrx_frame_lands_at_the_offset_in_bgr_order() {
        let mut frame = vec![0u8; 3 * 2 * 4];
        paste_into_bgrx(&mut frame, Rect::new(10, 10, 3, 2), Rect::new(11, 11, 2, 1), &[1, 2, 3, 4, 5, 6]);
        assert_eq!(&frame[16..24], &[3, 2, 1, 0, 6, 5, 4, 0]);
        assert!(frame[..16].iter().all(|b| *b == 0));
    }

    #[test]
    fn channel_scaling() {
        assert_eq!(channel(0x00ff_0000, 0x00ff_0000), 0xff);
        assert_eq!(channel(0xf800, 0xf800), 0xff);
        assert_eq!(channel(0x0000, 0xf800), 0);
        assert_eq!(channel(0x07e0, 0x07e0), 0xff);
    }

    #[test]
    fn converts_bgrx_and_rgb565() {
        let f = PixelFormat {
            bits_per_pixel: 32,
            scanline_pad: 32,
            lsb_first: true,
            masks: [0xff_0000, 0xff00, 0xff],
        };
        let mut out = Vec::new();
        f.convert_rows(&[3, 2, 1, 0, 6, 5, 4, 0], 2, 1, &mut out);
        assert_eq!(out, vec![1, 2, 3, 4, 5, 6]);

        let f = PixelFormat {
            bits_per_pixel: 16,
            scanline_pad: 32,
            lsb_first: true,
            masks: [0xf800, 0x07e0, 0x001f],
        };
        let mut out = Vec::new();
        // One red pixel, then padding to 32 bits; second row one blue pixel.
        f.convert_rows(&[0x00, 0xf8, 0, 0, 0x1f, 0x00, 0, 0], 1, 2, &mut out);
        assert_eq!(out, vec![255, 0, 0, 0, 0, 255]);
        assert_eq!(f.stride(3), 8);
    }
}
