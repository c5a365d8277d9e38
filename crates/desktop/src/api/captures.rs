//! The captures this process handed out, so an agent can give a point in the pixels of an
//! image it received (`captureId` plus x/y) and mcec maps it back to the desktop exactly.
//!
//! A capture is remembered by its id, with the desktop rectangle it shows and the image's
//! size; the most recent [`KEPT`] are kept. Image pixel (x, y) maps to the desktop pixel whose
//! area holds the image pixel's centre, so the round trip is exact to within one desktop
//! pixel at any scale.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mcec_rules::ToolError;

use crate::types::{Point, Rect};

/// How many captures are remembered.
pub const KEPT: usize = 64;

/// What one capture shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CaptureMap {
    /// The desktop area the image shows.
    pub source: Rect,
    /// The image's size.
    pub width: u32,
    pub height: u32,
}

impl CaptureMap {
    /// The desktop pixel under image pixel `p`; `bad-arguments` naming `field` when `p` lies
    /// outside the image.
    pub(crate) fn desktop_point(self, p: Point, field: &str) -> Result<Point, ToolError> {
        let inside = p.x >= 0 && p.y >= 0 && (p.x as u32) < self.width && (p.y as u32) < self.height;
        if !inside {
            return Err(ToolError::bad_argument(
                field,
                format!(
                    "({}, {}) lies outside the capture, which is {}x{} pixels",
                    p.x, p.y, self.width, self.height
                ),
            ));
        }
        let axis = |i: i32, image: u32, desk: u32| -> i32 {
            let centre = (f64::from(i) + 0.5) * f64::from(desk) / f64::from(image);
            (centre.floor() as i64).clamp(0, i64::from(desk) - 1) as i32
        };
        Ok(Point::new(
            self.source.x + axis(p.x, self.width, self.source.width),
            self.source.y + axis(p.y, self.height, self.source.height),
        ))
    }
}

#[derive(Default)]
pub(crate) struct Captures {
    next: AtomicU64,
    kept: Mutex<VecDeque<(String, CaptureMap)>>,
}

impl Captures {
    /// Remember a capture; returns its id.
    pub(crate) fn remember(&self, map: CaptureMap) -> String {
        let id = format!("cap-{}", self.next.fetch_add(1, Ordering::SeqCst) + 1);
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back((id.clone(), map));
        id
    }

    /// The capture `id` names; `bad-arguments` when this process never issued it or it is
    /// no longer kept.
    pub(crate) fn get(&self, id: &str) -> Result<CaptureMap, ToolError> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.iter().find(|(k, _)| k == id).map(|(_, m)| *m).ok_or_else(|| {
            ToolError::bad_argument(
                "captureId",
                format!(
                    "no capture `{}` is known: ids come from this mcec's `capture` answers, and only the last {KEPT} are kept",
                    id.chars().take(40).collect::<String>()
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_pixels_map_back_within_one_desktop_pixel_at_any_scale() {
        for (dw, dh, iw, ih) in
            [(1280, 800, 640, 400), (1280, 800, 427, 267), (1280, 800, 1000, 625), (1280, 800, 1280, 800)]
        {
            let map = CaptureMap { source: Rect::new(100, 50, dw, dh), width: iw, height: ih };
            for dx in (0..dw as i32).step_by(7) {
                // The image pixel a desktop pixel lands in, and back.
                let ix = ((f64::from(dx) + 0.5) * f64::from(iw) / f64::from(dw)) as i32;
                let back = map.desktop_point(Point::new(ix, 0), "at").unwrap();
                let err = (back.x - 100 - dx).abs() as f64;
                assert!(
                    err <= f64::from(dw) / f64::from(iw) / 2.0 + 1.0,
                    "{dw}->{iw}: {dx} came back as {}",
                    back.x - 100
                );
            }
            let corner = map.desktop_point(Point::new(iw as i32 - 1, ih as i32 - 1), "at").unwrap();
            assert!(corner.x < 100 + dw as i32 && corner.y < 50 + dh as i32);
        }
    }

    #[test]
    fn unknown_ids_and_points_outside_the_image_are_refused() {
        let caps = Captures::default();
        let id = caps.remember(CaptureMap { source: Rect::new(0, 0, 100, 100), width: 50, height: 50 });
        assert!(caps.get(&id).is_ok());
        assert!(caps.get("cap-999").unwrap_err().detail.starts_with("`captureId`: no capture `cap-999`"));
        let map = caps.get(&id).unwrap();
        assert!(
            map.desktop_point(Point::new(50, 0), "at")
                .unwrap_err()
                .detail
                .contains("lies outside the capture")
        );
        assert!(map.desktop_point(Point::new(-1, 0), "at").is_err());
        for _ in 0..KEPT {
            caps.remember(CaptureMap { source: Rect::new(0, 0, 1, 1), width: 1, height: 1 });
        }
        assert!(caps.get(&id).is_err(), "the oldest is forgotten");
    }
}
