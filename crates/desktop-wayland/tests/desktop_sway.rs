//! The sway backend against a real sway: outputs and capture, windows, typing into a Wayland
//! client (`foot`), a click that lands, and mcec's own injected chord never stopping.

mod common;

use std::path::Path;
use std::process::Child;
use std::time::Duration;

use common::{GUARD, Sway, until};
use mcec_desktop::keys::{Key, Modifier};
use mcec_desktop::monitor::{LastPhysicalInput, MonitorSink, ProvenanceMonitor};
use mcec_desktop::seams::{Injector, Screens, WindowManager, WindowOp};
use mcec_desktop::types::{Point, Rect, ScrollDirection, WindowInfo};
use mcec_desktop_wayland::ipc::Frame;
use mcec_desktop_wayland::{SwayMonitor, WlrDesktop};
use mcec_rules::StopFlag;
use mcec_rules::hotkey::Hotkey;
use mcec_rules::latch::{Latch, StopReason};

fn desktop(sway: &Sway) -> WlrDesktop {
    WlrDesktop::connect_to(&sway.swaysock, &sway.runtime_dir.join(&sway.wayland_display)).expect("connect")
}

/// Starts `foot` running `sh -c script` and waits for its window; returns it and the child.
fn foot(sway: &Sway, d: &WlrDesktop, script: &str) -> (WindowInfo, Child) {
    let before: Vec<u64> = d.list_windows().expect("list").iter().map(|w| w.id).collect();
    let child = sway.client_command(&["foot", "sh", "-c", script]).spawn().expect("foot");
    let w = until("foot's window", || {
        d.list_windows().ok()?.into_iter().find(|w| w.class_name == "foot" && !before.contains(&w.id))
    });
    (w, child)
}

fn end(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn outputs_and_a_capture_of_the_background() {
    let sway = Sway::start();
    let d = desktop(&sway);
    let displays = d.displays().expect("displays");
    assert_eq!(displays.len(), 1, "{displays:?}");
    assert!(displays[0].primary);
    assert!((displays[0].dpi.scale - 1.0).abs() < f64::EPSILON);
    let area = Rect::new(10, 10, 40, 30);
    sway.swaymsg(&["output * bg #336699 solid_color"]).expect("swaymsg");
    let shot = until("swaybg's colour in the capture", || {
        let shot = d.capture(area).expect("capture");
        shot.image.pixels.chunks(3).all(|p| p == [0x33, 0x66, 0x99]).then_some(shot)
    });
    assert_eq!((shot.image.width, shot.image.height), (40, 30));
    assert_eq!(shot.via, mcec_desktop::types::CaptureVia::Screencopy);
}

#[test]
fn typed_text_and_keys_arrive_in_a_wayland_window() {
    let sway = Sway::start();
    let d = desktop(&sway);
    let out = sway.runtime_dir.join("typed");
    let (w, child) = foot(&sway, &d, &format!("stty -echo; cat > {}", out.display()));
    d.window_op(w.id, WindowOp::Foreground).expect("focus");
    until("focus", || d.window_info(w.id).ok().filter(|w| w.foreground));
    let text = "Grüße, 世界 ✓ ~`!@#$%^&*()";
    d.type_text(&format!("{text}\n"), &StopFlag::new()).expect("type");
    until("the typed line", || read(&out).contains(text).then_some(()));
    // A key chord: Ctrl+U erases the line being typed in the terminal.
    d.type_text("gone", &StopFlag::new()).expect("type");
    let stop = StopFlag::new();
    d.key(Key::Modifier(Modifier::Ctrl), true, &stop).expect("ctrl");
    d.key(Key::Char('u'), true, &stop).expect("u");
    d.key(Key::Char('u'), false, &stop).expect("u");
    d.key(Key::Modifier(Modifier::Ctrl), false, &stop).expect("ctrl");
    d.type_text("kept\n", &StopFlag::new()).expect("type");
    let second = until("the second line", || read(&out).lines().nth(1).map(str::to_string));
    assert_eq!(second, "kept", "Ctrl+U erased `gone`: {:?}", read(&out));
    end(child);
}

#[test]
fn a_click_lands_on_the_window_under_it() {
    let sway = Sway::start();
    let d = desktop(&sway);
    assert!(d.pointer_position().is_err(), "a Wayland client cannot know the pointer before moving it");
    let (left, a) = foot(&sway, &d, "sleep 600");
    let (right, b) = foot(&sway, &d, "sleep 600");
    until("the second window focused", || d.window_info(right.id).ok().filter(|w| w.foreground));
    let left = d.window_info(left.id).expect("left");
    let at = Point::new(
        left.bounds.unwrap().x + (left.bounds.unwrap().width / 2) as i32,
        left.bounds.unwrap().y + (left.bounds.unwrap().height / 2) as i32,
    );
    d.pointer_move(at).expect("move");
    assert_eq!(d.pointer_position().expect("position"), at);
    d.button(mcec_desktop::types::MouseButton::Left, true).expect("press");
    d.button(mcec_desktop::types::MouseButton::Left, false).expect("release");
    d.settle().expect("settle");
    until("the clicked window focused", || d.window_info(left.id).ok().filter(|w| w.foreground));
    let tiled = d.window_op(left.id, WindowOp::Move(Point::new(5, 5)));
    assert!(tiled.is_err(), "a tiled window moved");
    end(a);
    end(b);
}

#[test]
fn mcecs_own_injected_chord_does_not_stop_and_the_physical_one_does() {
    let sway = Sway::start();
    let d = desktop(&sway);
    let latch = Latch::new(StopFlag::new());
    let sink = MonitorSink::new(latch.clone(), Hotkey::default(), LastPhysicalInput::new());
    let handle = SwayMonitor::new(sway.swaysock.clone()).start(sink).expect("arm");
    let stop = StopFlag::new();
    for m in [Modifier::Ctrl, Modifier::Alt, Modifier::Shift] {
        d.key(Key::Modifier(m), true, &stop).expect("modifier");
    }
    d.key(Key::Char('s'), true, &stop).expect("s");
    d.key(Key::Char('s'), false, &stop).expect("s");
    d.release_all().expect("release");
    let _ = sway.swaymsg(&["-t", "get_version"]);
    assert!(!latch.is_stopped(), "mcec's own injected chord latched the stop");
    sway.physical_key("ctrl+alt+shift+s");
    let notice = latch.wait_for_trip_timeout(GUARD).expect("the physical chord latched");
    assert_eq!(notice.trip.reason, StopReason::Chord("Ctrl+Alt+Shift+S".into()));
    drop(handle);
}

#[test]
fn a_long_text_arrives_whole_and_a_stopped_type_sends_nothing_and_releases() {
    let sway = Sway::start();
    let d = desktop(&sway);
    let out = sway.runtime_dir.join("typed");
    // Raw mode: cat sees each character as it comes, Ctrl+Z included (no signals).
    let (w, child) = foot(&sway, &d, &format!("stty raw -echo; cat > {}", out.display()));
    d.window_op(w.id, WindowOp::Foreground).expect("focus");
    until("focus", || d.window_info(w.id).ok().filter(|w| w.foreground));
    let long: String = "abcdefghij".repeat(40);
    d.type_text(&long, &StopFlag::new()).expect("type");
    until("400 characters", || (read(&out).len() >= long.len()).then_some(()));
    assert_eq!(read(&out), long);

    // Ctrl held, then a type the stop has already refused: nothing is typed and Ctrl is let go,
    // so the next `z` arrives as `z`, not as Ctrl+Z (0x1a).
    d.key(Key::Modifier(Modifier::Ctrl), true, &StopFlag::new()).expect("ctrl held");
    let stop = StopFlag::new();
    stop.set();
    let err = d.type_text("xyz", &stop).expect_err("the stop refused typing");
    assert_eq!(err.code, mcec_rules::ErrorCode::EmergencyStopped, "{err:?}");
    assert!(err.detail.contains("Typed 0 of 3 characters"), "{}", err.detail);
    d.type_text("z", &StopFlag::new()).expect("type");
    until("the z", || (read(&out).len() > long.len()).then_some(()));
    assert_eq!(&read(&out)[long.len()..], "z", "a stopped type sent keys, or Ctrl stayed down");
    end(child);
}

#[test]
fn a_floating_window_moves_and_resizes_and_minimizes_to_the_scratchpad() {
    let sway = Sway::start();
    let d = desktop(&sway);
    let (w, child) = foot(&sway, &d, "sleep 600");
    let float = sway.swaymsg(&[&format!("[con_id={}] floating enable", w.id)]).expect("swaymsg");
    assert!(float.status.success());
    // sway places a window it has just made floating again when the client next commits, which
    // can undo a resize and move sent at once; each is sent again until the place holds.
    let moved = until("the new place", || {
        d.window_op(w.id, WindowOp::Resize { width: 400, height: 300 }).expect("resize");
        d.window_op(w.id, WindowOp::Move(Point::new(100, 50))).expect("move");
        std::thread::sleep(Duration::from_millis(200));
        d.window_info(w.id).ok().filter(|i| {
            i.bounds.unwrap().x == 100 && i.bounds.unwrap().y == 50 && i.bounds.unwrap().width == 400
        })
    });
    assert_eq!(moved.bounds.unwrap().height, 300, "{:?}", moved.bounds);
    d.window_op(w.id, WindowOp::Minimize).expect("minimize");
    until("the scratchpad", || d.window_info(w.id).ok().filter(|i| i.minimized));
    d.window_op(w.id, WindowOp::Foreground).expect("bring back");
    until("shown and focused", || d.window_info(w.id).ok().filter(|i| !i.minimized && i.foreground));
    end(child);
}

#[test]
fn a_wheel_notch_reaches_sway_in_its_direction() {
    let sway = Sway::start();
    let d = desktop(&sway);
    let mut events = sway.binding_events();
    for (button, name) in [("button4", "up"), ("button5", "down"), ("button6", "left"), ("button7", "right")]
    {
        let out =
            sway.swaymsg(&[&format!("bindsym --whole-window {button} nop wheel-{name}")]).expect("swaymsg");
        assert!(out.status.success());
    }
    d.pointer_move(Point::new(100, 100)).expect("move");
    for (direction, name) in [
        (ScrollDirection::Down, "down"),
        (ScrollDirection::Up, "up"),
        (ScrollDirection::Right, "right"),
        (ScrollDirection::Left, "left"),
    ] {
        d.scroll(direction).expect("scroll");
        let fired = loop {
            match events.read_frame(Some(GUARD)).expect("binding event") {
                Some(Frame::Event(_, v)) => break v["binding"]["command"].as_str().unwrap_or("").to_string(),
                Some(Frame::Reply(_)) => {}
                None => panic!("the notch fired no binding"),
            }
        };
        assert_eq!(fired, format!("nop wheel-{name}"));
    }
}

#[test]
fn mcecs_own_windows_are_left_out_of_captures() {
    let sway = Sway::start();
    let d = desktop(&sway);
    sway.swaymsg(&["output * bg #336699 solid_color"]).expect("swaymsg");
    // A window named as mcec's banner is (its class is one of mcec's own).
    let child =
        sway.client_command(&["foot", "--app-id=mcec-overlay", "sleep", "600"]).spawn().expect("foot");
    // No tool lists it, so sway's tree names it.
    let own = until("the own window", || sway.view("mcec-overlay")?["id"].as_u64());
    assert!(!d.list_windows().expect("list").iter().any(|w| w.id == own), "mcec's window is listed");
    let cmd = format!("[con_id={own}] floating enable, resize set 200 100, move absolute position 300 200");
    assert!(sway.swaymsg(&[&cmd]).expect("swaymsg").status.success());
    let area = Rect::new(250, 150, 300, 200);
    let want = Rect::new(300, 200, 200, 100);
    let shot = until("the window in place and the background drawn", || {
        let shot = d.capture(area).ok()?;
        let bg = shot.image.pixels[..3] == [0x33, 0x66, 0x99];
        let placed = shot.left_out.as_ref().is_some_and(|l| l.areas == [want]);
        if !placed {
            // sway may re-place a window just made floating at its next commit: say it again.
            let _ = sway.swaymsg(&[&cmd]);
        }
        (bg && placed).then_some(shot)
    });
    assert_eq!(shot.left_out.map(|l| l.how), Some(mcec_desktop::types::LeftOutHow::Blanked));
    let at = |x: u32, y: u32| {
        let i = ((y * area.width + x) * 3) as usize;
        shot.image.pixels[i..i + 3].to_vec()
    };
    assert_eq!(at(150, 100), [0, 0, 0], "mcec's window shows in the capture");
    assert_eq!(at(10, 10), [0x33, 0x66, 0x99], "the background was blanked too");
    end(child);
}
