//! The observation tools: `displays`, `windows` (with bounded waits) and `capture`.

use std::time::{Duration, Instant};

use mcec_rules::{ErrorCode, StopFlag, ToolError, progress};
use serde::Serialize;

use super::captures::CaptureMap;
use super::{DesktopTools, artifacts, stopped_after};
use crate::geometry::{check_capture_size, client_size, target_size};
use crate::requests::{
    CaptureRequest, DisplaysRequest, ImageFormat, Region, WaitCondition, WindowSelector, WindowsRequest,
};
use crate::types::{CaptureVia, Captured, DisplaysResult, LeftOut, Rect, WindowInfo};
use crate::{image, select};

/// Default and longest wait of `windows` with a `condition`.
const DEFAULT_WAIT_MS: u64 = 5_000;
const MAX_WAIT_MS: u64 = super::MAX_CALL_MS;
/// JPEG quality when none is asked for.
const DEFAULT_JPEG_QUALITY: u8 = 80;
/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(15);

/// The answer of `windows`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowsResult {
    /// The windows matching the filters (for `disappears`: none).
    pub windows: Vec<WindowInfo>,
    /// How long the call waited for `condition`, in ms (0 without one).
    pub waited_ms: u64,
}

/// The answer of `capture`. `data` is not serialised: the MCP layer sends it as an image
/// block and the rest as the envelope's result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureResult {
    #[serde(skip)]
    pub data: Vec<u8>,
    /// `image/png` or `image/jpeg`.
    pub mime_type: &'static str,
    /// Size of the image returned (after any downscale).
    pub width: u32,
    pub height: u32,
    /// Size of the encoded image in bytes.
    pub byte_size: usize,
    /// The desktop area captured, before downscaling.
    pub source: Rect,
    /// Give this as `captureId` to click, drag, scroll or move at image pixels of this
    /// capture: mcec maps them back to the desktop.
    pub capture_id: String,
    /// Image pixels per desktop pixel, across and down (1 when not downscaled).
    pub scale_x: f64,
    pub scale_y: f64,
    /// Where mcec's own windows (banner, prompt) lay in the area and how they were left out;
    /// absent when none was there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOut>,
    /// How the backend read the pixels: `xshm` or `getimage` on X11, `dxgi` (desktop
    /// duplication) or `gdi` on Windows.
    pub via: CaptureVia,
    /// The window captured, when a selector was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowInfo>,
    /// Where the PNG was also written, when `file` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// A region argument checked and turned into a rectangle, caps applied before any
/// allocation.
pub(crate) fn region_rect(r: &Region) -> Result<Rect, ToolError> {
    if r.width <= 0 || r.height <= 0 {
        return Err(ToolError::bad_argument(
            "region",
            format!("width and height must be positive (got {}x{})", r.width, r.height),
        ));
    }
    check_capture_size(r.width as u64, r.height as u64).map_err(|e| ToolError::bad_argument("region", e))?;
    let x = i32::try_from(r.x).map_err(|_| ToolError::bad_argument("region", "x is out of range"))?;
    let y = i32::try_from(r.y).map_err(|_| ToolError::bad_argument("region", "y is out of range"))?;
    Ok(Rect::new(x, y, r.width as u32, r.height as u32))
}

pub(crate) fn check_downscale(max_width: Option<u32>, scale: Option<f64>) -> Result<(), ToolError> {
    if max_width == Some(0) {
        return Err(ToolError::bad_argument("maxWidth", "must be at least 1"));
    }
    if let Some(s) = scale
        && !(s.is_finite() && s > 0.0)
    {
        return Err(ToolError::bad_argument("scale", "must be a number above 0"));
    }
    Ok(())
}

impl DesktopTools {
    /// The desktop area a `capture` or `record` reads: a region, a window, or everything,
    /// clipped to the desktop and checked against the caps.
    pub(crate) fn target_area(
        &self,
        region: Option<&Region>,
        selector: &WindowSelector,
    ) -> Result<(Rect, Option<WindowInfo>), ToolError> {
        if region.is_some() && !selector.is_empty() {
            return Err(ToolError::bad_argument(
                "region",
                "give either a region or a window selector, not both",
            ));
        }
        let (desktop, _) = self.desktop_bounds()?;
        let (wanted, window, field) = match (region, selector.is_empty()) {
            (Some(r), _) => (region_rect(r)?, None, "region"),
            (None, false) => {
                let w = self.resolve(selector)?;
                if w.minimized {
                    return Err(ToolError::new(
                        ErrorCode::NoTarget,
                        format!("Window {} is minimised; restore it first.", w.id),
                    ));
                }
                (w.geometry()?, Some(w), "window")
            }
            (None, true) => (desktop, None, "region"),
        };
        let area = wanted.intersect(&desktop).ok_or_else(|| {
            ToolError::new(
                ErrorCode::NoTarget,
                format!("The `{field}` to capture lies entirely off the screen."),
            )
        })?;
        check_capture_size(u64::from(area.width), u64::from(area.height))
            .map_err(|e| ToolError::bad_argument(field, e))?;
        Ok((area, window))
    }

    /// `displays`: the monitors and the virtual desktop they span.
    pub fn displays(&self, _req: &DisplaysRequest) -> Result<DisplaysResult, ToolError> {
        let displays = self.backend.displays()?;
        let virtual_bounds =
            displays.iter().map(|d| d.bounds).reduce(|a, b| a.union(&b)).unwrap_or(Rect::new(0, 0, 0, 0));
        Ok(DisplaysResult { displays, virtual_bounds })
    }

    /// `windows`: the filtered list, after waiting for `condition` if one is given.
    pub fn windows(&self, req: &WindowsRequest, stop: &StopFlag) -> Result<WindowsResult, ToolError> {
        let Some(condition) = req.condition else {
            let windows = select::filter(self.backend.list_windows()?, req);
            return Ok(WindowsResult { windows, waited_ms: 0 });
        };
        let timeout = req.timeout_ms.unwrap_or(DEFAULT_WAIT_MS);
        if timeout > MAX_WAIT_MS {
            return Err(ToolError::bad_argument("timeoutMs", format!("must be at most {MAX_WAIT_MS}")));
        }
        let start = Instant::now();
        loop {
            let windows = select::filter(self.backend.list_windows()?, req);
            let met = match condition {
                WaitCondition::Appears => !windows.is_empty(),
                WaitCondition::Disappears => windows.is_empty(),
                WaitCondition::Foreground => windows.iter().any(|w| w.foreground),
            };
            let waited_ms = start.elapsed().as_millis() as u64;
            if met {
                return Ok(WindowsResult { windows, waited_ms });
            }
            if waited_ms >= timeout {
                let what = match condition {
                    WaitCondition::Appears => "no matching window appeared".to_string(),
                    WaitCondition::Disappears => {
                        format!("{} matching window(s) are still open", windows.len())
                    }
                    WaitCondition::Foreground => "no matching window came to the foreground".into(),
                };
                return Err(ToolError::new(ErrorCode::Timeout, format!("Waited {timeout} ms and {what}.")));
            }
            if stop.is_set() {
                return Err(stopped_after(format!("The wait ended after {waited_ms} of {timeout} ms.")));
            }
            progress::report(waited_ms, timeout, "ms waited");
            std::thread::sleep(POLL.min(Duration::from_millis(timeout - waited_ms)));
        }
    }

    /// `capture`: the desktop, a region, or a window, as PNG or JPEG, held to a
    /// client-friendly size unless asked otherwise.
    pub fn capture(&self, req: &CaptureRequest) -> Result<CaptureResult, ToolError> {
        let selector = req.selector();
        check_downscale(req.max_width, req.scale)?;
        let full = req.full.unwrap_or(false);
        if full && (req.max_width.is_some() || req.scale.is_some()) {
            return Err(ToolError::bad_argument(
                "full",
                "asks for every pixel: leave out `maxWidth` and `scale`",
            ));
        }
        let asked = match (req.format, req.file.as_deref()) {
            (Some(format), _) => format,
            // A file name says what it holds.
            (None, Some(f)) if self.capture_defaults.format == ImageFormat::Auto => file_format(f),
            (None, _) => self.capture_defaults.format,
        };
        if asked == ImageFormat::Png && req.quality.is_some() {
            return Err(ToolError::bad_argument("quality", "applies to JPEG only (this capture is PNG)"));
        }
        let quality = req.quality.unwrap_or(DEFAULT_JPEG_QUALITY);
        if !(1..=100).contains(&quality) {
            return Err(ToolError::bad_argument("quality", "must be 1 to 100"));
        }
        let out_path = match req.file.as_deref() {
            Some(f) => {
                let extension = if asked == ImageFormat::Jpeg { "jpg" } else { "png" };
                Some(artifacts::output_path(&self.config.artifact_dir, Some(f), "capture", extension)?)
            }
            None => None,
        };
        let (area, window) = self.target_area(req.region.as_ref(), &selector)?;
        let (tw, th) = match (full, req.max_width, req.scale) {
            (true, _, _) => (area.width, area.height),
            (false, None, None) => {
                let d = self.capture_defaults;
                client_size(area.width, area.height, d.max_long_side, d.max_pixels)
            }
            (false, max_width, scale) => target_size(area.width, area.height, max_width, scale),
        };
        let shot = if req.cursor == Some(true) {
            // The pointer is drawn at full size, then the picture is scaled.
            let mut shot = self.backend.capture(area)?;
            match self.backend.cursor()? {
                Some(cursor) => image::draw_cursor(&mut shot.image, (area.x, area.y), &cursor),
                None => {
                    return Err(ToolError::new(
                        ErrorCode::Unavailable,
                        "This display cannot tell the pointer's image (no XFixes); capture without `cursor`.",
                    ));
                }
            }
            Captured { image: image::downscale(shot.image, tw, th)?, ..shot }
        } else {
            // Scaled while the frame is read: no full-size RGB copy of a 4K screen.
            self.backend.capture_scaled(area, tw, th)?
        };
        if let Some(w) = &window {
            // The window must still exist after the pixels were read, or they show something else.
            self.backend.window_info(w.id)?;
        }
        let img = shot.image;
        let jpeg = match asked {
            ImageFormat::Auto => image::looks_photographic(&img),
            format => format == ImageFormat::Jpeg,
        };
        let (data, mime_type) = if jpeg {
            (image::encode_jpeg(&img, quality)?, "image/jpeg")
        } else {
            (image::encode_png(&img)?, "image/png")
        };
        let file = match out_path {
            Some(p) => {
                artifacts::write(&self.config.artifact_dir, &p, &data)?;
                Some(p.display().to_string())
            }
            None => None,
        };
        let capture_id =
            self.captures.remember(CaptureMap { source: area, width: img.width, height: img.height });
        Ok(CaptureResult {
            mime_type,
            width: img.width,
            height: img.height,
            byte_size: data.len(),
            data,
            source: area,
            capture_id,
            scale_x: f64::from(img.width) / f64::from(area.width),
            scale_y: f64::from(img.height) / f64::from(area.height),
            left_out: shot.left_out,
            via: shot.via,
            window,
            file,
        })
    }
}

/// The format a capture written to `file` takes when none was asked for.
fn file_format(file: &str) -> ImageFormat {
    let ext = std::path::Path::new(file).extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext.eq_ignore_ascii_case("jpg") || ext.eq_ignore_ascii_case("jpeg") {
        ImageFormat::Jpeg
    } else {
        ImageFormat::Png
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_says_its_format() {
        assert_eq!(file_format("shot.JPG"), ImageFormat::Jpeg);
        assert_eq!(file_format("a/b.jpeg"), ImageFormat::Jpeg);
        assert_eq!(file_format("shot.png"), ImageFormat::Png);
        assert_eq!(file_format("shot"), ImageFormat::Png);
    }

    #[test]
    fn regions_are_checked_before_allocation() {
        let r = |x, y, width, height| Region { x, y, width, height };
        assert_eq!(region_rect(&r(1, 2, 3, 4)).unwrap(), Rect::new(1, 2, 3, 4));
        let neg = region_rect(&r(0, 0, -5, 10)).unwrap_err();
        assert_eq!(neg.code, ErrorCode::BadArguments);
        assert!(neg.detail.starts_with("`region`"));
        assert!(region_rect(&r(0, 0, 16_385, 10)).is_err());
        assert!(region_rect(&r(0, 0, 16_384, 16_384)).is_err());
        assert!(region_rect(&r(i64::MAX, 0, 10, 10)).is_err());
        assert!(check_downscale(Some(0), None).is_err());
        assert!(check_downscale(None, Some(f64::NAN)).is_err());
        assert!(check_downscale(None, Some(-1.0)).is_err());
        assert!(check_downscale(Some(10), Some(0.5)).is_ok());
    }
}
