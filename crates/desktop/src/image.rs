//! Turning captured pixels into what an agent receives: downscaled (never upscaled) by mcec's
//! own scaler (`scale.rs`: bilinear, widened to average what each output pixel covers),
//! encoded as PNG (fdeflate, `Paeth` rows), or as JPEG.

use mcec_rules::{ErrorCode, ToolError};

use crate::scale;
use crate::types::{CursorImage, RgbImage};

fn internal(what: &str, e: impl std::fmt::Display) -> ToolError {
    tracing::error!("{what}: {e}");
    ToolError::new(ErrorCode::Internal, format!("Could not {what}."))
}

/// Scale `img` to `width`x`height`; returns it unchanged when that is not smaller.
pub fn downscale(img: RgbImage, width: u32, height: u32) -> Result<RgbImage, ToolError> {
    if width >= img.width && height >= img.height {
        return Ok(img);
    }
    let (width, height) = (width.clamp(1, img.width), height.clamp(1, img.height));
    let mut pixels = vec![0; width as usize * height as usize * 3];
    scale::resize::<3, 24>(
        &img.pixels,
        (img.width as usize, img.height as usize),
        &mut pixels,
        (width as usize, height as usize),
        &mut Vec::new(),
    )
    .map_err(|e| internal("scale the image", e))?;
    Ok(RgbImage { width, height, pixels })
}

/// Scales frames of 4-byte pixels, keeping its work buffer (every source column of eight rows:
/// 120 KB at 4K) from one capture to the next.
#[derive(Default)]
pub struct Scaler {
    row: Vec<u8>,
}

impl Scaler {
    /// Scale `src` (`src_w`x`src_h` pixels of 4 bytes, rows unpadded: the X server's BGRX as it
    /// lies in shared memory) to `width`x`height`, as 4-byte pixels in the same order. The
    /// fourth byte is not alpha (X leaves it 0): it is scaled like a colour.
    pub fn downscale_x4(
        &mut self,
        src: &[u8],
        src_w: u32,
        src_h: u32,
        width: u32,
        height: u32,
    ) -> Result<Vec<u8>, ToolError> {
        let mut out = vec![0; width as usize * height as usize * 4];
        scale::resize::<4, 32>(
            src,
            (src_w as usize, src_h as usize),
            &mut out,
            (width as usize, height as usize),
            &mut self.row,
        )
        .map_err(|e| internal("scale the image", e))?;
        Ok(out)
    }

    /// Let go of work buffers larger than `max` bytes (those of a very large frame).
    pub fn trim(&mut self, max: usize) {
        if self.row.capacity() > max {
            self.row = Vec::new();
        }
    }
}

/// Draw `cursor` over `img`, which shows the desktop from `origin` on (alpha-blended, clipped).
pub fn draw_cursor(img: &mut RgbImage, origin: (i32, i32), cursor: &CursorImage) {
    for cy in 0..cursor.height {
        for cx in 0..cursor.width {
            let (x, y) = (cursor.x - origin.0 + cx as i32, cursor.y - origin.1 + cy as i32);
            if x < 0 || y < 0 || x as u32 >= img.width || y as u32 >= img.height {
                continue;
            }
            let Some(&argb) = cursor.argb.get((cy * cursor.width + cx) as usize) else {
                continue;
            };
            let alpha = argb >> 24;
            if alpha == 0 {
                continue;
            }
            let at = (y as usize * img.width as usize + x as usize) * 3;
            for (i, shift) in [16, 8, 0].into_iter().enumerate() {
                // Premultiplied: out = src + dst * (1 - alpha).
                let src = (argb >> shift) & 0xFF;
                let dst = u32::from(img.pixels[at + i]);
                img.pixels[at + i] = (src + dst * (255 - alpha) / 255).min(255) as u8;
            }
        }
    }
}

/// Whether `img` looks photographic: fewer than [`PHOTO_FLAT_SHARE`] of its pixels (in every
/// fourth row) equal their left neighbour. Screens of windows, text and flat colours stay far
/// above it even scaled down (a 4K desk of terminals: 91 %); a photo or a textured
/// wallpaper falls far below (a fractal plasma: 0 %), and its PNG runs to megabytes.
pub fn looks_photographic(img: &RgbImage) -> bool {
    let row_bytes = img.width as usize * 3;
    let (mut same, mut all) = (0usize, 0usize);
    for row in img.pixels.chunks_exact(row_bytes.max(3)).step_by(4) {
        for (left, right) in row.chunks_exact(3).zip(row.chunks_exact(3).skip(1)) {
            all += 1;
            same += usize::from(left == right);
        }
    }
    all > 0 && (same as f64) < PHOTO_FLAT_SHARE * all as f64
}

/// See [`looks_photographic`].
pub const PHOTO_FLAT_SHARE: f64 = 0.4;

/// Encode as an 8-bit RGB PNG.
pub fn encode_png(img: &RgbImage) -> Result<Vec<u8>, ToolError> {
    let mut out = Vec::with_capacity(img.pixels.len() / 4);
    {
        let mut enc = png::Encoder::new(&mut out, img.width, img.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        // fdeflate's fast deflate with every row `Paeth`-filtered: on a desk of windows 20 to 30%
        // smaller than with `Up` (the `Fastest` preset) at about the same encode time; a real
        // LZ77 level is smaller still but several times slower (`benches/png_bench.rs`,
        // docs/decisions.md).
        enc.set_deflate_compression(png::DeflateCompression::FdeflateUltraFast);
        enc.set_filter(png::Filter::Paeth);
        let mut writer = enc.write_header().map_err(|e| internal("encode the PNG", e))?;
        writer.write_image_data(&img.pixels).map_err(|e| internal("encode the PNG", e))?;
        writer.finish().map_err(|e| internal("encode the PNG", e))?;
    }
    Ok(out)
}

/// Encode as a baseline JPEG of `quality` (1 to 100).
pub fn encode_jpeg(img: &RgbImage, quality: u8) -> Result<Vec<u8>, ToolError> {
    let (Ok(w), Ok(h)) = (u16::try_from(img.width), u16::try_from(img.height)) else {
        return Err(ToolError::bad_argument("format", "JPEG images are at most 65535 px a side; use png"));
    };
    let mut out = Vec::with_capacity(img.pixels.len() / 8);
    jpeg_encoder::Encoder::new(&mut out, quality.clamp(1, 100))
        .encode(&img.pixels, w, h, jpeg_encoder::ColorType::Rgb)
        .map_err(|e| internal("encode the JPEG", e))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checker(w: u32, h: u32) -> RgbImage {
        let mut pixels = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let v = if (x / 4 + y / 4) % 2 == 0 { 255 } else { 0 };
                pixels.extend_from_slice(&[v, 0, 255 - v]);
            }
        }
        RgbImage { width: w, height: h, pixels }
    }

    #[test]
    fn png_round_trip() {
        let img = checker(16, 8);
        let bytes = encode_png(&img).unwrap();
        let dec = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (16, 8));
        assert_eq!(&buf[..info.buffer_size()], &img.pixels[..]);
    }

    #[test]
    fn the_cursor_is_blended_and_clipped() {
        let mut img = RgbImage { width: 4, height: 4, pixels: vec![100; 48] };
        // 2x2: opaque red, transparent, half-alpha white (premultiplied), opaque black.
        let cursor = CursorImage {
            x: 3,
            y: 3,
            width: 2,
            height: 2,
            argb: vec![0xFFFF0000, 0, 0x80808080, 0xFF000000],
        };
        draw_cursor(&mut img, (0, 0), &cursor);
        assert_eq!(img.pixel(3, 3), Some([255, 0, 0]));
        draw_cursor(&mut img, (1, 1), &CursorImage { x: 1, y: 1, ..cursor.clone() });
        assert_eq!(img.pixel(0, 0), Some([255, 0, 0]), "origin shifts where it lands");
        assert_eq!(img.pixel(0, 1), Some([177; 3]));
        assert_eq!(img.pixel(1, 1), Some([0, 0, 0]));
    }

    #[test]
    fn jpeg_is_a_jpeg_of_the_size() {
        let bytes = encode_jpeg(&checker(40, 24), 80).unwrap();
        assert_eq!(&bytes[..3], &[0xFF, 0xD8, 0xFF], "SOI marker");
        let sof = bytes.windows(2).position(|w| w == [0xFF, 0xC0]).expect("baseline SOF0");
        let h = u16::from_be_bytes([bytes[sof + 5], bytes[sof + 6]]);
        let w = u16::from_be_bytes([bytes[sof + 7], bytes[sof + 8]]);
        assert_eq!((w, h), (40, 24));
    }

    #[test]
    fn scaling_four_byte_pixels_matches_scaling_rgb() {
        let rgb = checker(64, 32);
        let x4: Vec<u8> = rgb.pixels.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 0]).collect();
        let small = Scaler::default().downscale_x4(&x4, 64, 32, 24, 12).unwrap();
        let want = downscale(rgb, 24, 12).unwrap();
        let got: Vec<u8> = small.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
        assert_eq!(small.len(), 24 * 12 * 4);
        assert_eq!(got, want.pixels, "the fourth byte stays out of the colours");
    }

    #[test]
    fn flat_pictures_are_not_photographic_and_noise_is() {
        assert!(!looks_photographic(&checker(64, 32)), "blocks of 4 equal pixels");
        let mut seed = 7u32;
        let noise: Vec<u8> = (0..64 * 32 * 3)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (seed >> 16) as u8
            })
            .collect();
        assert!(looks_photographic(&RgbImage { width: 64, height: 32, pixels: noise }));
        assert!(!looks_photographic(&RgbImage { width: 1, height: 1, pixels: vec![1, 2, 3] }));
    }

    #[test]
    fn downscale_halves_and_never_grows() {
        let small = downscale(checker(64, 32), 32, 16).unwrap();
        assert_eq!((small.width, small.height, small.pixels.len()), (32, 16, 32 * 16 * 3));
        let same = downscale(checker(8, 8), 16, 16).unwrap();
        assert_eq!((same.width, same.height), (8, 8));
    }
}
