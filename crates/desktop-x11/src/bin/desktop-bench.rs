//! Latency of the desktop tools against `$DISPLAY`, as percentiles. Not part of mcec.
//!
//! Run against a scratch server, since it clicks and types:
//! `Xvfb :45 -screen 0 1280x800x24 & DISPLAY=:45 cargo run -p mcec-desktop-x11 --release --bin desktop-bench [iterations] [--busy] [--png-settings]`
//!
//! `--busy` first covers the screen with a window full of small coloured blocks, gradients
//! and noise, so PNG encoding works about as hard as on a real desktop. `--png-settings` adds
//! the encode time and size of the client-sized picture under other PNG settings.
//!
//! A failed call is counted and reported on its own line (`FAILED k of n`), never timed into the
//! percentiles; any failure makes the run exit non-zero.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcec_desktop::geometry::{CLIENT_LONG_SIDE, CLIENT_PIXELS, client_size};
use mcec_desktop::requests::{
    CaptureRequest, ClickRequest, DisplaysRequest, KeyRequest, TypeRequest, WindowsRequest,
};
use mcec_desktop::seams::Screens;
use mcec_desktop::{DesktopConfig, DesktopTools, Point, Rect, RgbImage, image};
use mcec_desktop_x11::X11Desktop;
use mcec_rules::StopFlag;

/// The timings of the calls that succeeded, and what the others said. A failed call is never
/// timed into the percentiles: it may have returned early (or late) for its own reasons.
struct Timed {
    ok: Vec<Duration>,
    failed: Vec<String>,
}

/// Prints p50/p90/p99 of the successful calls and the failures apart; returns how many failed.
fn report(name: &str, timed: Timed) -> usize {
    let Timed { ok: mut samples, failed } = timed;
    samples.sort();
    let total = samples.len() + failed.len();
    if samples.is_empty() {
        println!("{name:<34} no call succeeded (n={total})");
    } else {
        let at = |p: f64| {
            let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
            samples[i].as_secs_f64() * 1000.0
        };
        println!(
            "{name:<34} p50 {:>8.3} ms   p90 {:>8.3} ms   p99 {:>8.3} ms   (n={})",
            at(0.5),
            at(0.9),
            at(0.99),
            samples.len()
        );
    }
    if let Some(first) = failed.first() {
        println!(
            "{:<34} FAILED {} of {total} calls (not in the percentiles); first: {first}",
            "",
            failed.len()
        );
    }
    failed.len()
}

fn time<T, E: std::fmt::Display>(n: usize, mut f: impl FnMut() -> Result<T, E>) -> Timed {
    let mut timed = Timed { ok: Vec::with_capacity(n), failed: Vec::new() };
    for _ in 0..n {
        let t = Instant::now();
        let outcome = f();
        let took = t.elapsed();
        match outcome {
            Ok(_) => timed.ok.push(took),
            Err(e) => timed.failed.push(e.to_string()),
        }
    }
    timed
}

/// Cover the screen with a busy, deterministic picture; returns the connection keeping the
/// window alive.
fn busy_screen() -> Result<x11rb::rust_connection::RustConnection, Box<dyn std::error::Error>> {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{
        ChangeGCAux, ConnectionExt, CreateGCAux, CreateWindowAux, Rectangle, WindowClass,
    };
    let (conn, n) = x11rb::connect(None)?;
    let screen = &conn.setup().roots[n];
    let (w, h) = (screen.width_in_pixels, screen.height_in_pixels);
    let win = conn.generate_id()?;
    conn.create_window(
        screen.root_depth,
        win,
        screen.root,
        0,
        0,
        w,
        h,
        0,
        WindowClass::INPUT_OUTPUT,
        0,
        &CreateWindowAux::new().override_redirect(1).background_pixel(0xf0f0f0),
    )?;
    conn.map_window(win)?;
    let gc = conn.generate_id()?;
    conn.create_gc(gc, win, &CreateGCAux::new())?;
    let mut seed = 0x2545_f491_u32;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    for y in (0..h).step_by(4) {
        let c = u32::from(y) * 255 / u32::from(h);
        conn.change_gc(gc, &ChangeGCAux::new().foreground(c << 16 | (255 - c) << 8 | 0x80))?;
        conn.poly_fill_rectangle(win, gc, &[Rectangle { x: 0, y: y as i16, width: w / 3, height: 4 }])?;
    }
    for _ in 0..6000 {
        let r = rand();
        conn.change_gc(gc, &ChangeGCAux::new().foreground(rand() & 0xffffff))?;
        let rect = Rectangle {
            x: (r % u32::from(w)) as i16,
            y: ((r >> 11) % u32::from(h)) as i16,
            width: (2 + (r >> 3) % 14) as u16,
            height: (2 + (r >> 7) % 6) as u16,
        };
        conn.poly_fill_rectangle(win, gc, &[rect])?;
    }
    conn.get_input_focus()?.reply()?;
    Ok(conn)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(50);
    let _busy = if args.iter().any(|a| a == "--busy") { Some(busy_screen()?) } else { None };
    let stop = StopFlag::new();
    let started = Instant::now();
    let backend = Arc::new(X11Desktop::connect(None)?);
    println!("connect: {:.3} ms", started.elapsed().as_secs_f64() * 1000.0);
    let artifact_dir = std::env::current_dir()?.join("target").join("bench-artifacts");
    let tools = DesktopTools::new(backend.clone(), DesktopConfig { artifact_dir });
    let screen = tools.displays(&DisplaysRequest {})?.virtual_bounds;
    println!("desktop {}x{}, MIT-SHM offered: {}", screen.width, screen.height, backend.shm_enabled());

    let mut failed = 0;
    failed += report("displays", time(n, || tools.displays(&DisplaysRequest {})));
    failed += report("windows (list)", time(n, || tools.windows(&WindowsRequest::default(), &stop)));
    for shm in [true, false] {
        backend.set_shm_enabled(shm);
        let tag = if backend.shm_enabled() { "shm" } else { "GetImage" };
        let area = Rect::new(0, 0, screen.width, screen.height);
        failed += report(&format!("raw pixels full screen ({tag})"), time(n, || backend.capture(area)));
        failed += report(
            &format!("capture full screen PNG ({tag})"),
            time(n, || tools.capture(&CaptureRequest::full_screen())),
        );
        failed += report(
            &format!("capture maxWidth 640 ({tag})"),
            time(n, || {
                tools.capture(&CaptureRequest { max_width: Some(640), ..CaptureRequest::full_screen() })
            }),
        );
    }
    backend.set_shm_enabled(true);
    // The default-size capture's stages on their own.
    let raw = backend.capture(Rect::new(0, 0, screen.width, screen.height))?.image;
    let (tw, th) = client_size(raw.width, raw.height, CLIENT_LONG_SIDE, CLIENT_PIXELS);
    failed += report("copy + downscale to client size", time(n, || image::downscale(raw.clone(), tw, th)));
    let whole = Rect::new(0, 0, screen.width, screen.height);
    failed += report("pixels scaled from the SHM frame", time(n, || backend.capture_scaled(whole, tw, th)));
    let small = image::downscale(raw, tw, th)?;
    failed += report("PNG encode at client size", time(n, || image::encode_png(&small)));
    failed += report("JPEG encode at client size", time(n, || image::encode_jpeg(&small, 80)));
    let png = tools.capture(&CaptureRequest::full_screen())?;
    println!("default-size PNG: {}x{}, {} bytes", png.width, png.height, png.byte_size);
    if args.iter().any(|a| a == "--png-settings") {
        compare_png_settings(&small, n);
    }
    if let Some(path) = args.iter().find_map(|a| a.strip_prefix("--save=")) {
        std::fs::write(path, &png.data)?;
    }

    let click = ClickRequest::at(Point::new(5, 5));
    failed += report("click", time(n, || tools.click(&click, &stop)));
    let hello = TypeRequest { text: "hello".into() };
    failed += report("type \"hello\"", time(n, || tools.type_text(&hello, &stop)));
    let unicode = TypeRequest { text: "✓Ω".into() };
    failed += report("type \"✓Ω\" (remapped keycodes)", time(n, || tools.type_text(&unicode, &stop)));
    let key = KeyRequest { keys: "ctrl+shift+Home".into(), hold_ms: None };
    failed += report("key ctrl+shift+Home", time(n, || tools.key(&key, &stop)));
    if failed > 0 {
        return Err(format!("{failed} call(s) failed; see FAILED above").into());
    }
    Ok(())
}

/// Encode time and size of the client-sized picture under other PNG settings than mcec's.
fn compare_png_settings(img: &RgbImage, n: usize) {
    use png::{Compression, Filter};
    let settings = [
        ("Fastest, Paeth (mcec)", Compression::Fastest, Some(Filter::Paeth)),
        ("Fastest, Up", Compression::Fastest, None),
        ("Fast, Up", Compression::Fast, Some(Filter::Up)),
        ("Fast, Sub", Compression::Fast, Some(Filter::Sub)),
        ("Fast, adaptive", Compression::Fast, None),
        ("Balanced, adaptive", Compression::Balanced, None),
    ];
    for (name, compression, filter) in settings {
        let mut size = 0;
        let timed = time(n, || {
            let mut out = Vec::new();
            let mut enc = png::Encoder::new(&mut out, img.width, img.height);
            enc.set_color(png::ColorType::Rgb);
            enc.set_compression(compression);
            if let Some(f) = filter {
                enc.set_filter(f);
            }
            enc.write_header()?.write_image_data(&img.pixels)?;
            size = out.len();
            Ok::<_, png::EncodingError>(())
        });
        report(&format!("PNG {name}, {} KB", size / 1024), timed);
    }
}
