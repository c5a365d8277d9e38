//! Pure geometry rules of the tools: drag densification, capture caps and downscale sizes.
//!
//! Kept apart from any backend so they are unit-tested without a display and shared by every
//! platform.

use crate::types::Point;

/// Longest single pointer step of a drag, in pixels.
pub const MAX_STEP_PX: f64 = 12.0;
/// Most points a drag may send, start included.
pub const MAX_DRAG_POINTS: usize = 400;
/// Longest side of a captured region.
pub const MAX_CAPTURE_SIDE: u32 = 16_384;
/// Most pixels in one captured region (64 Mpx, 2^26).
pub const MAX_CAPTURE_PIXELS: u64 = 64 * 1024 * 1024;

/// Why a drag path cannot be densified within the limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathTooLong {
    pub needed: usize,
}

/// Turn waypoints into a pointer path whose steps are all at most [`MAX_STEP_PX`] long,
/// starting at the first waypoint and ending exactly at the last. Fails when that takes more
/// than [`MAX_DRAG_POINTS`] points.
pub fn densify(waypoints: &[Point]) -> Result<Vec<Point>, PathTooLong> {
    let Some(&first) = waypoints.first() else {
        return Ok(Vec::new());
    };
    let mut needed = 1usize;
    for pair in waypoints.windows(2) {
        needed = needed.saturating_add(steps_between(pair[0], pair[1]));
    }
    if needed > MAX_DRAG_POINTS {
        return Err(PathTooLong { needed });
    }
    let mut out = Vec::with_capacity(needed);
    out.push(first);
    for pair in waypoints.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let n = steps_between(a, b);
        for i in 1..=n {
            let t = i as f64 / n as f64;
            let x = f64::from(a.x) + (f64::from(b.x) - f64::from(a.x)) * t;
            let y = f64::from(a.y) + (f64::from(b.y) - f64::from(a.y)) * t;
            out.push(Point::new(x.round() as i32, y.round() as i32));
        }
    }
    Ok(out)
}

/// Steps needed from `a` to `b` (0 when they coincide).
fn steps_between(a: Point, b: Point) -> usize {
    let dx = f64::from(b.x) - f64::from(a.x);
    let dy = f64::from(b.y) - f64::from(a.y);
    let dist = dx.hypot(dy);
    if dist == 0.0 { 0 } else { (dist / MAX_STEP_PX).ceil() as usize }
}

/// Check a capture size against the caps before anything is allocated.
pub fn check_capture_size(width: u64, height: u64) -> Result<(), String> {
    if width == 0 || height == 0 {
        return Err("must have a positive width and height".into());
    }
    if width > u64::from(MAX_CAPTURE_SIDE) || height > u64::from(MAX_CAPTURE_SIDE) {
        return Err(format!("is {width}x{height}; at most {MAX_CAPTURE_SIDE} px a side is allowed"));
    }
    if width * height > MAX_CAPTURE_PIXELS {
        return Err(format!(
            "is {width}x{height} = {} px; at most {MAX_CAPTURE_PIXELS} px (64 Mpx) is allowed",
            width * height
        ));
    }
    Ok(())
}

/// The size an image of `width`x`height` is scaled to for `maxWidth` and `scale`; never
/// larger than the source. `scale` must lie in (0, 1] or above (above 1 means "no change").
pub fn target_size(width: u32, height: u32, max_width: Option<u32>, scale: Option<f64>) -> (u32, u32) {
    let mut factor = 1.0f64;
    if let Some(s) = scale
        && s.is_finite()
        && s > 0.0
    {
        factor = factor.min(s);
    }
    if let Some(mw) = max_width
        && mw > 0
        && width > 0
    {
        factor = factor.min(f64::from(mw) / f64::from(width));
    }
    if factor >= 1.0 {
        return (width, height);
    }
    let w = ((f64::from(width) * factor).round() as u32).clamp(1, width);
    let h = ((f64::from(height) * factor).round() as u32).clamp(1, height);
    (w, h)
}

/// The long side and pixel count a capture with no size argument is held to: what
/// computer-use models take without resizing it themselves.
pub const CLIENT_LONG_SIDE: u32 = 1568;
pub const CLIENT_PIXELS: u64 = 1_150_000;

/// The largest size of the same aspect within `long_side` and `max_pixels`; never larger
/// than the source.
pub fn client_size(width: u32, height: u32, long_side: u32, max_pixels: u64) -> (u32, u32) {
    let long = width.max(height).max(1);
    let by_side = f64::from(long_side) / f64::from(long);
    let pixels = u64::from(width) * u64::from(height);
    let by_area = if pixels == 0 { 1.0 } else { (max_pixels as f64 / pixels as f64).sqrt() };
    let factor = by_side.min(by_area);
    if factor >= 1.0 {
        return (width, height);
    }
    // Round down so both limits hold after rounding.
    let w = ((f64::from(width) * factor).floor() as u32).clamp(1, width);
    let h = ((f64::from(height) * factor).floor() as u32).clamp(1, height);
    (w, h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_size_keeps_both_limits_and_the_aspect() {
        for (w, h) in [(3840, 2160), (1280, 800), (1920, 1080), (7680, 800), (800, 7680), (1568, 1568)] {
            let (cw, ch) = client_size(w, h, CLIENT_LONG_SIDE, CLIENT_PIXELS);
            assert!(
                cw.max(ch) <= CLIENT_LONG_SIDE && u64::from(cw) * u64::from(ch) <= CLIENT_PIXELS,
                "{w}x{h}"
            );
            assert!(cw <= w && ch <= h);
            let aspect = |a: u32, b: u32| f64::from(a) / f64::from(b);
            assert!((aspect(cw, ch) - aspect(w, h)).abs() / aspect(w, h) < 0.01, "{w}x{h} -> {cw}x{ch}");
        }
        assert_eq!(
            client_size(1280, 800, CLIENT_LONG_SIDE, CLIENT_PIXELS),
            (1280, 800),
            "small enough already"
        );
        assert_eq!(client_size(3840, 2160, CLIENT_LONG_SIDE, CLIENT_PIXELS), (1429, 804));
    }

    fn step_ok(path: &[Point]) -> bool {
        path.windows(2).all(|w| {
            let dx = f64::from(w[1].x - w[0].x);
            let dy = f64::from(w[1].y - w[0].y);
            dx.hypot(dy) <= MAX_STEP_PX + 0.75
        })
    }

    #[test]
    fn densify_straight_and_waypoints() {
        let p = densify(&[Point::new(0, 0), Point::new(100, 0)]).unwrap();
        assert_eq!(p.first(), Some(&Point::new(0, 0)));
        assert_eq!(p.last(), Some(&Point::new(100, 0)));
        assert_eq!(p.len(), 1 + 9);
        assert!(step_ok(&p));

        let w = [Point::new(10, 10), Point::new(200, 50), Point::new(-30, 400)];
        let p = densify(&w).unwrap();
        assert_eq!(p.last(), Some(&Point::new(-30, 400)));
        assert!(p.contains(&Point::new(200, 50)));
        assert!(step_ok(&p));

        assert_eq!(densify(&[Point::new(5, 5), Point::new(5, 5)]).unwrap(), vec![Point::new(5, 5)]);
        assert!(densify(&[]).unwrap().is_empty());
    }

    #[test]
    fn densify_caps_points() {
        // 4788 px needs 399 steps + start = 400 points: allowed. One more step is not.
        assert_eq!(densify(&[Point::new(0, 0), Point::new(4788, 0)]).unwrap().len(), 400);
        assert_eq!(densify(&[Point::new(0, 0), Point::new(4789, 0)]), Err(PathTooLong { needed: 401 }));
    }

    #[test]
    fn capture_caps() {
        assert!(check_capture_size(1280, 800).is_ok());
        assert!(check_capture_size(16_384, 4096).is_ok());
        assert!(check_capture_size(16_385, 1).is_err());
        assert!(check_capture_size(1, 16_385).is_err());
        assert!(check_capture_size(16_384, 4097).is_err());
        assert!(check_capture_size(0, 10).is_err());
    }

    #[test]
    fn downscale_never_upscales() {
        assert_eq!(target_size(1280, 800, Some(640), None), (640, 400));
        assert_eq!(target_size(1280, 800, Some(4000), None), (1280, 800));
        assert_eq!(target_size(1280, 800, None, Some(0.5)), (640, 400));
        assert_eq!(target_size(1280, 800, None, Some(2.0)), (1280, 800));
        assert_eq!(target_size(1280, 800, Some(320), Some(0.5)), (320, 200));
        assert_eq!(target_size(1000, 1, Some(10), None), (10, 1));
    }
}
