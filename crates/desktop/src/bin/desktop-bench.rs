//! Latency of the desktop tools against `$DISPLAY`, as percentiles. Not part of mcec.
//!
//! Run against a scratch server, since it clicks and types:
//! `Xvfb :45 -screen 0 1280x800x24 & DISPLAY=:45 cargo run -p mcec-desktop --release --bin desktop-bench [iterations]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcec_desktop::requests::{
    CaptureRequest, ClickRequest, DisplaysRequest, KeyRequest, TypeRequest, WindowsRequest,
};
use mcec_desktop::seams::Screens;
use mcec_desktop::{DesktopConfig, DesktopTools, Point, Rect, X11Desktop};
use mcec_rules::StopFlag;

fn percentiles(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
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

fn time<T, E: std::fmt::Display>(n: usize, mut f: impl FnMut() -> Result<T, E>) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            if let Err(e) = f() {
                eprintln!("call failed: {e}");
            }
            t.elapsed()
        })
        .collect()
}

fn capture_req(max_width: Option<u32>) -> CaptureRequest {
    CaptureRequest {
        region: None,
        max_width,
        scale: None,
        file: None,
        window: None,
        process: None,
        class_name: None,
        pid: None,
        handle: None,
        foreground: None,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map(|a| a.parse()).transpose()?.unwrap_or(50);
    let stop = StopFlag::new();
    let started = Instant::now();
    let backend = Arc::new(X11Desktop::connect(None)?);
    println!("connect: {:.3} ms", started.elapsed().as_secs_f64() * 1000.0);
    let artifact_dir = std::env::current_dir()?.join("target").join("bench-artifacts");
    let tools = DesktopTools::new(backend.clone(), DesktopConfig { artifact_dir });
    let screen = tools.displays(&DisplaysRequest {})?.virtual_bounds;
    println!("desktop {}x{}, MIT-SHM offered: {}", screen.width, screen.height, backend.shm_enabled());

    percentiles("displays", time(n, || tools.displays(&DisplaysRequest {})));
    percentiles("windows (list)", time(n, || tools.windows(&WindowsRequest::default(), &stop)));
    for shm in [true, false] {
        backend.set_shm_enabled(shm);
        let tag = if backend.shm_enabled() { "shm" } else { "GetImage" };
        let area = Rect::new(0, 0, screen.width, screen.height);
        percentiles(&format!("raw pixels full screen ({tag})"), time(n, || backend.capture(area)));
        percentiles(&format!("capture full screen PNG ({tag})"), time(n, || tools.capture(&capture_req(None))));
        percentiles(&format!("capture maxWidth 640 ({tag})"), time(n, || tools.capture(&capture_req(Some(640)))));
    }
    backend.set_shm_enabled(true);
    let png = tools.capture(&capture_req(None))?;
    println!("full-screen PNG: {}x{}, {} bytes", png.width, png.height, png.byte_size);

    let click = ClickRequest {
        at: Point::new(5, 5),
        button: None,
        count: None,
        window: None,
        process: None,
        class_name: None,
        pid: None,
        handle: None,
        foreground: None,
    };
    percentiles("click", time(n, || tools.click(&click, &stop)));
    let hello = TypeRequest { text: "hello".into() };
    percentiles("type \"hello\"", time(n, || tools.type_text(&hello, &stop)));
    let unicode = TypeRequest { text: "✓Ω".into() };
    percentiles("type \"✓Ω\" (remapped keycodes)", time(n, || tools.type_text(&unicode, &stop)));
    let key = KeyRequest { keys: "ctrl+shift+Home".into(), hold_ms: None };
    percentiles("key ctrl+shift+Home", time(n, || tools.key(&key, &stop)));
    Ok(())
}
