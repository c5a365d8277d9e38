//! Where each output sits in the layout, from `wl_output` alone: what a compositor without
//! sway's IPC tells every client.
//!
//! wlroots sends the output's layout position in `geometry`, its current mode in pixels and
//! its integer `scale`; the layout size is the mode divided by the scale, turned for a 90 or
//! 270 degree transform. A fractional scale is sent rounded up, so there the size is an
//! estimate (xdg-output's logical size, which would be exact, is not read yet).

use wayland_client::WEnum;
use wayland_client::protocol::wl_output::{self, Transform};

use mcec_desktop::types::Rect;

/// What an output has announced so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputFacts {
    pub x: i32,
    pub y: i32,
    /// The current mode in output pixels.
    pub mode: Option<(i32, i32)>,
    /// `wl_output.scale` (1 before the compositor says otherwise).
    pub scale: i32,
    /// A 90 or 270 degree transform: the layout's width is the mode's height.
    pub turned: bool,
    /// `make model` from `geometry`: a name where the output gives none (before `wl_output` 4).
    pub model: String,
}

impl OutputFacts {
    /// Takes in what `event` says about the output.
    pub fn note(&mut self, event: &wl_output::Event) {
        match event {
            wl_output::Event::Geometry { x, y, make, model, transform, .. } => {
                self.x = *x;
                self.y = *y;
                self.model = format!("{make} {model}").trim().to_string();
                self.turned = matches!(
                    transform,
                    WEnum::Value(
                        Transform::_90 | Transform::_270 | Transform::Flipped90 | Transform::Flipped270
                    )
                );
            }
            wl_output::Event::Mode { flags, width, height, .. } => {
                if matches!(flags, WEnum::Value(f) if f.contains(wl_output::Mode::Current)) {
                    self.mode = Some((*width, *height));
                }
            }
            wl_output::Event::Scale { factor } => self.scale = *factor,
            _ => {}
        }
    }

    /// The output's rectangle in layout coordinates, once its mode is known.
    pub fn rect(&self) -> Option<Rect> {
        let (w, h) = self.mode?;
        let (w, h) = if self.turned { (h, w) } else { (w, h) };
        let scale = self.scale.max(1);
        let size = |n: i32| u32::try_from(n / scale).ok().filter(|n| *n > 0);
        Some(Rect::new(self.x, self.y, size(w)?, size(h)?))
    }

    /// The scale clients are told (1 when unknown).
    pub fn scale(&self) -> f64 {
        f64::from(self.scale.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_size_is_the_mode_over_the_scale_turned_with_the_output() {
        let mut o =
            OutputFacts { x: 1024, y: 0, mode: Some((1920, 1080)), scale: 2, ..OutputFacts::default() };
        assert_eq!(o.rect(), Some(Rect::new(1024, 0, 960, 540)));
        o.turned = true;
        assert_eq!(o.rect(), Some(Rect::new(1024, 0, 540, 960)));
        assert_eq!(OutputFacts::default().rect(), None);
    }
}
