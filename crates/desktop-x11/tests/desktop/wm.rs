//! The EWMH paths, with openbox managing the Xvfb: client list, active window, frame
//! extents and window-manager operations.

use std::time::Duration;

use mcec_desktop::Point;
use mcec_desktop::requests::{
    CaptureRequest, ClickRequest, FocusRequest, TypeRequest, WaitCondition, WindowAction, WindowRequest,
    WindowsRequest,
};
use mcec_rules::StopFlag;

use crate::common::{TestWin, Xvfb, typed};

fn op(action: WindowAction) -> WindowRequest {
    WindowRequest {
        action,
        x: Some(40),
        y: Some(60),
        width: Some(300),
        height: Some(200),
        window: None,
        process: None,
        class_name: Some("Managed".into()),
        pid: None,
        handle: None,
        foreground: None,
    }
}

#[test]
fn managed_windows_list_move_focus_and_take_input() {
    let x = Xvfb::start_with_wm();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    let stop = StopFlag::new();
    let win = TestWin::open(&x.display, &["--class", "Managed", "--title", "managed"]);

    // openbox adds a new window to its client list a moment after it is mapped: wait for it,
    // as an agent would.
    let appears = WindowsRequest {
        class_name: Some("managed".into()),
        condition: Some(WaitCondition::Appears),
        ..Default::default()
    };
    let listed = tools.windows(&appears, &stop).unwrap();
    assert_eq!(listed.windows.len(), 1, "openbox's own windows are not listed");
    assert_eq!(listed.windows[0].id, u64::from(win.id));

    let focused = tools
        .focus(
            &FocusRequest {
                click_at: None,
                window: None,
                process: None,
                class_name: Some("Managed".into()),
                pid: None,
                handle: None,
                foreground: None,
            },
            &stop,
        )
        .unwrap();
    assert!(focused.window.foreground);

    let moved = tools.window(&op(WindowAction::Move), &stop).unwrap();
    assert!(moved.confirmed, "{:?}", moved.window.bounds);
    assert_eq!((moved.window.bounds.unwrap().x, moved.window.bounds.unwrap().y), (40, 60));
    let resized = tools.window(&op(WindowAction::Resize), &stop).unwrap();
    assert!(resized.confirmed, "{:?}", resized.window.bounds);
    assert_eq!((resized.window.bounds.unwrap().width, resized.window.bounds.unwrap().height), (300, 200));

    // The capture of the window and window-relative clicks share one origin (the frame).
    let shot = tools
        .capture(&CaptureRequest { class_name: Some("Managed".into()), ..CaptureRequest::full_screen() })
        .unwrap();
    assert_eq!((shot.width, shot.height), (300, 200));
    let frame = resized.window.bounds.unwrap();
    let client_at = |l: &str| l.starts_with("press");
    let click = ClickRequest { class_name: Some("Managed".into()), ..ClickRequest::at(Point::new(150, 150)) };
    let res = tools.click(&click, &stop).unwrap();
    assert_eq!(res.at, Point::new(frame.x + 150, frame.y + 150));
    let press = win.wait_for(client_at).unwrap();
    let parts: Vec<i32> = press.split(' ').skip(2).take(2).map(|v| v.parse().unwrap()).collect();
    assert!(parts[0] > 0 && parts[0] <= 150 && parts[1] > 0 && parts[1] <= 150, "{press}");

    tools.type_text(&TypeRequest { text: "Ok✓".into() }, &stop).unwrap();
    assert_eq!(typed(&win, 3), "Ok✓");

    let min = tools.window(&op(WindowAction::Minimize), &stop).unwrap();
    assert!(min.confirmed && min.window.minimized);
    let restored = tools.window(&op(WindowAction::Restore), &stop).unwrap();
    assert!(restored.confirmed && !restored.window.minimized);
    let max = tools.window(&op(WindowAction::Maximize), &stop).unwrap();
    assert!(max.confirmed);
    assert!(max.window.bounds.unwrap().width > 1000, "{:?}", max.window.bounds);
    let fg = tools.window(&op(WindowAction::Foreground), &stop).unwrap();
    assert!(fg.window.foreground);
    drop(win);
    std::thread::sleep(Duration::from_millis(10));
}
