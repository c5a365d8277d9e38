//! Actuation tools against a real Xvfb and the test window's own event log.

use std::time::{Duration, Instant};

use mcec_desktop::requests::{
    ClickRequest, DragRequest, FocusRequest, KeyRequest, RecordAction, RecordRequest, TypeRequest,
};
use mcec_desktop::{MouseButton, Point};
use mcec_rules::{ErrorCode, StopFlag};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::ConnectionExt;

use crate::common::{TestWin, Xvfb, buttons_down, modifiers_down, typed};

fn click(at: Point, class: Option<&str>, button: Option<MouseButton>, count: Option<u32>) -> ClickRequest {
    ClickRequest { button, count, class_name: class.map(String::from), ..ClickRequest::at(at) }
}

fn focus(class: &str) -> FocusRequest {
    FocusRequest {
        click_at: None,
        window: None,
        process: None,
        class_name: Some(class.into()),
        pid: None,
        handle: None,
        foreground: None,
    }
}

#[test]
fn click_lands_where_and_how_asked() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let stop = StopFlag::new();
    let win = TestWin::open(&x.display, &["--class", "Clicky"]);

    let res = tools
        .click(&click(Point::new(50, 60), Some("clicky"), Some(MouseButton::Right), None), &stop)
        .unwrap();
    assert_eq!(res.at, Point::new(150, 160));
    assert_eq!(win.wait_for(|l| l.starts_with("press")).unwrap(), "press 3 50 60 0");
    assert!(win.wait_for(|l| l.starts_with("release")).unwrap().starts_with("release 3 50 60"));

    tools.click(&click(Point::new(110, 120), None, None, Some(2)), &stop).unwrap();
    let lines = win.drain(Duration::from_millis(300));
    let presses: Vec<_> = lines.iter().filter(|l| l.starts_with("press")).collect();
    assert_eq!(presses, ["press 1 10 20 0", "press 1 10 20 0"], "{lines:?}");
    assert_eq!(buttons_down(&x.raw()), 0);

    let off = tools.click(&click(Point::new(5000, 10), None, None, None), &stop).unwrap_err();
    assert_eq!(off.code, ErrorCode::BadArguments);
    assert!(off.detail.starts_with("`at`"), "{}", off.detail);
    let outside = tools.click(&click(Point::new(500, 10), Some("clicky"), None, None), &stop).unwrap_err();
    assert!(outside.detail.contains("outside the window"), "{}", outside.detail);
    let none =
        tools.click(&click(Point::new(1, 1), Some("nothing-like-this"), None, None), &stop).unwrap_err();
    assert_eq!(none.code, ErrorCode::WindowNotFound);
    assert!(win.drain(Duration::from_millis(200)).iter().all(|l| !l.starts_with("press")));
}

#[test]
fn typed_text_arrives_exactly_and_the_keymap_is_restored() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let stop = StopFlag::new();
    let win = TestWin::open(&x.display, &["--class", "Typist"]);
    let focused = tools.focus(&focus("typist"), &stop).unwrap();
    assert!(focused.window.foreground);

    let text = "héllo ✓ Ω World!\n\t~🙂";
    let res = tools.type_text(&TypeRequest { text: text.into() }, &stop).unwrap();
    assert_eq!(res.characters, text.chars().count());
    assert_eq!(typed(&win, text.chars().count()), text);
    let raw = x.raw();
    assert!(modifiers_down(&raw).is_empty());

    // The spare keycodes go back to NoSymbol once idle.
    let check = 0x0af3u32; // the ✓ keysym
    let deadline = Instant::now() + Duration::from_secs(5);
    let mapped = || {
        let s = raw.setup();
        let (min, max) = (s.min_keycode, s.max_keycode);
        let m = raw.get_keyboard_mapping(min, max - min + 1).unwrap().reply().unwrap();
        m.keysyms.contains(&check)
    };
    while mapped() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!mapped(), "temporary keycode restored");

    let stopped = StopFlag::new();
    stopped.set();
    let err = tools.type_text(&TypeRequest { text: "abc".into() }, &stopped).unwrap_err();
    assert_eq!(err.code, ErrorCode::EmergencyStopped);
    assert!(win.drain(Duration::from_millis(200)).iter().all(|l| !l.starts_with("key ")));
}

#[test]
fn drag_goes_from_start_to_end_and_leaves_the_button_up() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let win = TestWin::open(&x.display, &["--class", "Dragger"]);
    let req = DragRequest {
        path: Some(vec![Point::new(300, 130)]),
        ..DragRequest::between(Point::new(120, 130), Point::new(400, 350))
    };
    let res = tools.drag(&req, &StopFlag::new()).unwrap();
    assert!(res.points > 20);
    assert_eq!(win.wait_for(|l| l.starts_with("press")).unwrap(), "press 1 20 30 0");
    let lines = win.drain(Duration::from_millis(300));
    let release = lines.iter().find(|l| l.starts_with("release")).expect("release seen");
    assert!(release.starts_with("release 1 300 250 "), "{release}");
    assert!(lines.iter().any(|l| l == "motion 200 30"), "walked through the waypoint: {lines:?}");
    assert_eq!(buttons_down(&x.raw()), 0);
}

#[test]
fn key_chords_reach_the_window_and_leave_no_modifier_held() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let stop = StopFlag::new();
    let win = TestWin::open(&x.display, &["--class", "Keys"]);
    tools.focus(&focus("keys"), &stop).unwrap();
    let res =
        tools.key(&KeyRequest { keys: "ctrl+shift+t Return".into(), hold_ms: Some(20) }, &stop).unwrap();
    assert_eq!(res.chords, 2);
    // The T arrives with Shift (1) and Control (4) in its state; Return with none.
    let t = win.wait_for(|l| l.starts_with("key ") && (l.ends_with(" 54") || l.ends_with(" 74"))).unwrap();
    let state: u16 = t.split(' ').nth(2).unwrap().parse().unwrap();
    assert_eq!(state & 0x5, 0x5, "{t}");
    let ret = win.wait_for(|l| l.starts_with("key ") && l.contains(" ff0d ")).unwrap();
    assert_eq!(ret.split(' ').nth(2), Some("0"), "{ret}");
    assert!(modifiers_down(&x.raw()).is_empty());

    let err = tools.key(&KeyRequest { keys: "ctrl+bogus".into(), hold_ms: None }, &stop).unwrap_err();
    assert!(err.detail.starts_with("`keys`") && err.detail.contains("bogus"), "{}", err.detail);
    assert!(modifiers_down(&x.raw()).is_empty());
}

#[test]
fn record_oneshot_start_stop() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let stop = StopFlag::new();
    let _win = TestWin::open(&x.display, &["--class", "Filmed"]);
    let req = |action, duration_ms| RecordRequest {
        fps: Some(10),
        duration_ms,
        max_width: Some(320),
        class_name: Some("filmed".into()),
        ..RecordRequest::new(action)
    };
    let err = tools.record(&req(RecordAction::Stop, None), &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::BadArguments);
    let err = tools.record(&req(RecordAction::Oneshot, None), &stop).unwrap_err();
    assert!(err.detail.starts_with("`durationMs`"), "{}", err.detail);

    let one = tools.record(&req(RecordAction::Oneshot, Some(300)), &stop).unwrap();
    assert!(one.frames.unwrap() >= 1);
    assert_eq!((one.width, one.height), (320, 240));
    assert!(one.file.starts_with(&dir.path().display().to_string()), "{}", one.file);
    let bytes = std::fs::read(&one.file).unwrap();
    assert!(bytes.starts_with(b"GIF89a"));
    let mut decoder = gif::DecodeOptions::new().read_info(&bytes[..]).unwrap();
    let mut frames = 0;
    while decoder.read_next_frame().unwrap().is_some() {
        frames += 1;
    }
    assert_eq!(Some(frames), one.frames);

    let started = tools.record(&req(RecordAction::Start, None), &stop).unwrap();
    assert!(started.recording);
    let busy = tools.record(&req(RecordAction::Oneshot, Some(100)), &stop).unwrap_err();
    assert_eq!(busy.code, ErrorCode::Unavailable);
    std::thread::sleep(Duration::from_millis(250));
    let stopped = tools.record(&req(RecordAction::Stop, None), &stop).unwrap();
    assert_eq!(stopped.ended, Some("stopped"));
    assert!(stopped.frames.unwrap() >= 1);
    assert_eq!(stopped.file, started.file);
}

#[test]
fn emergency_release_lets_go_of_buttons_and_modifiers_pressed_elsewhere() {
    use mcec_desktop::keys::{Key, Modifier};
    use mcec_desktop::seams::Injector;
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    // Another injector presses, so the tools' backend has no record of it.
    let other = x.backend();
    other.pointer_move(Point::new(20, 20)).unwrap();
    other.button(MouseButton::Left, true).unwrap();
    other.key(Key::Modifier(Modifier::Ctrl), true, &StopFlag::new()).unwrap();
    other.key(Key::Modifier(Modifier::Shift), true, &StopFlag::new()).unwrap();
    other.settle().unwrap();
    let raw = x.raw();
    assert_ne!(buttons_down(&raw), 0);
    assert_eq!(modifiers_down(&raw).len(), 2);
    tools.emergency_release().unwrap();
    assert_eq!(buttons_down(&raw), 0);
    assert!(modifiers_down(&raw).is_empty());
}

#[test]
fn the_last_resort_release_lets_go_of_every_key_and_button_down() {
    use mcec_desktop::keys::{Key, Modifier};
    use mcec_desktop::seams::Injector;
    let x = Xvfb::start();
    let held = x.backend();
    held.pointer_move(Point::new(20, 20)).unwrap();
    held.button(MouseButton::Left, true).unwrap();
    held.button(MouseButton::Right, true).unwrap();
    held.key(Key::Modifier(Modifier::Shift), true, &StopFlag::new()).unwrap();
    held.key(Key::Char('a'), true, &StopFlag::new()).unwrap();
    held.settle().unwrap();
    let raw = x.raw();
    let keys_down = |raw: &x11rb::rust_connection::RustConnection| {
        raw.query_keymap().unwrap().reply().unwrap().keys.iter().map(|b| b.count_ones()).sum::<u32>()
    };
    assert_ne!(buttons_down(&raw), 0);
    assert_eq!(keys_down(&raw), 2);
    // The backend's own state is not used: its locks may be held by the panicking thread.
    let release = held.last_resort_release();
    release().unwrap();
    assert_eq!(buttons_down(&raw), 0);
    assert_eq!(keys_down(&raw), 0);
    assert!(mcec_desktop_x11::release_everything_down(":9999").unwrap_err().contains(":9999"));
}

#[test]
fn focus_with_a_click_and_a_recording_ended_by_the_stop() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let stop = StopFlag::new();
    let win = TestWin::open(&x.display, &["--class", "Focus", "--x", "200", "--y", "50"]);
    let req = FocusRequest { click_at: Some(Point::new(7, 9).into()), ..focus("focus") };
    let res = tools.focus(&req, &stop).unwrap();
    assert_eq!(res.clicked, Some(Point::new(207, 59)));
    assert!(res.window.foreground);
    assert_eq!(win.wait_for(|l| l.starts_with("press")).unwrap(), "press 1 7 9 0");
    let outside = FocusRequest { click_at: Some(Point::new(-1, 9).into()), ..focus("focus") };
    assert!(tools.focus(&outside, &stop).unwrap_err().detail.starts_with("`clickAt`"));

    let rec = RecordRequest {
        region: Some(mcec_desktop::requests::Region { x: 0, y: 0, width: 64, height: 48 }),
        fps: Some(10),
        file: Some("rec/stopped.gif".into()),
        ..RecordRequest::new(RecordAction::Start)
    };
    tools.record(&rec, &stop).unwrap();
    std::thread::sleep(Duration::from_millis(150));
    stop.set();
    std::thread::sleep(Duration::from_millis(150));
    stop.clear();
    let done = tools.record(&RecordRequest { action: RecordAction::Stop, ..rec }, &stop).unwrap();
    assert_eq!(done.ended, Some("emergency-stop"));
    assert!(dir.path().join("rec/stopped.gif").is_file());
}

#[test]
fn a_window_gone_mid_call_is_window_closed() {
    use mcec_desktop::seams::{WindowManager, WindowOp};
    let x = Xvfb::start();
    let backend = x.backend();
    let mut win = TestWin::open(&x.display, &["--class", "Ghost"]);
    let id = u64::from(win.id);
    assert_eq!(backend.window_info(id).unwrap().class_name, "Ghost");
    win.kill();
    // The server notices the client's death asynchronously: wait for the window to vanish.
    let deadline = Instant::now() + Duration::from_secs(5);
    while backend.window_info(id).is_ok() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(backend.window_info(id).unwrap_err().code, ErrorCode::WindowClosed);
    let err = backend.window_op(id, WindowOp::Move(Point::new(1, 1))).unwrap_err();
    assert_eq!(err.code, ErrorCode::WindowClosed);
}

#[test]
fn text_typed_into_a_real_xterm_reaches_its_program() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let stop = StopFlag::new();
    let out = dir.path().join("typed.txt");
    let mut xterm = std::process::Command::new("xterm")
        .args(["-u8", "-class", "McecXterm", "-e", "sh", "-c"])
        .arg(format!("cat > '{}'", out.display()))
        .env("DISPLAY", &x.display)
        .env("LC_ALL", "C.UTF-8")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("xterm must be installed");
    let wait = mcec_desktop::requests::WindowsRequest {
        class_name: Some("McecXterm".into()),
        condition: Some(mcec_desktop::requests::WaitCondition::Appears),
        timeout_ms: Some(30_000),
        ..Default::default()
    };
    tools.windows(&wait, &stop).unwrap();
    tools.focus(&focus("McecXterm"), &stop).unwrap();
    let text = "héllo ✓ Ω Zürich\n";
    tools.type_text(&TypeRequest { text: text.into() }, &stop).unwrap();
    tools.key(&KeyRequest { keys: "ctrl+d".into(), hold_ms: None }, &stop).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while xterm.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = xterm.kill();
    let _ = xterm.wait();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    assert!(modifiers_down(&x.raw()).is_empty());
}
