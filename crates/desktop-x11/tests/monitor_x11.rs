//! The X11 provenance monitor against real servers: an Xvfb "desk" with an Xephyr session
//! on it (see `monitor_support`). Physical = injected on the outer display; injected = on
//! the inner one; forged = an XI1 `DeviceKeyPress` aimed at Xephyr's own keyboard.

mod monitor_support;
mod xserver;

use std::sync::mpsc::{Receiver, sync_channel};
use std::time::{Duration, Instant};

use mcec_desktop::monitor::{
    Coverage, Input, Key, LastPhysicalInput, MonitorEvent, MonitorHandle, MonitorSink, MonitorStatus,
    ProvenanceMonitor,
};
use mcec_desktop_x11::X11Monitor;
use mcec_rules::StopFlag;
use mcec_rules::activation::{
    Activation, ActivationEvents, ActivationRefusal, InputEventId, Judged, Pressed, Provenance,
    activation_verdict,
};
use mcec_rules::hotkey::{Hotkey, MainKey};
use mcec_rules::latch::{Latch, StopReason, TripKind};
use monitor_support::{Harness, serial};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::xinput::{self, ConnectionExt as _};
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

const WAIT: Duration = Duration::from_secs(10);

struct Rig {
    h: Harness,
    latch: Latch,
    ledger: LastPhysicalInput,
    events: Receiver<MonitorEvent>,
    handle: Option<MonitorHandle>,
}

fn rig() -> Rig {
    let h = match Harness::start() {
        Ok(h) => h,
        Err(e) => panic!("harness: {e}"),
    };
    let latch = Latch::new(StopFlag::new());
    let ledger = LastPhysicalInput::new();
    let (tx, events) = sync_channel(50_000);
    let sink = MonitorSink::new(latch.clone(), Hotkey::default(), ledger.clone()).with_events(tx);
    let handle = X11Monitor::new(Some(&h.inner)).and_then(|m| m.start(sink));
    let handle = match handle {
        Ok(handle) => handle,
        Err(e) => panic!("monitor: {e}"),
    };
    Rig { h, latch, ledger, events, handle: Some(handle) }
}

fn f9() -> Key {
    Key::Main(MainKey::function(9).unwrap_or(MainKey::named(mcec_rules::hotkey::NamedKey::Pause)))
}

fn s_key() -> Key {
    Key::Main(MainKey::letter('s').unwrap_or(MainKey::named(mcec_rules::hotkey::NamedKey::Pause)))
}

/// Collects events until `pred` matches one (inclusive), or panics after [`WAIT`].
fn until(rx: &Receiver<MonitorEvent>, what: &str, pred: impl Fn(&MonitorEvent) -> bool) -> Vec<MonitorEvent> {
    let deadline = Instant::now() + WAIT;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(ev) => {
                let done = pred(&ev);
                seen.push(ev);
                if done {
                    return seen;
                }
            }
            Err(_) => panic!(
                "never saw {what}; saw {} events: {:?}",
                seen.len(),
                seen.iter().rev().take(5).collect::<Vec<_>>()
            ),
        }
    }
}

/// A physical F9 on the outer display, and every event up to it: the server delivers raw
/// events in order, so everything injected before it has been classified by then.
fn barrier(r: &Rig) -> Vec<MonitorEvent> {
    if let Err(e) = r.h.physical_key(&["F9"]) {
        panic!("{e}");
    }
    until(
        &r.events,
        "the physical F9 barrier",
        |e| matches!(e, MonitorEvent::Input(c) if c.physical && c.down && matches!(c.input, Input::Key { key, .. } if key == f9())),
    )
}

fn keydowns(events: &[MonitorEvent], key: Key, physical: bool) -> usize {
    events
        .iter()
        .filter(|e| {
            matches!(e, MonitorEvent::Input(c)
                if c.down && c.physical == physical && matches!(c.input, Input::Key { key: k, .. } if k == key))
        })
        .count()
}

#[test]
fn physical_chord_latches_and_injected_chord_does_not() {
    let _g = serial();
    let r = rig();
    assert_eq!(r.handle.as_ref().map(MonitorHandle::status), Some(MonitorStatus::Running(Coverage::Full)));

    r.h.injected_key(&["ctrl+alt+shift+s"]).unwrap_or_else(|e| panic!("{e}"));
    let seen = barrier(&r);
    assert_eq!(keydowns(&seen, s_key(), false), 1, "the injected S was seen and classified injected");
    assert_eq!(keydowns(&seen, s_key(), true), 0);
    assert!(!r.latch.is_stopped(), "an injected chord must not latch");

    r.h.physical_key(&["ctrl+alt+shift+s"]).unwrap_or_else(|e| panic!("{e}"));
    let notice = r.latch.wait_for_trip_timeout(WAIT);
    let notice = notice.unwrap_or_else(|| panic!("the physical chord did not latch"));
    assert_eq!(notice.kind, TripKind::Engaged);
    assert_eq!(notice.trip.reason, StopReason::Chord("Ctrl+Alt+Shift+S".into()));
    assert!(r.latch.is_stopped() && r.latch.flag().is_set());

    // A second physical chord while stopped is reported (it reopens the prompt).
    r.h.physical_key(&["ctrl+alt+shift+s"]).unwrap_or_else(|e| panic!("{e}"));
    let again = r.latch.wait_for_trip_timeout(WAIT).map(|n| n.kind);
    assert_eq!(again, Some(TripKind::Retriggered));
}

#[test]
fn a_thousand_injected_chords_never_latch() {
    let _g = serial();
    let r = rig();
    let chords = vec!["ctrl+alt+shift+s"; 1000];
    r.h.injected_key(&chords).unwrap_or_else(|e| panic!("{e}"));
    let seen = barrier(&r);
    assert_eq!(keydowns(&seen, s_key(), false), 1000, "every injected S was seen");
    assert!(!r.latch.is_stopped());
    assert_eq!(r.latch.wait_for_trip_timeout(Duration::from_millis(1)), None);
}

/// The forged XI1 event from a plain client of the inner display.
fn forge_device_key_press(display: &str) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let (conn, screen) = RustConnection::connect(Some(display)).map_err(|x| e(&x))?;
    let root = conn.setup().roots[screen].root;
    let xi = conn
        .extension_information(xinput::X11_EXTENSION_NAME)
        .map_err(|x| e(&x))?
        .ok_or("no XInputExtension")?;
    let devices = conn.xinput_xi_query_device(0u16).map_err(|x| e(&x))?.reply().map_err(|x| e(&x))?;
    let kbd = devices
        .infos
        .iter()
        .find(|d| String::from_utf8_lossy(&d.name).contains("Xephyr virtual keyboard"))
        .map(|d| d.deviceid)
        .ok_or("no Xephyr virtual keyboard")?;
    let setup = conn.setup();
    let (min, max) = (setup.min_keycode, setup.max_keycode);
    let map = conn.get_keyboard_mapping(min, max - min + 1).map_err(|x| e(&x))?.reply().map_err(|x| e(&x))?;
    let per = usize::from(map.keysyms_per_keycode);
    let idx = map.keysyms.chunks(per).position(|c| c.first() == Some(&xkeysym::key::s)).ok_or("no s key")?;
    let keycode = min + u8::try_from(idx).map_err(|x| e(&x))?;
    let dev = u8::try_from(kbd).map_err(|x| e(&x))?;
    conn.xtest_fake_input(xi.first_event + 1, keycode, 0, root, 0, 0, dev).map_err(|x| e(&x))?;
    conn.xtest_fake_input(xi.first_event + 2, keycode, 0, root, 0, 0, dev).map_err(|x| e(&x))?;
    conn.get_input_focus().map_err(|x| e(&x))?.reply().map_err(|x| e(&x))?;
    Ok(())
}

#[test]
fn forged_device_key_press_is_tampering_and_latches() {
    let _g = serial();
    let r = rig();
    forge_device_key_press(&r.h.inner).unwrap_or_else(|e| panic!("forging: {e}"));
    let notice = r.latch.wait_for_trip_timeout(WAIT).unwrap_or_else(|| panic!("forged input did not latch"));
    match &notice.trip.reason {
        StopReason::Tampering(d) => assert!(d.contains("DeviceKeyPress"), "{d}"),
        other => panic!("expected tampering, got {other:?}"),
    }
    until(&r.events, "the tampering event", |e| matches!(e, MonitorEvent::Tampering { .. }));
    assert!(r.ledger.snapshot().last_tamper.is_some());
    // And re-arm stays refused during the quiet period, even for a physical click.
    r.h.physical_click().unwrap_or_else(|e| panic!("{e}"));
    let click = click_of(&r.events, "the physical click", true);
    assert!(matches!(judge(&r, click), Err(ActivationRefusal::RecentTampering { .. })));
    assert!(r.latch.is_stopped());
}

/// The press and release of the next left click of this provenance, named as a window would
/// name them (by their server time).
fn click_of(rx: &Receiver<MonitorEvent>, what: &str, physical: bool) -> ActivationEvents {
    let id = |c: &mcec_desktop::monitor::ClassifiedEvent| InputEventId {
        time: c.time,
        what: Pressed::Button(1),
        down: c.down,
    };
    let found = |down: bool| {
        let seen = until(
            rx,
            what,
            |e| matches!(e, MonitorEvent::Input(c) if c.physical == physical && c.down == down && c.input == Input::Button(1)),
        );
        match seen.last() {
            Some(MonitorEvent::Input(c)) => id(c),
            other => panic!("{what}: {other:?}"),
        }
    };
    let press = found(true);
    let release = found(false);
    ActivationEvents::Click { press, release }
}

/// The activation rule over the ledger for a window shown long ago.
fn judge(r: &Rig, events: ActivationEvents) -> Result<Judged, ActivationRefusal> {
    let shown_at = Instant::now().checked_sub(Duration::from_secs(1));
    let act = Activation { events: Some(events), shown_at };
    activation_verdict(
        &act,
        |e| r.ledger.witness(e),
        r.ledger.last_tamper().max(r.latch.last_tamper()),
        Instant::now(),
    )
}

#[test]
fn clicks_are_attributed_and_only_a_physical_click_rearms() {
    let _g = serial();
    let r = rig();
    r.h.physical_key(&["ctrl+alt+shift+s"]).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.latch.wait_for_trip_timeout(WAIT).is_some(), "the physical chord latched");

    r.h.injected_click().unwrap_or_else(|e| panic!("{e}"));
    let injected = click_of(&r.events, "the injected click", false);
    assert!(r.ledger.snapshot().last_injected_button.is_some());
    let refused = judge(&r, injected);
    assert!(
        matches!(refused, Err(ActivationRefusal::Synthetic { provenance: Provenance::Injected, .. })),
        "{refused:?}"
    );
    assert!(r.latch.is_stopped());

    r.h.physical_click().unwrap_or_else(|e| panic!("{e}"));
    let physical = click_of(&r.events, "the physical click", true);
    let judged = judge(&r, physical).unwrap_or_else(|e| panic!("the physical click was refused: {e}"));
    let rearm = r.latch.rearm(judged.attestation(r.ledger.last_tamper()));
    assert!(rearm.is_ok(), "{rearm:?}");
    assert!(!r.latch.is_stopped() && !r.latch.flag().is_set());
}

#[test]
fn display_loss_is_reported_and_the_thread_ends() {
    let _g = serial();
    let mut r = rig();
    r.h.kill_inner();
    until(&r.events, "DisplayLost", |e| matches!(e, MonitorEvent::DisplayLost { .. }));
    let handle = r.handle.take().unwrap_or_else(|| panic!("no handle"));
    let deadline = Instant::now() + WAIT;
    while handle.is_running() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!handle.is_running(), "the monitor thread ended");
    assert!(matches!(handle.status(), MonitorStatus::DisplayLost(_)), "{:?}", handle.status());
    assert!(handle.stop());
    assert!(!r.latch.is_stopped(), "losing the display is not a stop");
}

#[test]
fn stopping_the_monitor_ends_it_promptly() {
    let _g = serial();
    let mut r = rig();
    let handle = r.handle.take().unwrap_or_else(|| panic!("no handle"));
    assert!(handle.is_running());
    assert!(handle.stop(), "the monitor threads ended when asked");
    // After stop, a physical chord no longer reaches a (stopped) monitor.
    r.h.physical_key(&["ctrl+alt+shift+s"]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.latch.wait_for_trip_timeout(Duration::from_millis(500)), None);
}

/// Presses the chord through the XTEST keyboard of the master named `master`, via XTEST
/// from a client whose client pointer is that master.
fn chord_via_master(display: &str, master: &str) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let (conn, screen) = RustConnection::connect(Some(display)).map_err(|x| e(&x))?;
    let root = conn.setup().roots[screen].root;
    conn.xinput_xi_query_version(2, 2).map_err(|x| e(&x))?.reply().map_err(|x| e(&x))?;
    let devices = conn.xinput_xi_query_device(0u16).map_err(|x| e(&x))?.reply().map_err(|x| e(&x))?;
    let pointer = devices
        .infos
        .iter()
        .find(|d| String::from_utf8_lossy(&d.name) == format!("{master} pointer"))
        .map(|d| d.deviceid)
        .ok_or("no new master pointer")?;
    conn.xinput_xi_set_client_pointer(0u32, pointer).map_err(|x| e(&x))?.check().map_err(|x| e(&x))?;
    let setup = conn.setup();
    let (min, max) = (setup.min_keycode, setup.max_keycode);
    let map = conn.get_keyboard_mapping(min, max - min + 1).map_err(|x| e(&x))?.reply().map_err(|x| e(&x))?;
    let per = usize::from(map.keysyms_per_keycode);
    let code = |sym: u32| -> Result<u8, String> {
        let i = map.keysyms.chunks(per).position(|c| c.first() == Some(&sym)).ok_or("unmapped")?;
        Ok(min + u8::try_from(i).map_err(|x| e(&x))?)
    };
    use xkeysym::key as k;
    let keys = [code(k::Control_L)?, code(k::Alt_L)?, code(k::Shift_L)?, code(k::s)?];
    for c in keys {
        conn.xtest_fake_input(2, c, 0, root, 0, 0, 0).map_err(|x| e(&x))?;
    }
    for c in keys.iter().rev() {
        conn.xtest_fake_input(3, *c, 0, root, 0, 0, 0).map_err(|x| e(&x))?;
    }
    conn.get_input_focus().map_err(|x| e(&x))?.reply().map_err(|x| e(&x))?;
    Ok(())
}

#[test]
fn hierarchy_changes_refresh_the_table_and_report_removed_devices() {
    let _g = serial();
    let r = rig();
    let run =
        |args: &[&str]| monitor_support::run_on(&r.h.inner, "xinput", args).unwrap_or_else(|e| panic!("{e}"));
    let s_source = |seen: &[MonitorEvent]| {
        seen.iter().find_map(|e| match e {
            MonitorEvent::Input(c)
                if !c.physical && c.down && matches!(c.input, Input::Key { key, .. } if key == s_key()) =>
            {
                Some(c.source_device)
            }
            _ => None,
        })
    };
    r.h.injected_key(&["s"]).unwrap_or_else(|e| panic!("{e}"));
    let core_xtest = s_source(&barrier(&r));
    assert!(core_xtest.is_some(), "an ordinary injected key is seen as injected");

    run(&["create-master", "agent"]);
    chord_via_master(&r.h.inner, "agent").unwrap_or_else(|e| panic!("{e}"));
    let new_xtest = s_source(&barrier(&r));
    assert!(new_xtest.is_some(), "the chord through the new master's XTEST keyboard was seen as injected");
    assert_ne!(new_xtest, core_xtest, "it came through the new XTEST device");
    assert!(!r.latch.is_stopped());

    run(&["remove-master", "agent pointer"]);
    until(&r.events, "a removed device", |e| matches!(e, MonitorEvent::DeviceRemoved { .. }));

    // The operator's keyboard still works after the hierarchy changes.
    r.h.physical_key(&["ctrl+alt+shift+s"]).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.latch.wait_for_trip_timeout(WAIT).is_some(), "the physical chord still latches");
}

#[test]
fn a_held_chord_with_server_autorepeat_latches_once() {
    let _g = serial();
    let r = rig();
    // The session's own server repeats held keys, as a real X server does.
    monitor_support::run_on(&r.h.inner, "xset", &["r", "on", "200", "30"]).unwrap_or_else(|e| panic!("{e}"));
    monitor_support::run_on(&r.h.outer, "xdotool", &["keydown", "ctrl+alt+shift+s"])
        .unwrap_or_else(|e| panic!("{e}"));
    std::thread::sleep(Duration::from_millis(800));
    monitor_support::run_on(&r.h.outer, "xdotool", &["keyup", "ctrl+alt+shift+s"])
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = barrier(&r);
    assert_eq!(keydowns(&seen, s_key(), true), 1, "one physical S press");
    assert_eq!(r.latch.wait_for_trip_timeout(WAIT).map(|n| n.kind), Some(TripKind::Engaged));
    assert_eq!(r.latch.wait_for_trip_timeout(Duration::from_millis(1)), None, "no second trip from repeats");
    assert_eq!(r.latch.current().map(|c| c.later_count), Some(0));
}

#[test]
fn without_record_the_status_says_best_effort() {
    let _g = serial();
    let h = Harness::lone(&["-extension", "RECORD"]).unwrap_or_else(|e| panic!("harness: {e}"));
    let sink = MonitorSink::new(Latch::new(StopFlag::new()), Hotkey::default(), LastPhysicalInput::new());
    let handle =
        X11Monitor::new(Some(&h.outer)).and_then(|m| m.start(sink)).unwrap_or_else(|e| panic!("{e}"));
    match handle.status() {
        MonitorStatus::Running(Coverage::BestEffort(why)) => assert!(why.contains("best effort"), "{why}"),
        other => panic!("expected best effort, got {other:?}"),
    }
    assert!(handle.status().to_string().contains("best effort"));
}

#[test]
fn no_server_is_a_clear_error() {
    let sink = MonitorSink::new(Latch::new(StopFlag::new()), Hotkey::default(), LastPhysicalInput::new());
    // Servers started by the tests pick low free numbers; nothing runs on this one.
    match X11Monitor::new(Some(":1999")).and_then(|m| m.start(sink)) {
        Err(e @ mcec_desktop::monitor::MonitorError::NoDisplay(_)) => {
            assert!(e.to_string().contains(":1999"))
        }
        other => panic!("expected NoDisplay, got {other:?}"),
    }
}
