//! Paints egui's tessellated meshes into a CPU pixel buffer.
//!
//! The operator windows of `mcec mcp` are a few hundred pixels of flat colour and text, so a
//! plain triangle rasterizer is enough and keeps OpenGL (and Mesa's llvmpipe with it) out of
//! the process. It does what egui's own GPU painters do: per-vertex colour times a bilinear
//! texture sample, both premultiplied sRGB, blended "over" the buffer. egui feathers edges with
//! extra vertices, so the rasterizer needs no anti-aliasing of its own; a top-left fill rule
//! keeps shared edges from being blended twice.

use std::collections::HashMap;

use egui::epaint::textures::TexturesDelta;
use egui::epaint::{ClippedPrimitive, ImageData, ImageDelta, Primitive, TextureId, Vertex};
use egui::{Color32, Rect};

/// A frame buffer: `0x00RRGGBB` per pixel, row by row.
pub(crate) struct Canvas {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<u32>,
}

impl Canvas {
    pub fn new(width: usize, height: usize) -> Self {
        Self { width, height, pixels: vec![0; width * height] }
    }

    pub fn clear(&mut self, color: Color32) {
        let packed = pack(color.r(), color.g(), color.b());
        self.pixels.fill(packed);
    }
}

/// The textures egui asked for (the font atlas, mostly), as premultiplied texels.
#[derive(Default)]
pub(crate) struct Textures {
    map: HashMap<TextureId, Texture>,
}

struct Texture {
    size: [usize; 2],
    texels: Vec<Color32>,
}

impl Textures {
    /// Apply the new and changed textures of a frame (before painting it).
    pub fn set(&mut self, delta: &TexturesDelta) {
        for (id, deltas) in &delta.set {
            for d in deltas {
                self.set_one(*id, d);
            }
        }
    }

    /// Drop the textures egui freed (after painting).
    pub fn free(&mut self, delta: &TexturesDelta) {
        for id in &delta.free {
            self.map.remove(id);
        }
    }

    fn set_one(&mut self, id: TextureId, delta: &ImageDelta) {
        let ImageData::Color(image) = &delta.image;
        match delta.pos {
            None => {
                self.map.insert(id, Texture { size: image.size, texels: image.pixels.clone() });
            }
            Some([x0, y0]) => {
                let Some(tex) = self.map.get_mut(&id) else { return };
                let [w, h] = image.size;
                for y in 0..h.min(tex.size[1].saturating_sub(y0)) {
                    let row = &image.pixels[y * w..y * w + w.min(tex.size[0].saturating_sub(x0))];
                    let start = (y0 + y) * tex.size[0] + x0;
                    tex.texels[start..start + row.len()].copy_from_slice(row);
                }
            }
        }
    }
}

/// Paint every mesh of `primitives` (positions in pixels) into `canvas`.
pub(crate) fn paint(canvas: &mut Canvas, primitives: &[ClippedPrimitive], textures: &Textures) {
    for prim in primitives {
        let Primitive::Mesh(mesh) = &prim.primitive else { continue };
        let Some(tex) = textures.map.get(&mesh.texture_id) else { continue };
        let clip = clip_box(canvas, prim.clip_rect);
        for tri in mesh.indices.chunks_exact(3) {
            let [a, b, c] = [tri[0], tri[1], tri[2]].map(|i| mesh.vertices.get(i as usize));
            if let (Some(a), Some(b), Some(c)) = (a, b, c) {
                triangle(canvas, clip, tex, [a, b, c]);
            }
        }
    }
}

/// The pixel box `[x0, x1) × [y0, y1)` of `rect` inside the canvas.
fn clip_box(canvas: &Canvas, rect: Rect) -> [usize; 4] {
    let x0 = rect.min.x.max(0.0).floor() as usize;
    let y0 = rect.min.y.max(0.0).floor() as usize;
    let x1 = (rect.max.x.ceil().max(0.0) as usize).min(canvas.width);
    let y1 = (rect.max.y.ceil().max(0.0) as usize).min(canvas.height);
    [x0, x1, y0, y1]
}

fn edge(a: [f32; 2], b: [f32; 2], p: [f32; 2]) -> f32 {
    (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
}

/// Whether the edge a→b is a top or left edge of a triangle with positive area.
fn top_left(a: [f32; 2], b: [f32; 2]) -> bool {
    (a[1] == b[1] && b[0] < a[0]) || b[1] > a[1]
}

fn triangle(canvas: &mut Canvas, clip: [usize; 4], tex: &Texture, v: [&Vertex; 3]) {
    let mut p = v.map(|v| [v.pos.x, v.pos.y]);
    let mut v = v;
    let mut area = edge(p[0], p[1], p[2]);
    if area == 0.0 || !area.is_finite() {
        return;
    }
    if area < 0.0 {
        p.swap(1, 2);
        v.swap(1, 2);
        area = -area;
    }
    let min_x = p.iter().map(|q| q[0]).fold(f32::INFINITY, f32::min).floor().max(clip[0] as f32) as usize;
    let max_x = (p.iter().map(|q| q[0]).fold(f32::NEG_INFINITY, f32::max).ceil() as usize).min(clip[1]);
    let min_y = p.iter().map(|q| q[1]).fold(f32::INFINITY, f32::min).floor().max(clip[2] as f32) as usize;
    let max_y = (p.iter().map(|q| q[1]).fold(f32::NEG_INFINITY, f32::max).ceil() as usize).min(clip[3]);
    let edges = [(1, 2), (2, 0), (0, 1)].map(|(i, j)| top_left(p[i], p[j]));
    let cols = v.map(|v| v.color.to_array().map(f32::from));
    let uvs = v.map(|v| [v.uv.x * tex.size[0] as f32 - 0.5, v.uv.y * tex.size[1] as f32 - 0.5]);
    let flat = cols[0] == cols[1] && cols[1] == cols[2];
    // A solid fill (one colour, one texel: every panel, frame and rule egui draws) has the same
    // source at every pixel: sample it once, and write opaque ones without blending.
    let solid = (flat && uvs[0] == uvs[1] && uvs[1] == uvs[2]).then(|| {
        let texel = sample(tex, uvs[0][0], uvs[0][1]);
        let src: [f32; 4] = std::array::from_fn(|k| cols[0][k] * texel[k] / 255.0);
        (src, (src[3] >= 255.0).then(|| over(src, 0)))
    });
    for y in min_y..max_y {
        let row = y * canvas.width;
        for x in min_x..max_x {
            let q = [x as f32 + 0.5, y as f32 + 0.5];
            let w = [edge(p[1], p[2], q), edge(p[2], p[0], q), edge(p[0], p[1], q)];
            if (0..3).any(|i| w[i] < 0.0 || (w[i] == 0.0 && !edges[i])) {
                continue;
            }
            let dst = &mut canvas.pixels[row + x];
            if let Some((src, opaque)) = solid {
                *dst = opaque.unwrap_or_else(|| over(src, *dst));
                continue;
            }
            let w = w.map(|w| w / area);
            let color = if flat {
                cols[0]
            } else {
                std::array::from_fn(|k| w[0] * cols[0][k] + w[1] * cols[1][k] + w[2] * cols[2][k])
            };
            let u = w[0] * uvs[0][0] + w[1] * uvs[1][0] + w[2] * uvs[2][0];
            let t = w[0] * uvs[0][1] + w[1] * uvs[1][1] + w[2] * uvs[2][1];
            let texel = sample(tex, u, t);
            let src: [f32; 4] = std::array::from_fn(|k| color[k] * texel[k] / 255.0);
            *dst = over(src, *dst);
        }
    }
}

/// Bilinear sample at texel coordinates (`u`, `v`), clamped to the edge.
fn sample(tex: &Texture, u: f32, v: f32) -> [f32; 4] {
    let [w, h] = tex.size;
    if w == 0 || h == 0 {
        return [0.0; 4];
    }
    let x0 = u.floor();
    let y0 = v.floor();
    let (fx, fy) = (u - x0, v - y0);
    let at = |x: f32, y: f32| {
        let xi = (x.max(0.0) as usize).min(w - 1);
        let yi = (y.max(0.0) as usize).min(h - 1);
        tex.texels[yi * w + xi].to_array().map(f32::from)
    };
    let (a, b, c, d) = (at(x0, y0), at(x0 + 1.0, y0), at(x0, y0 + 1.0), at(x0 + 1.0, y0 + 1.0));
    std::array::from_fn(|k| {
        let top = a[k] + (b[k] - a[k]) * fx;
        let bottom = c[k] + (d[k] - c[k]) * fx;
        top + (bottom - top) * fy
    })
}

/// Premultiplied `src` over the opaque pixel `dst`.
fn over(src: [f32; 4], dst: u32) -> u32 {
    let keep = 1.0 - src[3] / 255.0;
    let d = [(dst >> 16) & 0xff, (dst >> 8) & 0xff, dst & 0xff].map(|c| c as f32);
    let mix = |k: usize| (src[k] + d[k] * keep).round().clamp(0.0, 255.0) as u8;
    pack(mix(0), mix(1), mix(2))
}

fn pack(r: u8, g: u8, b: u8) -> u32 {
    (u32::from(r) << 16) | (u32::from(g) << 8) | u32::from(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::TextureOptions;
    use egui::epaint::{ColorImage, Mesh};
    use egui::{Pos2, pos2};

    fn white_texture() -> Textures {
        let mut textures = Textures::default();
        let image = ColorImage::new([1, 1], vec![Color32::WHITE]);
        let delta = ImageDelta::full(ImageData::Color(image.into()), TextureOptions::LINEAR);
        textures.set_one(TextureId::default(), &delta);
        textures
    }

    fn rect_mesh(min: Pos2, max: Pos2, color: Color32) -> ClippedPrimitive {
        let mut mesh = Mesh::default();
        mesh.add_colored_rect(Rect::from_min_max(min, max), color);
        ClippedPrimitive { clip_rect: Rect::EVERYTHING, primitive: Primitive::Mesh(mesh) }
    }

    #[test]
    fn a_rect_fills_exactly_its_pixels() {
        let mut canvas = Canvas::new(8, 8);
        canvas.clear(Color32::BLACK);
        let red = Color32::from_rgb(200, 10, 20);
        paint(&mut canvas, &[rect_mesh(pos2(2.0, 3.0), pos2(6.0, 5.0), red)], &white_texture());
        for y in 0..8 {
            for x in 0..8 {
                let inside = (2..6).contains(&x) && (3..5).contains(&y);
                let want = if inside { pack(200, 10, 20) } else { 0 };
                assert_eq!(canvas.pixels[y * 8 + x], want, "pixel {x},{y}");
            }
        }
    }

    #[test]
    fn half_transparent_blends_once_across_the_shared_diagonal() {
        let mut canvas = Canvas::new(4, 4);
        canvas.clear(Color32::BLACK);
        let half = Color32::from_white_alpha(128);
        paint(&mut canvas, &[rect_mesh(pos2(0.0, 0.0), pos2(4.0, 4.0), half)], &white_texture());
        assert!(canvas.pixels.iter().all(|&p| p == pack(128, 128, 128)), "{:x?}", canvas.pixels);
    }

    #[test]
    fn the_clip_rect_is_honoured() {
        let mut canvas = Canvas::new(4, 4);
        canvas.clear(Color32::BLACK);
        let mut prim = rect_mesh(pos2(0.0, 0.0), pos2(4.0, 4.0), Color32::WHITE);
        prim.clip_rect = Rect::from_min_max(pos2(0.0, 0.0), pos2(2.0, 4.0));
        paint(&mut canvas, &[prim], &white_texture());
        assert_eq!(canvas.pixels[0], pack(255, 255, 255));
        assert_eq!(canvas.pixels[3], 0);
    }
}
