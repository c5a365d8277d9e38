//! Size and encode time of one picture under mcec's PNG encoder and the candidate settings
//! (deflate level, row filter), printed as numbers (never asserted). Not part of mcec.
//!
//! `cargo bench -p mcec-desktop --bench png_bench -- DESK.ppm [rounds] [--only=NAME-PART]...`
//! (DESK.ppm a binary PPM, P6 of depth 8: `import -window root -depth 8 ppm:DESK.ppm`); add
//! `--features zlib-rs` to run the deflate levels on zlib-rs instead of miniz_oxide. `bench/bench_png.py` makes the desks
//! and runs both builds. Rounds are interleaved (every setting once per round) so load from
//! other work spreads over all of them. Every setting's output is decoded once and compared
//! with the input, so each line is the same pixels.

use std::time::{Duration, Instant};

use mcec_desktop::RgbImage;
use mcec_desktop::image::encode_png;
use png::{DeflateCompression as Deflate, Filter};

/// What a line names: mcec's own encoder, or the png crate with a deflate setting and filter.
enum Setting {
    Mcec,
    Png(Deflate, Filter),
}

fn settings() -> Vec<(String, Setting)> {
    let mut all = vec![("mcec encode_png".to_string(), Setting::Mcec)];
    for filter in [Filter::Up, Filter::Sub, Filter::Avg, Filter::Paeth, Filter::Adaptive, Filter::MinEntropy]
    {
        all.push((format!("fdeflate, {filter:?}"), Setting::Png(Deflate::FdeflateUltraFast, filter)));
    }
    for level in [1u8, 2, 3, 4, 5, 6, 9] {
        for filter in [Filter::Up, Filter::Paeth, Filter::Adaptive] {
            all.push((
                format!("{} {level}, {filter:?}", backend()),
                Setting::Png(Deflate::Level(level), filter),
            ));
        }
    }
    all
}

fn backend() -> &'static str {
    if cfg!(feature = "zlib-rs") { "zlib-rs" } else { "miniz_oxide" }
}

fn encode(img: &RgbImage, setting: &Setting) -> Vec<u8> {
    let Setting::Png(deflate, filter) = setting else {
        return encode_png(img).expect("mcec's encoder");
    };
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, img.width, img.height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_deflate_compression(*deflate);
    enc.set_filter(*filter);
    let mut writer = enc.write_header().expect("header");
    writer.write_image_data(&img.pixels).expect("encode");
    writer.finish().expect("finish");
    out
}

fn decode(bytes: &[u8]) -> Vec<u8> {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("decode");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("frame");
    buf.truncate(info.buffer_size());
    buf
}

/// A binary PPM (P6, maxval 255) as RGB.
fn read_ppm(path: &str) -> RgbImage {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let mut fields = Vec::new();
    let mut at = 0;
    while fields.len() < 4 {
        while data[at].is_ascii_whitespace() {
            at += 1;
        }
        if data[at] == b'#' {
            at += data[at..].iter().position(|b| *b == b'\n').expect("comment end");
            continue;
        }
        let end = at + data[at..].iter().position(|b| b.is_ascii_whitespace()).expect("field end");
        fields.push(String::from_utf8_lossy(&data[at..end]).into_owned());
        at = end;
    }
    assert!(fields[0] == "P6" && fields[3] == "255", "{path} is not an 8-bit binary PPM");
    let (width, height): (u32, u32) = (fields[1].parse().expect("width"), fields[2].parse().expect("height"));
    let pixels = data[at + 1..].to_vec();
    assert_eq!(pixels.len(), (width * height * 3) as usize, "{path}: pixel data of the wrong length");
    RgbImage { width, height, pixels }
}

fn ms(samples: &[Duration], p: f64) -> f64 {
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i].as_secs_f64() * 1e3
}

fn main() {
    let all: Vec<String> = std::env::args().skip(1).collect();
    let only: Vec<&str> = all.iter().filter_map(|a| a.strip_prefix("--only=")).collect();
    let args: Vec<&String> = all.iter().filter(|a| !a.starts_with("--")).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: png_bench DESK.ppm [rounds] [--only=NAME-PART]...");
        std::process::exit(2);
    };
    let rounds: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(20);
    let img = read_ppm(path);
    let mut settings = settings();
    settings.retain(|(name, _)| only.is_empty() || only.iter().any(|o| name.contains(o)));
    let mut sizes = vec![0usize; settings.len()];
    for (i, (name, setting)) in settings.iter().enumerate() {
        let bytes = encode(&img, setting);
        assert!(decode(&bytes) == img.pixels, "{name}: the PNG does not decode to the input");
        sizes[i] = bytes.len();
    }
    let mut times = vec![Vec::with_capacity(rounds); settings.len()];
    for round in 0..rounds {
        // Each round starts one setting further on, so none always follows the slowest.
        for k in 0..settings.len() {
            let i = (round + k) % settings.len();
            let t = Instant::now();
            std::hint::black_box(encode(&img, &settings[i].1));
            times[i].push(t.elapsed());
        }
    }
    println!("{path}: {}x{}, {rounds} rounds, deflate levels on {}", img.width, img.height, backend());
    for ((name, _), (size, mut samples)) in settings.iter().zip(sizes.into_iter().zip(times)) {
        samples.sort();
        println!(
            "{name:<28} {:>8} bytes ({:>5} KB)  p50 {:>8.2} ms  p90 {:>8.2} ms  p99 {:>8.2} ms",
            size,
            size / 1024,
            ms(&samples, 0.5),
            ms(&samples, 0.9),
            ms(&samples, 0.99),
        );
    }
}
