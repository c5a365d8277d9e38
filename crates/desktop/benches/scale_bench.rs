//! Time of mcec's downscaler on the frame sizes captures meet, printed as p50/p90/p99 (never
//! asserted). Not part of mcec.
//!
//! `cargo bench -p mcec-desktop --bench scale_bench [-- rounds]`. The picture is a made-up desk
//! (a gradient, flat windows with title bars, text-like speckle); the scaler's time does not
//! depend on the pixels. The numbers of the change that brought the scaler in are in
//! docs/decisions.md ("Binary size and memory").

use std::time::{Duration, Instant};

use mcec_desktop::RgbImage;
use mcec_desktop::image::{Scaler, downscale};

/// A desk of `c`-byte pixels (a fourth byte is 0, as X leaves it).
fn desk(w: usize, h: usize, c: usize) -> Vec<u8> {
    let mut seed = 7u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize
    };
    let mut px = vec![0u8; w * h * c];
    for (i, p) in px.chunks_exact_mut(c).enumerate() {
        let (x, y) = (i % w, i / w);
        p[..3].copy_from_slice(&[(x * 255 / w) as u8, (y * 255 / h) as u8, ((x + y) % 256) as u8]);
    }
    for _ in 0..12 {
        let (x0, y0, ww, hh) = (next() % w, next() % h, next() % (w / 2) + 20, next() % (h / 2) + 20);
        let colour = [next() as u8, next() as u8, next() as u8];
        for y in y0..(y0 + hh).min(h) {
            for x in x0..(x0 + ww).min(w) {
                let text = y > y0 + 24 && (y - y0) % 14 < 9 && next() % 3 == 0;
                let v = if y < y0 + 22 {
                    [40, 40, 60]
                } else if text {
                    [0; 3]
                } else {
                    colour
                };
                px[(y * w + x) * c..][..3].copy_from_slice(&v);
            }
        }
    }
    px
}

fn percentiles(times: &mut [Duration]) -> String {
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
    format!("p50 {:6.2}  p90 {:6.2}  p99 {:6.2} ms", at(0.5), at(0.9), at(0.99))
}

fn main() {
    let rounds: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(60).max(1);
    let mut scaler = Scaler::default();
    for ((sw, sh), (w, h), x4) in [
        ((3840, 2160), (1280, 720), true),
        ((3840, 2160), (1429, 804), true),
        ((2560, 1440), (1280, 720), true),
        ((1280, 800), (640, 400), true),
        ((1280, 800), (800, 500), false),
    ] {
        let src = desk(sw as usize, sh as usize, if x4 { 4 } else { 3 });
        let mut times = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let start = Instant::now();
            let out = if x4 {
                scaler.downscale_x4(&src, sw, sh, w, h)
            } else {
                downscale(RgbImage { width: sw, height: sh, pixels: src.clone() }, w, h).map(|img| img.pixels)
            };
            times.push(start.elapsed());
            std::hint::black_box(out.expect("scaling a well-formed frame"));
        }
        let kind = if x4 { "BGRX" } else { "RGB " };
        println!("{kind} {sw}x{sh} -> {w}x{h}: {}", percentiles(&mut times));
    }
}
