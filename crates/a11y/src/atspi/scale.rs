//! A toolkit's scale factor. GTK 3 under `GDK_SCALE=2` (and Qt under `QT_SCALE_FACTOR`)
//! report AT-SPI extents, even "screen" ones, in their own logical pixels: half the desktop's
//! at scale 2. The X11 window's size is in desktop pixels, so the ratio of the two, taken
//! when a window's frame is found, is the factor every extent of that application is
//! multiplied by to answer desktop pixels.

use mcec_desktop::types::Rect;

/// Below this ratio the frame and the window differ by decorations or rounding, not scale.
const MIN_SCALE: f64 = 1.2;
/// Above this, the pairing is wrong rather than scaled.
const MAX_SCALE: f64 = 4.0;

/// The factor from `frame` (as the application reports it) to `window` (desktop pixels):
/// 1 unless both axes agree on a ratio of at least 1.2, then that ratio to a quarter.
pub fn factor(window: Rect, frame: Rect) -> f64 {
    if frame.width == 0 || frame.height == 0 {
        return 1.0;
    }
    let sx = f64::from(window.width) / f64::from(frame.width);
    let sy = f64::from(window.height) / f64::from(frame.height);
    if (sx - sy).abs() > 0.1 * sx.max(sy) || !(MIN_SCALE..=MAX_SCALE).contains(&sx) {
        return 1.0;
    }
    ((sx + sy) / 2.0 * 4.0).round() / 4.0
}

/// `r` (application pixels) in desktop pixels.
pub fn to_desktop(r: Rect, factor: f64) -> Rect {
    if factor == 1.0 {
        return r;
    }
    let scale = |v: f64| v * factor;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Rect::new(
        scale(f64::from(r.x)).round() as i32,
        scale(f64::from(r.y)).round() as i32,
        scale(f64::from(r.width)).round() as u32,
        scale(f64::from(r.height)).round() as u32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_doubled_window_is_scale_two_and_decorations_are_not_a_scale() {
        let window = Rect::new(200, 500, 246, 68);
        assert_eq!(factor(window, Rect::new(100, 250, 123, 34)), 2.0);
        assert_eq!(to_desktop(Rect::new(101, 251, 10, 5), 2.0), Rect::new(202, 502, 20, 10));
        assert_eq!(factor(window, Rect::new(200, 480, 246, 90)), 1.0);
        assert_eq!(factor(window, Rect::new(200, 500, 240, 66)), 1.0);
        assert_eq!(factor(window, Rect::new(0, 0, 0, 0)), 1.0);
        assert_eq!(factor(window, Rect::new(100, 250, 123, 68)), 1.0);
    }
}
