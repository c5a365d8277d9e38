//! The tool layer's stop and release rules, checked call by call on a scripted backend.

use mcec_desktop::keys::{Key, Modifier};
use mcec_desktop::requests::{ClickRequest, DragRequest, KeyRequest, SendCommandRequest, TypeRequest};
use mcec_desktop::{MouseButton, Point};
use mcec_rules::{ErrorCode, StopFlag};

use crate::common::mock::{Call, mock_tools};

fn drag(from: (i32, i32), to: (i32, i32)) -> DragRequest {
    DragRequest::between(Point::new(from.0, from.1), Point::new(to.0, to.1))
}

#[test]
fn stop_mid_drag_aborts_within_one_step_with_the_button_up() {
    let (mock, tools) = mock_tools();
    let stop = StopFlag::new();
    *mock.stop_on_move.lock().unwrap() = Some((5, stop.clone()));
    let err = tools.drag(&drag((0, 0), (600, 0)), &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::EmergencyStopped);
    assert!(err.detail.contains("after 5 of 51 points"), "{}", err.detail);
    let calls = mock.calls();
    let moves = calls.iter().filter(|c| matches!(c, Call::Move(_))).count();
    assert_eq!(moves, 5, "no point after the stop: {calls:?}");
    let press = calls.iter().position(|c| *c == Call::Button(MouseButton::Left, true)).unwrap();
    let release = calls.iter().rposition(|c| *c == Call::Button(MouseButton::Left, false));
    assert!(release.is_some_and(|r| r > press), "left button released: {calls:?}");
}

#[test]
fn a_drag_walks_every_point_and_releases() {
    let (mock, tools) = mock_tools();
    let res = tools.drag(&drag((10, 10), (130, 10)), &StopFlag::new()).unwrap();
    assert_eq!(res.points, 11);
    let calls = mock.calls();
    assert_eq!(calls.first(), Some(&Call::Move(Point::new(10, 10))));
    assert_eq!(calls.last(), Some(&Call::Button(MouseButton::Left, false)));
    assert!(calls.contains(&Call::Move(Point::new(130, 10))));
}

#[test]
fn a_stop_already_set_presses_nothing() {
    let (mock, tools) = mock_tools();
    let stop = StopFlag::new();
    stop.set();
    let click = ClickRequest::at(Point::new(5, 5));
    assert_eq!(tools.click(&click, &stop).unwrap_err().code, ErrorCode::EmergencyStopped);
    assert_eq!(tools.drag(&drag((0, 0), (50, 0)), &stop).unwrap_err().code, ErrorCode::EmergencyStopped);
    let key = KeyRequest { keys: "ctrl+a".into(), hold_ms: None };
    assert_eq!(tools.key(&key, &stop).unwrap_err().code, ErrorCode::EmergencyStopped);
    let text = TypeRequest { text: "abc".into() };
    assert_eq!(tools.type_text(&text, &stop).unwrap_err().code, ErrorCode::EmergencyStopped);
    assert!(mock.calls().is_empty(), "{:?}", mock.calls());
}

#[test]
fn a_failing_key_still_releases_the_modifiers_it_pressed() {
    let (mock, tools) = mock_tools();
    *mock.fail_key.lock().unwrap() = Some(Key::Char('t'));
    let req = KeyRequest { keys: "ctrl+shift+t".into(), hold_ms: None };
    let err = tools.key(&req, &StopFlag::new()).unwrap_err();
    assert_eq!(err.code, ErrorCode::Unavailable);
    let calls = mock.calls();
    for m in [Modifier::Ctrl, Modifier::Shift] {
        let down = calls.iter().position(|c| *c == Call::Key(Key::Modifier(m), true)).unwrap();
        let up = calls.iter().position(|c| *c == Call::Key(Key::Modifier(m), false));
        assert!(up.is_some_and(|u| u > down), "{m:?} released: {calls:?}");
    }
    assert_eq!(calls.last(), Some(&Call::ReleaseAll));
}

#[test]
fn bad_input_presses_nothing() {
    let (mock, tools) = mock_tools();
    let stop = StopFlag::new();
    let bad_keys = ["", "ctrl+nosuchkey", "a+b"];
    for keys in bad_keys {
        let err = tools.key(&KeyRequest { keys: keys.into(), hold_ms: None }, &stop).unwrap_err();
        assert_eq!(err.code, ErrorCode::BadArguments);
        assert!(err.detail.starts_with("`keys`"), "{}", err.detail);
    }
    let err = tools.type_text(&TypeRequest { text: "a\u{7}b".into() }, &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::BadArguments);
    assert!(err.detail.contains("U+0007"), "{}", err.detail);
    let err = tools.drag(&drag((0, 0), (5000, 0)), &stop).unwrap_err();
    assert!(err.detail.starts_with("`to`"), "{}", err.detail);
    let err = tools.drag(&drag((0, 0), (2000, 0)), &stop).unwrap_err();
    assert!(err.detail.starts_with("`to`") && err.detail.contains("no screen"), "{}", err.detail);
    assert!(mock.calls().is_empty(), "{:?}", mock.calls());
}

#[test]
fn key_holds_and_releases_in_reverse() {
    let (mock, tools) = mock_tools();
    let req = KeyRequest { keys: "ctrl+shift+t Return".into(), hold_ms: Some(1) };
    assert_eq!(tools.key(&req, &StopFlag::new()).unwrap().chords, 2);
    let ctrl = Key::Modifier(Modifier::Ctrl);
    let shift = Key::Modifier(Modifier::Shift);
    let t = Key::Char('t');
    let ret = Key::Named(mcec_desktop::keys::NamedKey::Common(mcec_rules::hotkey::NamedKey::Enter));
    assert_eq!(
        mock.calls(),
        vec![
            Call::Key(ctrl, true),
            Call::Key(shift, true),
            Call::Key(t, true),
            Call::Key(t, false),
            Call::Key(shift, false),
            Call::Key(ctrl, false),
            Call::Key(ret, true),
            Call::Key(ret, false),
        ]
    );
}

fn line(text: &str) -> SendCommandRequest {
    SendCommandRequest { command: text.parse().unwrap() }
}

#[test]
fn send_command_runs_each_kind_in_order_with_the_typed_tools_rules() {
    let (mock, tools) = mock_tools();
    let req =
        line("chars:a\\;; key:ctrl+s; mouse:click 10 20 right; mouse:move 5 6; pause:1; mouse:drag 0 0 24 0");
    assert_eq!(tools.send_command(&req, &StopFlag::new()).unwrap().ran, 6);
    let ctrl = Key::Modifier(Modifier::Ctrl);
    assert_eq!(
        mock.calls(),
        vec![
            Call::Key(Key::Char('a'), true),
            Call::Key(Key::Char('a'), false),
            Call::Key(Key::Char(';'), true),
            Call::Key(Key::Char(';'), false),
            Call::Key(ctrl, true),
            Call::Key(Key::Char('s'), true),
            Call::Key(Key::Char('s'), false),
            Call::Key(ctrl, false),
            Call::Move(Point::new(10, 20)),
            Call::Button(MouseButton::Right, true),
            Call::Button(MouseButton::Right, false),
            Call::Move(Point::new(5, 6)),
            Call::Move(Point::new(0, 0)),
            Call::Button(MouseButton::Left, true),
            Call::Move(Point::new(12, 0)),
            Call::Move(Point::new(24, 0)),
            Call::Button(MouseButton::Left, false),
        ]
    );
}

#[test]
fn a_stop_between_commands_drops_the_rest_and_says_how_many_ran() {
    let (mock, tools) = mock_tools();
    let stop = StopFlag::new();
    *mock.stop_on_move.lock().unwrap() = Some((1, stop.clone()));
    let err = tools.send_command(&line("mouse:move 1 1; mouse:move 2 2; chars:x"), &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::EmergencyStopped);
    assert!(err.detail.contains("Ran 1 of 3 commands"), "{}", err.detail);
    assert_eq!(mock.calls(), vec![Call::Move(Point::new(1, 1)), Call::StopSet, Call::ReleaseAll]);
    // The queue let go of the dropped commands: a full-size line is admitted again.
    let fifty = vec!["pause:0"; 50].join(";");
    assert_eq!(tools.send_command(&line(&fifty), &StopFlag::new()).unwrap().ran, 50);
}

#[test]
fn a_bad_or_oversized_line_runs_nothing() {
    let (mock, tools) = mock_tools();
    let stop = StopFlag::new();
    let err = tools.send_command(&line("chars:ok; mouse:click 5000 5"), &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::BadArguments);
    assert!(err.detail.starts_with("`command`: command 2: (5000, 5) lies on no screen"), "{}", err.detail);
    let err = tools.send_command(&line("chars:ok; key:ctrl+nosuchkey"), &stop).unwrap_err();
    assert!(err.detail.starts_with("`command`: command 2: key:"), "{}", err.detail);
    let err = tools.send_command(&line("mouse:drag 0 0 2000 0"), &stop).unwrap_err();
    assert!(err.detail.starts_with("`command`: command 1: (2000, 0)"), "{}", err.detail);
    let fifty_one = vec!["chars:x"; 51].join(";");
    let err = tools.send_command(&line(&fifty_one), &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::QueueFull);
    assert!(err.detail.contains("holds 51") && err.detail.contains("Nothing ran"), "{}", err.detail);
    assert!(mock.calls().is_empty(), "{:?}", mock.calls());
}

#[test]
fn a_slow_drag_is_still_stopped_before_the_next_point_with_the_button_up() {
    let (mock, tools) = mock_tools();
    let stop = StopFlag::new();
    let too_slow = DragRequest { duration_ms: Some(10_001), ..drag((0, 0), (100, 0)) };
    let err = tools.drag(&too_slow, &stop).unwrap_err();
    assert!(err.detail.starts_with("`durationMs`"), "{}", err.detail);
    assert!(mock.calls().is_empty());

    *mock.stop_on_move.lock().unwrap() = Some((3, stop.clone()));
    let slow = DragRequest { duration_ms: Some(10_000), ..drag((0, 0), (600, 0)) };
    let err = tools.drag(&slow, &stop).unwrap_err();
    assert!(err.detail.contains("after 3 of 51 points"), "{}", err.detail);
    let calls = mock.calls();
    assert_eq!(calls.iter().filter(|c| matches!(c, Call::Move(_))).count(), 3);
    assert_eq!(calls[calls.len() - 2..], [Call::Button(MouseButton::Left, false), Call::ReleaseAll]);
}

#[test]
fn no_call_plans_to_run_past_fifty_seconds() {
    let (mock, tools) = mock_tools();
    let stop = StopFlag::new();
    let eleven_pauses = ["pause:5000"; 11].join(";");
    let err = tools.send_command(&line(&eleven_pauses), &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::BadArguments);
    assert!(err.detail.contains("pauses 55000 ms"), "{}", err.detail);
    let ten_pauses = ["pause:0"; 10].join(";");
    assert_eq!(tools.send_command(&line(&ten_pauses), &stop).unwrap().ran, 10);
    let held = KeyRequest { keys: "a b c d e f".into(), hold_ms: Some(10_000) };
    let err = tools.key(&held, &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::BadArguments);
    assert!(err.detail.starts_with("`holdMs`"), "{}", err.detail);
    let wait = mcec_desktop::requests::WindowsRequest {
        condition: Some(mcec_desktop::requests::WaitCondition::Appears),
        timeout_ms: Some(50_001),
        ..Default::default()
    };
    assert_eq!(tools.windows(&wait, &stop).unwrap_err().code, ErrorCode::BadArguments);
    assert!(mock.calls().iter().all(|c| !matches!(c, Call::Key(..))), "{:?}", mock.calls());
}
