//! Where each output sits in the layout, from `wl_output` alone: what a compositor without
//! sway's IPC tells every client.
//!
//! Where the compositor offers `zxdg_output_manager_v1` (every wlroots compositor does), its
//! logical position and size are the output's place in the layout, exact also at a
//! fractional scale. Without it: wlroots sends the output's layout position in `geometry`,
//! its current mode in pixels and its integer `scale`; the layout size is then the mode
//! divided by the scale, turned for a 90 or 270 degree transform (an estimate at a
//! fractional scale, which `wl_output` sends rounded up).

use wayland_client::WEnum;
use wayland_client::protocol::wl_output::{self, Transform};
use wayland_protocols::xdg::xdg_output::zv1::client::zxdg_output_v1;

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
    /// xdg-output's logical position and size, once both are known.
    pub logical_position: Option<(i32, i32)>,
    pub logical_size: Option<(i32, i32)>,
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

    /// Takes in what xdg-output says about the output.
    pub fn note_logical(&mut self, event: &zxdg_output_v1::Event) {
        match event {
            zxdg_output_v1::Event::LogicalPosition { x, y } => self.logical_position = Some((*x, *y)),
            zxdg_output_v1::Event::LogicalSize { width, height } => {
                self.logical_size = Some((*width, *height))
            }
            _ => {}
        }
    }

    /// The output's rectangle in layout coordinates: xdg-output's when known, else from its
    /// mode (once known).
    pub fn rect(&self) -> Option<Rect> {
        let size = |n: i32| u32::try_from(n).ok().filter(|n| *n > 0);
        if let (Some((x, y)), Some((w, h))) = (self.logical_position, self.logical_size) {
            return Some(Rect::new(x, y, size(w)?, size(h)?));
        }
        let (w, h) = self.mode?;
        let (w, h) = if self.turned { (h, w) } else { (w, h) };
        let scale = self.scale.max(1);
        Some(Rect::new(self.x, self.y, size(w / scale)?, size(h / scale)?))
    }

    /// Output pixels per layout pixel: the mode over the logical size where both are known
    /// (a fractional scale), else the integer scale (1 when unknown).
    pub fn scale(&self) -> f64 {
        if let (Some((mw, mh)), Some((lw, _))) = (self.mode, self.logical_size)
            && lw > 0
        {
            let wide = if self.turned { mh } else { mw };
            return f64::from(wide) / f64::from(lw);
        }
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

    #[test]
    fn xdg_outputs_logical_rectangle_wins_and_gives_a_fractional_scale() {
        let mut o = OutputFacts { x: 0, y: 0, mode: Some((1920, 1080)), scale: 2, ..OutputFacts::default() };
        o.note_logical(&zxdg_output_v1::Event::LogicalPosition { x: 1024, y: 0 });
        assert_eq!(o.rect(), Some(Rect::new(0, 0, 960, 540)), "the size alone is not enough");
        o.note_logical(&zxdg_output_v1::Event::LogicalSize { width: 1280, height: 720 });
        assert_eq!(o.rect(), Some(Rect::new(1024, 0, 1280, 720)));
        assert!((o.scale() - 1.5).abs() < 1e-9, "{}", o.scale());
    }
}
