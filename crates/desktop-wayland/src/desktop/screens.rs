//! Outputs from sway's `GET_OUTPUTS` (layout position, logical size, scale), or without
//! sway's IPC from `wl_output` and xdg-output (`wl/outputs.rs`), and their pixels through
//! `wlr-screencopy`, cut to the asked area in layout coordinates.

use mcec_desktop::seams::Screens;
use mcec_desktop::types::{
    CaptureVia, Captured, DisplayInfo, Dpi, DpiSource, LeftOut, LeftOutHow, Rect, RgbImage,
};
use mcec_rules::{ErrorCode, ToolError};
use serde_json::Value;

use super::{Source, WlrDesktop, wl_err};
use crate::ipc::Message;

/// One active output as sway reports it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Output {
    pub name: String,
    pub rect: Rect,
    pub scale: f64,
    pub focused: bool,
    /// The output's `wl_output` on mcec's Wayland connection, when the output came from it
    /// (sway's outputs are matched by name at capture).
    pub handle: Option<wayland_client::protocol::wl_output::WlOutput>,
}

/// The active outputs of a `GET_OUTPUTS` reply, in sway's order.
pub(crate) fn outputs(reply: &Value) -> Vec<Output> {
    reply
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| o.get("active").and_then(Value::as_bool) == Some(true))
        .filter_map(|o| {
            Some(Output {
                name: o.get("name")?.as_str()?.to_string(),
                rect: rect_of(o.get("rect")?)?,
                scale: o.get("scale").and_then(Value::as_f64).filter(|s| *s > 0.0).unwrap_or(1.0),
                focused: o.get("focused").and_then(Value::as_bool).unwrap_or(false),
                handle: None,
            })
        })
        .collect()
}

/// A sway `rect` object.
pub(crate) fn rect_of(v: &Value) -> Option<Rect> {
    let int = |k: &str| v.get(k).and_then(Value::as_i64).and_then(|n| i32::try_from(n).ok());
    let size = |k: &str| v.get(k).and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
    Some(Rect::new(int("x")?, int("y")?, size("width")?, size("height")?))
}

/// The bounding box of every output.
pub(crate) fn bounding(outputs: &[Output]) -> Option<Rect> {
    let x0 = outputs.iter().map(|o| o.rect.x).min()?;
    let y0 = outputs.iter().map(|o| o.rect.y).min()?;
    let x1 = outputs.iter().map(|o| i64::from(o.rect.x) + i64::from(o.rect.width)).max()?;
    let y1 = outputs.iter().map(|o| i64::from(o.rect.y) + i64::from(o.rect.height)).max()?;
    Some(Rect::new(x0, y0, u32::try_from(x1 - i64::from(x0)).ok()?, u32::try_from(y1 - i64::from(y0)).ok()?))
}

impl WlrDesktop {
    pub(crate) fn outputs(&self) -> Result<Vec<Output>, ToolError> {
        if let Source::Protocols { .. } = &self.source {
            return self.wl_outputs();
        }
        Ok(outputs(&self.request(Message::GetOutputs, "")?))
    }

    /// The outputs as `wl_output` describes them, in the compositor's order; each named as it
    /// names itself (`wl_output` 4), else by its make and model, else by its place.
    fn wl_outputs(&self) -> Result<Vec<Output>, ToolError> {
        let mut wl = self.wl();
        let facts = wl.output_facts().map_err(wl_err)?;
        Ok(facts
            .into_iter()
            .enumerate()
            .filter_map(|(i, (handle, f))| {
                let named = wl.state.outputs.iter().find(|(o, _)| o == &handle).and_then(|(_, n)| n.clone());
                let name = named
                    .or_else(|| (!f.model.is_empty()).then(|| f.model.clone()))
                    .unwrap_or_else(|| format!("output {i}"));
                Some(Output { name, rect: f.rect()?, scale: f.scale(), focused: false, handle: Some(handle) })
            })
            .collect())
    }

    /// The output layout's bounding box: where absolute pointer motion maps to.
    pub(crate) fn layout(&self) -> Result<Rect, ToolError> {
        bounding(&self.outputs()?)
            .ok_or_else(|| ToolError::new(ErrorCode::NoDesktop, "sway has no active output"))
    }
}

impl Screens for WlrDesktop {
    fn displays(&self) -> Result<Vec<DisplayInfo>, ToolError> {
        let outs = self.outputs()?;
        let primary = outs.iter().position(|o| o.focused).unwrap_or(0);
        Ok(outs
            .into_iter()
            .enumerate()
            .map(|(i, o)| DisplayInfo {
                index: u32::try_from(i).unwrap_or(u32::MAX),
                name: o.name,
                primary: i == primary,
                bounds: o.rect,
                dpi: Dpi {
                    dpi: (96.0 * o.scale).round() as u32,
                    scale: o.scale,
                    dpi_source: DpiSource::Monitor,
                    physical_dpi: None,
                },
            })
            .collect())
    }

    fn capture(&self, area: Rect) -> Result<Captured, ToolError> {
        let outs = self.outputs()?;
        let mut image = RgbImage {
            width: area.width,
            height: area.height,
            pixels: vec![0; area.width as usize * area.height as usize * 3],
        };
        let mut wl = self.wl();
        for out in outs.iter().filter(|o| overlaps(o.rect, area)) {
            let by_name = || {
                wl.state
                    .outputs
                    .iter()
                    .find(|(_, name)| name.as_deref() == Some(out.name.as_str()))
                    .or_else(|| (wl.state.outputs.len() == 1).then(|| &wl.state.outputs[0]))
                    .map(|(o, _)| o.clone())
            };
            let handle = out
                .handle
                .clone()
                .or_else(by_name)
                .ok_or_else(|| wl_err(format!("no Wayland output named {}", out.name)))?;
            let frame = wl.capture_output(&handle).map_err(wl_err)?;
            paste(&mut image, area, &frame, out);
        }
        drop(wl);
        let areas: Vec<Rect> = self.own_window_areas()?.iter().filter_map(|r| r.intersect(&area)).collect();
        for r in &areas {
            blank(&mut image, area, *r);
        }
        let left_out = (!areas.is_empty()).then_some(LeftOut { areas, how: LeftOutHow::Blanked });
        Ok(Captured { image, left_out, via: CaptureVia::Screencopy })
    }
}

/// Paints `r` (inside `area`, both in layout coordinates) black: sway lets no client read
/// what lies beneath another client's window.
fn blank(image: &mut RgbImage, area: Rect, r: Rect) {
    let width = area.width as usize;
    for row in (r.y - area.y) as usize..(r.y - area.y) as usize + r.height as usize {
        let start = (row * width + (r.x - area.x) as usize) * 3;
        if let Some(px) = image.pixels.get_mut(start..start + r.width as usize * 3) {
            px.fill(0);
        }
    }
}

fn overlaps(a: Rect, b: Rect) -> bool {
    let (ax1, ay1) = (i64::from(a.x) + i64::from(a.width), i64::from(a.y) + i64::from(a.height));
    let (bx1, by1) = (i64::from(b.x) + i64::from(b.width), i64::from(b.y) + i64::from(b.height));
    i64::from(a.x) < bx1 && i64::from(b.x) < ax1 && i64::from(a.y) < by1 && i64::from(b.y) < ay1
}

/// Copies the part of `frame` (output `out`'s pixels, at its scale) inside `area` into
/// `image`, one layout pixel from the nearest output pixel.
fn paste(image: &mut RgbImage, area: Rect, frame: &RgbImage, out: &Output) {
    let sx = f64::from(frame.width) / f64::from(out.rect.width.max(1));
    let sy = f64::from(frame.height) / f64::from(out.rect.height.max(1));
    for row in 0..area.height {
        let ly = area.y + row as i32;
        if ly < out.rect.y || ly >= out.rect.y + out.rect.height as i32 {
            continue;
        }
        let fy = ((f64::from(ly - out.rect.y) * sy) as u32).min(frame.height.saturating_sub(1));
        for col in 0..area.width {
            let lx = area.x + col as i32;
            if lx < out.rect.x || lx >= out.rect.x + out.rect.width as i32 {
                continue;
            }
            let fx = ((f64::from(lx - out.rect.x) * sx) as u32).min(frame.width.saturating_sub(1));
            let src = (fy as usize * frame.width as usize + fx as usize) * 3;
            let dst = (row as usize * area.width as usize + col as usize) * 3;
            if let (Some(s), Some(d)) = (frame.pixels.get(src..src + 3), image.pixels.get_mut(dst..dst + 3)) {
                d.copy_from_slice(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn active_outputs_with_scale_and_their_bounding_box() {
        let reply = json!([
            {"name": "X11-1", "active": true, "focused": true, "scale": 1.0, "rect": {"x": 0, "y": 0, "width": 1024, "height": 768}},
            {"name": "HDMI-A-1", "active": true, "scale": 2.0, "rect": {"x": 1024, "y": 0, "width": 960, "height": 540}},
            {"name": "off", "active": false, "rect": {"x": 0, "y": 0, "width": 1, "height": 1}},
        ]);
        let outs = outputs(&reply);
        assert_eq!(outs.len(), 2);
        assert!((outs[1].scale - 2.0).abs() < f64::EPSILON);
        assert_eq!(bounding(&outs), Some(Rect::new(0, 0, 1984, 768)));
    }

    #[test]
    fn a_scaled_output_is_sampled_at_its_own_pixels() {
        let out = Output {
            name: "o".into(),
            rect: Rect::new(10, 0, 2, 1),
            scale: 2.0,
            focused: false,
            handle: None,
        };
        // 4x2 output pixels: red red green green / ...
        let frame = RgbImage {
            width: 4,
            height: 2,
            pixels: [[255, 0, 0], [255, 0, 0], [0, 255, 0], [0, 255, 0]].concat().repeat(2),
        };
        let mut image = RgbImage { width: 3, height: 1, pixels: vec![0; 9] };
        paste(&mut image, Rect::new(9, 0, 3, 1), &frame, &out);
        assert_eq!(image.pixels, [0, 0, 0, 255, 0, 0, 0, 255, 0]);
    }
}
