//! A stop that lands while the X11 backend waits to change the keymap (a character with no
//! key waits until no key event of mcec's is younger than 100 ms) must end the call there:
//! nothing is pressed after the wait. CI once caught a `type` that, stopped during that wait,
//! still typed one more character and counted it.
//!
//! The display is left with three spare keycodes, so the fourth character of a text that
//! needs spare keycodes forces a wait. The stop is set [`INTO_THE_WAIT`] after the window
//! shows the key that comes right before the wait: late enough that the call has passed its
//! own check between keys (well under a millisecond after that key), early enough to be
//! inside the 100 ms.

use std::thread;
use std::time::Duration;

use mcec_desktop::requests::{FocusRequest, KeyRequest, TypeRequest};
use mcec_rules::{ErrorCode, StopFlag};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use crate::common::{TestWin, Xvfb, typed};

const SPARE_LEFT: usize = 3;
const INTO_THE_WAIT: Duration = Duration::from_millis(30);
/// A keysym no text here uses, put on the spare keycodes the test takes away (F35).
const FILLER: u32 = 0xffe0;

/// Make all but `keep` of the display's spare keycodes (every column `NoSymbol`) non-spare.
fn leave_spare(raw: &RustConnection, keep: usize) {
    let s = raw.setup();
    let (min, max) = (s.min_keycode, s.max_keycode);
    let map = raw.get_keyboard_mapping(min, max - min + 1).unwrap().reply().unwrap();
    let per = usize::from(map.keysyms_per_keycode);
    let spare: Vec<u8> = (min..=max)
        .filter(|kc| *kc > 8)
        .filter(|kc| map.keysyms[usize::from(kc - min) * per..][..per].iter().all(|k| *k == 0))
        .collect();
    assert!(spare.len() > keep, "the display has only {} spare keycodes", spare.len());
    for kc in &spare[keep..] {
        raw.change_keyboard_mapping(1, *kc, map.keysyms_per_keycode, &vec![FILLER; per])
            .unwrap()
            .check()
            .unwrap();
    }
}

fn focused_window(x: &Xvfb, tools: &mcec_desktop::DesktopTools) -> TestWin {
    let win = TestWin::open(&x.display, &["--class", "Waiter"]);
    let req = FocusRequest {
        click_at: None,
        window: None,
        process: None,
        class_name: Some("waiter".into()),
        pid: None,
        handle: None,
        foreground: None,
    };
    assert!(tools.focus(&req, &StopFlag::new()).unwrap().window.foreground);
    win
}

#[test]
fn a_type_stopped_during_the_keymap_wait_types_nothing_more() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    leave_spare(&x.raw(), SPARE_LEFT);
    let win = focused_window(&x, &tools);

    // Positive control: without a stop, the fourth character arrives after the wait.
    let text = "一丁七万";
    tools.type_text(&TypeRequest { text: text.into() }, &StopFlag::new()).unwrap();
    assert_eq!(typed(&win, 4), text);
    win.drain(Duration::from_millis(300));

    let stop = StopFlag::new();
    let text = "丈三上下";
    let err = thread::scope(|s| {
        let typing = s.spawn(|| tools.type_text(&TypeRequest { text: text.into() }, &stop));
        assert_eq!(typed(&win, SPARE_LEFT), "丈三上", "the first three came");
        thread::sleep(INTO_THE_WAIT);
        stop.set();
        typing.join().unwrap()
    })
    .expect_err("the stop ended the call");
    assert_eq!(err.code, ErrorCode::EmergencyStopped);
    assert!(err.detail.ends_with("Typed 3 of 4 characters before the stop."), "{}", err.detail);
    let later: Vec<String> =
        win.drain(Duration::from_millis(500)).into_iter().filter(|l| l.starts_with("key ")).collect();
    assert!(later.is_empty(), "pressed after the stop: {later:?}");
}

#[test]
fn a_key_stopped_during_the_keymap_wait_presses_nothing_more() {
    let x = Xvfb::start();
    let dir = tempfile::tempdir().unwrap();
    let tools = x.tools(dir.path());
    leave_spare(&x.raw(), SPARE_LEFT);
    let win = focused_window(&x, &tools);
    // The three spare keycodes hold these now; a fourth character needs one of them back.
    tools.type_text(&TypeRequest { text: "一丁七".into() }, &StopFlag::new()).unwrap();
    assert_eq!(typed(&win, 3), "一丁七");
    win.drain(Duration::from_millis(300));

    // Positive control: `a` then a character with no keycode, both arrive.
    tools.key(&KeyRequest { keys: "a 万".into(), hold_ms: None }, &StopFlag::new()).unwrap();
    assert_eq!(typed(&win, 2), "a万");
    win.drain(Duration::from_millis(300));

    let stop = StopFlag::new();
    let err = thread::scope(|s| {
        let pressing = s.spawn(|| tools.key(&KeyRequest { keys: "b 丈".into(), hold_ms: None }, &stop));
        assert_eq!(typed(&win, 1), "b", "the first key came");
        thread::sleep(INTO_THE_WAIT);
        stop.set();
        pressing.join().unwrap()
    })
    .expect_err("the stop ended the call");
    assert_eq!(err.code, ErrorCode::EmergencyStopped);
    let later: Vec<String> =
        win.drain(Duration::from_millis(500)).into_iter().filter(|l| l.starts_with("key ")).collect();
    assert!(later.is_empty(), "pressed after the stop: {later:?}");
}
