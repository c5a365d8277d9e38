//! Observation tools (and launch, window operations) against a real Xvfb.

use std::time::Duration;

use mcec_desktop::requests::{
    CaptureRequest, DisplaysRequest, LaunchRequest, Region, WaitCondition, WindowAction, WindowRequest,
    WindowsRequest,
};
use mcec_desktop_x11::X11Desktop;
use mcec_rules::{ErrorCode, StopFlag};

use crate::common::{TestWin, UNUSED_DISPLAY, Xvfb, testwin_path};

fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes)).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

fn px(img: &(u32, u32, Vec<u8>), x: u32, y: u32) -> [u8; 3] {
    let i = ((y * img.0 + x) * 3) as usize;
    [img.2[i], img.2[i + 1], img.2[i + 2]]
}

#[test]
fn no_desktop_names_the_display() {
    let err = X11Desktop::connect(Some(UNUSED_DISPLAY)).err().expect("no server there");
    assert_eq!(err.code, ErrorCode::NoDesktop);
    assert!(err.detail.contains(UNUSED_DISPLAY), "{}", err.detail);
}

#[test]
fn a_lost_server_answers_no_desktop() {
    let dir = tempfile::tempdir().unwrap();
    let x = Xvfb::start();
    let tools = x.tools(dir.path());
    let d = tools.displays(&DisplaysRequest {}).unwrap();
    assert_eq!(d.virtual_bounds.width, 1280);

    // The server goes away: the call says so instead of hanging or panicking.
    drop(x);
    let err = tools.displays(&DisplaysRequest {}).unwrap_err();
    assert_eq!(err.code, ErrorCode::NoDesktop, "{}", err.detail);
}

#[test]
fn displays_and_capture_match_the_pattern_with_and_without_shm() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let d = tools.displays(&DisplaysRequest {}).unwrap();
    assert_eq!(d.displays.len(), 1);
    assert_eq!((d.virtual_bounds.width, d.virtual_bounds.height), (1280, 800));

    let _w = TestWin::open(
        &x.display,
        &["--x", "100", "--y", "100", "--width", "400", "--height", "300", "--class", "Pattern"],
    );
    for shm in [true, false] {
        let backend = x.backend();
        backend.set_shm_enabled(shm);
        assert_eq!(backend.shm_enabled(), shm, "Xvfb offers MIT-SHM 1.2");
        let tools = mcec_desktop::DesktopTools::new(
            std::sync::Arc::new(backend),
            mcec_desktop::DesktopConfig { artifact_dir: dir.path().to_path_buf() },
        );
        let full = tools.capture(&CaptureRequest::full_screen()).unwrap();
        assert_eq!((full.width, full.height), (1280, 800));
        let img = decode(&full.data);
        assert_eq!(full.byte_size, full.data.len());
        assert_eq!(px(&img, 150, 150), [255, 0, 0], "shm={shm}");
        assert_eq!(px(&img, 450, 150), [0, 255, 0], "shm={shm}");
        assert_eq!(px(&img, 150, 350), [0, 0, 255], "shm={shm}");
        assert_eq!(px(&img, 450, 350), [255, 255, 255], "shm={shm}");
        assert_eq!(px(&img, 50, 50), [0, 0, 0], "root is black, shm={shm}");
    }

    // One window by selector, downscaled, and written to a relative file.
    let req = CaptureRequest {
        class_name: Some("pattern".into()),
        max_width: Some(200),
        file: Some("shots/win.png".into()),
        ..CaptureRequest::full_screen()
    };
    let shot = tools.capture(&req).unwrap();
    assert_eq!((shot.width, shot.height), (200, 150));
    assert_eq!((shot.source.width, shot.source.height), (400, 300));
    let img = decode(&shot.data);
    assert_eq!(px(&img, 50, 37), [255, 0, 0]);
    assert_eq!(px(&img, 150, 112), [255, 255, 255]);
    let written = std::fs::read(dir.path().join("shots/win.png")).unwrap();
    assert_eq!(written, shot.data);

    // A region partly off screen is clipped; caps and bad sizes are refused.
    let region = |x, y, width, height| CaptureRequest {
        region: Some(Region { x, y, width, height }),
        ..CaptureRequest::full_screen()
    };
    let clipped = tools.capture(&region(1200, 700, 200, 200)).unwrap();
    assert_eq!((clipped.width, clipped.height), (80, 100));
    let err = tools.capture(&region(0, 0, 20_000, 10)).unwrap_err();
    assert_eq!(err.code, ErrorCode::BadArguments);
    assert!(err.detail.starts_with("`region`"));
    assert_eq!(tools.capture(&region(0, 0, -1, 10)).unwrap_err().code, ErrorCode::BadArguments);
    assert_eq!(tools.capture(&region(5000, 5000, 10, 10)).unwrap_err().code, ErrorCode::NoTarget);

    // The result as the envelope shows it: sizes and type, never the PNG bytes themselves.
    let shot =
        tools.capture(&CaptureRequest { max_width: Some(100), ..CaptureRequest::full_screen() }).unwrap();
    let result = serde_json::to_value(&shot).unwrap();
    assert_eq!(result["width"], 100);
    assert_eq!(result["byteSize"], shot.data.len());
    assert_eq!(result["mimeType"], "image/png");
    assert!(result.get("png").is_none());

    let both = CaptureRequest { class_name: Some("pattern".into()), ..region(0, 0, 10, 10) };
    assert_eq!(tools.capture(&both).unwrap_err().code, ErrorCode::BadArguments);
}

#[test]
fn windows_lists_waits_and_sees_closing() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let stop = StopFlag::new();
    let by_class = |condition, timeout_ms| WindowsRequest {
        class_name: Some("Lister".into()),
        condition,
        timeout_ms,
        ..Default::default()
    };
    assert!(tools.windows(&by_class(None, None), &stop).unwrap().windows.is_empty());
    let err = tools.windows(&by_class(Some(WaitCondition::Appears), Some(50)), &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout);

    let display = x.display.clone();
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        TestWin::open(&display, &["--class", "Lister", "--title", "Hello Lister ✓"])
    });
    let found = tools.windows(&by_class(Some(WaitCondition::Appears), Some(20_000)), &stop).unwrap();
    let mut win = opener.join().unwrap();
    assert_eq!(found.windows.len(), 1);
    let w = &found.windows[0];
    assert_eq!(w.id, u64::from(win.id));
    assert_eq!(w.title, "Hello Lister ✓");
    assert_eq!((w.class_name.as_str(), w.instance.as_str()), ("Lister", "lister"));
    assert_eq!(w.pid, Some(win.pid));
    assert_eq!(w.process.as_deref(), Some("mcec-testwin"));
    assert_eq!(
        (w.bounds.unwrap().x, w.bounds.unwrap().y, w.bounds.unwrap().width, w.bounds.unwrap().height),
        (100, 100, 400, 300)
    );
    let json = serde_json::to_value(w).unwrap();
    assert!(json.get("className").is_some() && json.get("foreground").is_some(), "{json}");

    let by_title = WindowsRequest { title: Some("hello lister".into()), ..Default::default() };
    assert_eq!(tools.windows(&by_title, &stop).unwrap().windows.len(), 1);

    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        win.kill();
    });
    let gone = tools.windows(&by_class(Some(WaitCondition::Disappears), Some(20_000)), &stop).unwrap();
    closer.join().unwrap();
    assert!(gone.windows.is_empty());
}

#[test]
fn window_operations_and_selectors() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let stop = StopFlag::new();
    let a = TestWin::open(&x.display, &["--class", "Ops", "--title", "first"]);
    let _b = TestWin::open(&x.display, &["--class", "Ops", "--title", "second", "--x", "600"]);
    let req = |action, window: Option<&str>| WindowRequest {
        action,
        x: Some(20),
        y: Some(30),
        width: Some(200),
        height: Some(100),
        window: window.map(String::from),
        process: None,
        class_name: Some("ops".into()),
        pid: None,
        handle: None,
        foreground: None,
    };
    let err = tools.window(&req(WindowAction::Move, None), &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::AmbiguousSelector);
    assert!(err.detail.contains("first") && err.detail.contains("second"), "{}", err.detail);
    let none = WindowRequest { class_name: None, ..req(WindowAction::Move, None) };
    assert_eq!(tools.window(&none, &stop).unwrap_err().code, ErrorCode::WindowNotFound);

    let moved = tools.window(&req(WindowAction::Move, Some("first")), &stop).unwrap();
    assert!(moved.confirmed);
    assert_eq!((moved.window.bounds.unwrap().x, moved.window.bounds.unwrap().y), (20, 30));
    let resized = tools.window(&req(WindowAction::Resize, Some("first")), &stop).unwrap();
    assert_eq!((resized.window.bounds.unwrap().width, resized.window.bounds.unwrap().height), (200, 100));
    let fg = tools.window(&req(WindowAction::Foreground, Some("first")), &stop).unwrap();
    assert!(fg.confirmed && fg.window.foreground);
    let min = tools.window(&req(WindowAction::Minimize, Some("first")), &stop).unwrap();
    assert!(min.window.minimized);
    let restored = tools.window(&req(WindowAction::Restore, Some("first")), &stop).unwrap();
    assert!(!restored.window.minimized);
    let max = tools.window(&req(WindowAction::Maximize, Some("first")), &stop).unwrap();
    assert_eq!((max.window.bounds.unwrap().width, max.window.bounds.unwrap().height), (1280, 800));

    let bad = WindowRequest { width: Some(-3), ..req(WindowAction::Resize, Some("first")) };
    let err = tools.window(&bad, &stop).unwrap_err();
    assert!(err.detail.starts_with("`width`"), "{}", err.detail);
    let ghost =
        WindowRequest { handle: Some(0x7fff_fff0), class_name: None, ..req(WindowAction::Move, None) };
    assert_eq!(tools.window(&ghost, &stop).unwrap_err().code, ErrorCode::WindowNotFound);
    drop(a);
}

#[test]
fn launch_finds_the_new_window() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let req = LaunchRequest {
        path: testwin_path().into(),
        args: Some(vec!["--title".into(), "Launched".into(), "--class".into(), "Launchy".into()]),
        working_directory: Some(dir.path().display().to_string()),
        timeout_ms: Some(20_000),
    };
    let res = tools.launch(&req, &StopFlag::new()).unwrap();
    assert_eq!(res.window.title, "Launched");
    assert_eq!(res.window.pid, Some(res.pid));
    // Clean up the launched process by its pid.
    let _ = std::process::Command::new("kill").arg(res.pid.to_string()).status();

    let missing = LaunchRequest {
        path: "/nonexistent/mcec-nothing".into(),
        args: None,
        working_directory: None,
        timeout_ms: None,
    };
    let err = tools.launch(&missing, &StopFlag::new()).unwrap_err();
    assert!(err.detail.starts_with("`path`"), "{}", err.detail);
    let quick =
        LaunchRequest { path: "true".into(), args: None, working_directory: None, timeout_ms: Some(20_000) };
    assert_eq!(tools.launch(&quick, &StopFlag::new()).unwrap_err().code, ErrorCode::NoTarget);
}
