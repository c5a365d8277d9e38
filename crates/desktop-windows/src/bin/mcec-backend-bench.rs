//! A Windows bench program: the Windows backend's latency in process, through the tool layer,
//! against an `mcec-wintest` window (started from beside this program). Prints one
//! `SAMPLE kind=K s=SECONDS` line per measurement and `DONE`; `bench/bench_desktop_wine.py`
//! runs it under Wine and reports p50/p90/p99. Not part of mcec.
//!
//! `mcec-backend-bench [ROUNDS]`
//!
//! Kinds: `click_call` (the `click` call), `click_seen` (call start to the window's button-up
//! line), `type_call` (`type` of 10 characters), `type_seen` (call start to the window's last
//! character line), `capture_region` (200x150 PNG), `capture_full` (the whole screen, PNG).

#[cfg(windows)]
fn main() {
    bench::main();
}

#[cfg(not(windows))]
fn main() {
    eprintln!("mcec-backend-bench is a Windows program: build it with scripts/windows-build");
    std::process::exit(2);
}

#[cfg(windows)]
mod bench {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    use std::sync::Arc;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use mcec_desktop::api::{DesktopConfig, DesktopTools};
    use mcec_desktop::requests::{CaptureRequest, ClickRequest, ImageFormat, Region, TypeRequest};
    use mcec_desktop::seams::WindowOp;
    use mcec_desktop::types::Point;
    use mcec_desktop_windows::WindowsDesktop;
    use mcec_rules::StopFlag;

    const TEXT: &str = "abcdéfgh€k";

    fn sample(kind: &str, since: Instant) {
        println!("SAMPLE kind={kind} s={:.9}", since.elapsed().as_secs_f64());
    }

    pub fn main() {
        let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(50);
        let exe = std::env::current_exe().expect("own path").with_file_name("mcec-wintest.exe");
        let mut child = Command::new(exe)
            .args(["mcec bench target", "336699", "50", "50", "400", "300"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start mcec-wintest");
        let (tx, rx) = mpsc::channel::<String>();
        let out = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let next = || rx.recv_timeout(Duration::from_secs(30)).expect("mcec-wintest said nothing");
        let ready = next();
        let field = |name: &str| -> String {
            ready.split_whitespace().find_map(|w| w.strip_prefix(name)).expect("READY field").to_string()
        };
        let hwnd = u64::from_str_radix(field("hwnd=0x").as_str(), 16).expect("hwnd");
        let client: Vec<i32> = field("client=").split(',').map(|v| v.parse().expect("client")).collect();

        let dir = std::env::temp_dir().join(format!("mcec-bench-{}", std::process::id()));
        let backend = WindowsDesktop::connect().expect("desktop");
        let tools = DesktopTools::new(Arc::new(backend), DesktopConfig { artifact_dir: dir.clone() });
        let stop = StopFlag::new();
        tools.backend().window_op(hwnd, WindowOp::Foreground).expect("foreground");
        let wait_for = |prefix: &str| loop {
            if next().starts_with(prefix) {
                break;
            }
        };
        for i in 0..rounds {
            let at = Point::new(client[0] + 20 + (i % 50) as i32, client[1] + 20 + (i % 40) as i32);
            let t0 = Instant::now();
            tools.click(&ClickRequest::at(at), &stop).expect("click");
            sample("click_call", t0);
            wait_for("UP button=left");
            sample("click_seen", t0);

            let t0 = Instant::now();
            tools.type_text(&TypeRequest { text: TEXT.into() }, &stop).expect("type");
            sample("type_call", t0);
            let last = format!("CHAR cp={:#x}", u32::from(TEXT.chars().last().unwrap_or('k')));
            wait_for(&last);
            sample("type_seen", t0);

            let region = Region { x: i64::from(client[0]), y: i64::from(client[1]), width: 200, height: 150 };
            let req = CaptureRequest {
                region: Some(region),
                format: Some(ImageFormat::Png),
                ..CaptureRequest::full_screen()
            };
            let t0 = Instant::now();
            tools.capture(&req).expect("capture region");
            sample("capture_region", t0);
            let req = CaptureRequest { format: Some(ImageFormat::Png), ..CaptureRequest::full_screen() };
            let t0 = Instant::now();
            tools.capture(&req).expect("capture full");
            sample("capture_full", t0);
        }
        println!("DONE");
        drop(child.stdin.take());
        let _ = child.kill();
        let _ = child.wait();
        // The captures are answered inline, so nothing is written here: the directory is
        // empty if it exists at all.
        let _ = std::fs::remove_dir(dir);
    }
}
