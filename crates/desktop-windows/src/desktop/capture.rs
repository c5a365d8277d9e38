//! Pixels: a GDI `BitBlt` of the screen into a top-down 32-bit DIB, read back with
//! `GetDIBits` and turned into RGB.
//!
//! mcec's own windows (banner, prompt, host) are never shown to the agent: where one covers
//! the captured area its place is painted black and the result says so (`Blanked`). On a
//! Windows that honours `WDA_EXCLUDEFROMCAPTURE` the banner is already missing from the blit;
//! blanking its rectangle as well keeps the rule independent of that. Where Windows provides
//! DXGI desktop duplication the pixels come from it instead (`dxgi.rs`); the blanking is the
//! same for both.

use mcec_desktop::types::{CaptureVia, Captured, LeftOut, LeftOutHow, Rect, RgbImage};
use mcec_rules::{ErrorCode, ToolError};
use windows_sys::Win32::Graphics::Gdi::{
    BI_RGB, BITMAPINFO, BITMAPINFOHEADER, BitBlt, CAPTUREBLT, CreateCompatibleBitmap, CreateCompatibleDC,
    DIB_RGB_COLORS, DeleteDC, DeleteObject, GetDC, GetDIBits, HBITMAP, HDC, HGDIOBJ, ReleaseDC, SRCCOPY,
    SelectObject,
};

use super::{WindowsDesktop, win_err};

/// GDI objects released in reverse order of creation, whatever path the capture takes.
struct Gdi {
    screen: HDC,
    mem: HDC,
    bitmap: HBITMAP,
    old: HGDIOBJ,
}

impl Drop for Gdi {
    fn drop(&mut self) {
        // SAFETY: each handle was created by this capture and is released once; null ones
        // (a failed step) are skipped.
        unsafe {
            if !self.old.is_null() {
                SelectObject(self.mem, self.old);
            }
            if !self.bitmap.is_null() {
                DeleteObject(self.bitmap);
            }
            if !self.mem.is_null() {
                DeleteDC(self.mem);
            }
            if !self.screen.is_null() {
                ReleaseDC(std::ptr::null_mut(), self.screen);
            }
        }
    }
}

/// The BGRA pixels of `area` of the screen, rows top to bottom.
fn blit(area: Rect) -> Result<Vec<u8>, ToolError> {
    let (w, h) = (
        i32::try_from(area.width).map_err(|_| ToolError::bad_argument("region", "is too wide"))?,
        i32::try_from(area.height).map_err(|_| ToolError::bad_argument("region", "is too tall"))?,
    );
    let mut gdi = Gdi {
        screen: std::ptr::null_mut(),
        mem: std::ptr::null_mut(),
        bitmap: std::ptr::null_mut(),
        old: std::ptr::null_mut(),
    };
    // SAFETY: every handle is checked before use and owned by `gdi`, which frees it.
    unsafe {
        gdi.screen = GetDC(std::ptr::null_mut());
        if gdi.screen.is_null() {
            return Err(win_err("GetDC"));
        }
        gdi.mem = CreateCompatibleDC(gdi.screen);
        if gdi.mem.is_null() {
            return Err(win_err("CreateCompatibleDC"));
        }
        gdi.bitmap = CreateCompatibleBitmap(gdi.screen, w, h);
        if gdi.bitmap.is_null() {
            return Err(win_err("CreateCompatibleBitmap"));
        }
        gdi.old = SelectObject(gdi.mem, gdi.bitmap);
        if BitBlt(gdi.mem, 0, 0, w, h, gdi.screen, area.x, area.y, SRCCOPY | CAPTUREBLT) == 0 {
            return Err(win_err("BitBlt"));
        }
    }
    // SAFETY: BITMAPINFO is plain data, for which all zeroes is a valid value.
    let mut info: BITMAPINFO = unsafe { std::mem::zeroed() };
    info.bmiHeader = BITMAPINFOHEADER {
        biSize: std::mem::size_of::<BITMAPINFOHEADER>() as u32,
        biWidth: w,
        // Negative: rows top to bottom.
        biHeight: -h,
        biPlanes: 1,
        biBitCount: 32,
        biCompression: BI_RGB,
        // SAFETY: BITMAPINFOHEADER is plain data, for which all zeroes is a valid value.
        ..unsafe { std::mem::zeroed() }
    };
    let mut bgra = vec![0u8; area.width as usize * area.height as usize * 4];
    // SAFETY: `bgra` holds exactly h rows of w 32-bit pixels as `info` describes; the bitmap
    // is deselected first, as GetDIBits requires.
    let rows = unsafe {
        SelectObject(gdi.mem, gdi.old);
        gdi.old = std::ptr::null_mut();
        GetDIBits(gdi.mem, gdi.bitmap, 0, h as u32, bgra.as_mut_ptr().cast(), &mut info, DIB_RGB_COLORS)
    };
    if rows != h {
        return Err(win_err("GetDIBits"));
    }
    Ok(bgra)
}

fn to_rgb(bgra: &[u8]) -> Vec<u8> {
    let mut rgb = Vec::with_capacity(bgra.len() / 4 * 3);
    for px in bgra.chunks_exact(4) {
        rgb.extend_from_slice(&[px[2], px[1], px[0]]);
    }
    rgb
}

/// Paints `r` (desktop coordinates) black in `img`, which shows `area`.
fn blank(img: &mut RgbImage, area: Rect, r: Rect) {
    let Some(hit) = area.intersect(&r) else { return };
    let (x0, y0) = ((hit.x - area.x) as usize, (hit.y - area.y) as usize);
    for y in y0..y0 + hit.height as usize {
        let row = (y * img.width as usize + x0) * 3;
        img.pixels[row..row + hit.width as usize * 3].fill(0);
    }
}

impl WindowsDesktop {
    pub(super) fn capture_area(&self, area: Rect) -> Result<Captured, ToolError> {
        if area.is_empty() {
            return Err(ToolError::new(ErrorCode::NoTarget, "The area to capture is empty."));
        }
        let own: Vec<Rect> = self
            .all_windows()?
            .into_iter()
            .filter(|w| w.is_mcecs_own() && !w.minimized)
            .filter_map(|w| w.bounds.and_then(|b| area.intersect(&b)))
            .collect();
        let (bgra, via) = match self.dxgi.read(area) {
            Some(bgra) => (bgra, CaptureVia::Dxgi),
            None => (blit(area)?, CaptureVia::Gdi),
        };
        let mut image = RgbImage { width: area.width, height: area.height, pixels: to_rgb(&bgra) };
        for r in &own {
            blank(&mut image, area, *r);
        }
        let left_out = (!own.is_empty()).then_some(LeftOut { areas: own, how: LeftOutHow::Blanked });
        Ok(Captured { image, left_out, via })
    }
}
