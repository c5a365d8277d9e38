//! `scroll`, `mouse`, `wait` and modifiers on pointer actions, call by call on the scripted
//! backend: what is sent, in which order, and that everything pressed is let go.

use std::time::{Duration, Instant};

use mcec_desktop::keys::{Key, Modifier};
use mcec_desktop::requests::{ClickRequest, MouseAction, MouseRequest, ScrollRequest, WaitRequest};
use mcec_desktop::{MouseButton, Point, ScrollDirection};
use mcec_rules::{ErrorCode, StopFlag};

use crate::common::mock::{Call, mock_tools};

fn scroll(
    direction: ScrollDirection,
    notches: Option<u32>,
    modifiers: Option<Vec<Modifier>>,
) -> ScrollRequest {
    ScrollRequest { notches, modifiers, ..ScrollRequest::at(Point::new(40, 50), direction) }
}

fn mouse(action: MouseAction, at: Option<Point>) -> MouseRequest {
    MouseRequest::new(action, at)
}

#[test]
fn scroll_moves_then_turns_the_wheel_with_the_modifiers_held_only_meanwhile() {
    let (mock, tools) = mock_tools();
    let res =
        tools.scroll(&scroll(ScrollDirection::Down, Some(2), Some(vec![Modifier::Ctrl])), &StopFlag::new());
    assert_eq!(res.unwrap().notches, 2);
    let ctrl = Key::Modifier(Modifier::Ctrl);
    assert_eq!(
        mock.calls(),
        vec![
            Call::Move(Point::new(40, 50)),
            Call::Key(ctrl, true),
            Call::Scroll(ScrollDirection::Down),
            Call::Scroll(ScrollDirection::Down),
            Call::Key(ctrl, false),
        ]
    );
}

#[test]
fn bad_scrolls_send_nothing() {
    let (mock, tools) = mock_tools();
    for notches in [0, 51, u32::MAX] {
        let err =
            tools.scroll(&scroll(ScrollDirection::Up, Some(notches), None), &StopFlag::new()).unwrap_err();
        assert_eq!(err.code, ErrorCode::BadArguments);
        assert!(err.detail.starts_with("`notches`: must be 1 to 50"), "{}", err.detail);
    }
    let off_screen = ScrollRequest { at: Point::new(5000, 5), ..scroll(ScrollDirection::Up, None, None) };
    assert!(tools.scroll(&off_screen, &StopFlag::new()).unwrap_err().detail.starts_with("`at`"));
    assert!(mock.calls().is_empty(), "{:?}", mock.calls());
}

#[test]
fn a_stop_after_the_move_turns_no_notch_and_releases_the_modifiers() {
    let (mock, tools) = mock_tools();
    let stop = StopFlag::new();
    *mock.stop_on_move.lock().unwrap() = Some((1, stop.clone()));
    let err =
        tools.scroll(&scroll(ScrollDirection::Up, Some(5), Some(vec![Modifier::Shift])), &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::EmergencyStopped);
    let calls = mock.calls();
    assert!(!calls.iter().any(|c| matches!(c, Call::Scroll(_))), "{calls:?}");
    assert!(!calls.contains(&Call::Key(Key::Modifier(Modifier::Shift), true)), "{calls:?}");
}

#[test]
fn a_click_with_modifiers_presses_them_around_it_and_lets_go_even_on_failure() {
    let (mock, tools) = mock_tools();
    let req = ClickRequest {
        modifiers: Some(vec![Modifier::Shift, Modifier::Shift]),
        ..ClickRequest::at(Point::new(7, 8))
    };
    tools.click(&req, &StopFlag::new()).unwrap();
    let shift = Key::Modifier(Modifier::Shift);
    assert_eq!(
        mock.calls(),
        vec![
            Call::Key(shift, true),
            Call::Move(Point::new(7, 8)),
            Call::Button(MouseButton::Left, true),
            Call::Button(MouseButton::Left, false),
            Call::Key(shift, false),
        ],
        "a modifier named twice is pressed once"
    );

    let (mock, tools) = mock_tools();
    *mock.fail_key.lock().unwrap() = Some(Key::Modifier(Modifier::Alt));
    let req = ClickRequest {
        modifiers: Some(vec![Modifier::Ctrl, Modifier::Alt]),
        ..ClickRequest::at(Point::new(7, 8))
    };
    assert!(tools.click(&req, &StopFlag::new()).is_err());
    let calls = mock.calls();
    assert!(calls.contains(&Call::Key(Key::Modifier(Modifier::Ctrl), false)), "ctrl let go: {calls:?}");
    assert!(!calls.iter().any(|c| matches!(c, Call::Button(..))), "nothing clicked: {calls:?}");
}

#[test]
fn a_held_button_is_let_go_by_the_watchdog_unless_released_first() {
    let (mock, mut tools) = mock_tools();
    tools.set_hold_limit(Duration::from_millis(150));
    let stop = StopFlag::new();
    let down = tools.mouse(&mouse(MouseAction::Down, Some(Point::new(3, 4))), &stop).unwrap();
    assert_eq!(down.released_after_ms, Some(150));
    let release = Call::Button(MouseButton::Left, false);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !mock.calls().contains(&release) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(mock.calls().contains(&release), "the watchdog let go: {:?}", mock.calls());
    let up = tools.mouse(&mouse(MouseAction::Up, None), &stop).unwrap();
    assert_eq!(up.was_held, Some(false), "up after the watchdog says the button was no longer held");

    let (mock, mut tools) = mock_tools();
    tools.set_hold_limit(Duration::from_millis(150));
    tools.mouse(&mouse(MouseAction::Down, Some(Point::new(3, 4))), &stop).unwrap();
    assert_eq!(tools.mouse(&mouse(MouseAction::Up, None), &stop).unwrap().was_held, Some(true));
    std::thread::sleep(Duration::from_millis(400));
    let releases = mock.calls().iter().filter(|c| **c == release).count();
    assert_eq!(releases, 1, "released once, by `up`: {:?}", mock.calls());
}

#[test]
fn mouse_needs_a_point_to_move_or_press_and_position_moves_nothing() {
    let (mock, tools) = mock_tools();
    for action in [MouseAction::Move, MouseAction::Down] {
        let err = tools.mouse(&mouse(action, None), &StopFlag::new()).unwrap_err();
        assert_eq!(err.detail, "`at`: is required for this action");
    }
    let res = tools.mouse(&mouse(MouseAction::Position, None), &StopFlag::new()).unwrap();
    assert_eq!(res.at, Point::new(0, 0));
    assert!(mock.calls().is_empty(), "{:?}", mock.calls());
}

#[test]
fn mouse_move_walks_from_where_the_pointer_is() {
    let (mock, tools) = mock_tools();
    let req = MouseRequest { duration_ms: Some(30), ..mouse(MouseAction::Move, Some(Point::new(36, 0))) };
    tools.mouse(&req, &StopFlag::new()).unwrap();
    let moves: Vec<Call> = mock.calls();
    assert_eq!(moves.first(), Some(&Call::Move(Point::new(0, 0))));
    assert_eq!(moves.last(), Some(&Call::Move(Point::new(36, 0))));
    assert!(moves.iter().all(|c| matches!(c, Call::Move(_))), "no button: {moves:?}");
}

#[test]
fn wait_is_bounded_and_ends_on_the_stop() {
    let (_, tools) = mock_tools();
    for ms in [0, 30_001] {
        let err = tools.wait(&WaitRequest { ms }, &StopFlag::new()).unwrap_err();
        assert_eq!(err.detail, "`ms`: must be 1 to 30000");
    }
    assert_eq!(tools.wait(&WaitRequest { ms: 20 }, &StopFlag::new()).unwrap().waited_ms, 20);
    let stop = StopFlag::new();
    stop.set();
    let err = tools.wait(&WaitRequest { ms: 30_000 }, &stop).unwrap_err();
    assert_eq!(err.code, ErrorCode::EmergencyStopped);
}
