//! The stop on a real sway: the physical chord latches, the same chord from a virtual
//! keyboard does not, a removed binding latches as tampering, and mcec's bindings are gone
//! after it stops.

mod common;

use std::time::Duration;

use common::{GUARD, Sway};
use mcec_desktop::monitor::{
    LastPhysicalInput, MonitorHandle, MonitorSink, MonitorStatus, ProvenanceMonitor,
};
use mcec_desktop_wayland::SwayMonitor;
use mcec_desktop_wayland::chord::Binding;
use mcec_desktop_wayland::ipc::Frame;
use mcec_rules::StopFlag;
use mcec_rules::hotkey::Hotkey;
use mcec_rules::latch::{Latch, StopReason, TripKind};

fn armed(sway: &Sway) -> (Latch, MonitorHandle) {
    let latch = Latch::new(StopFlag::new());
    let sink = MonitorSink::new(latch.clone(), Hotkey::default(), LastPhysicalInput::new());
    let handle = SwayMonitor::new(sway.swaysock.clone()).start(sink).expect("the sway stop arms");
    assert!(matches!(handle.status(), MonitorStatus::Running(_)), "{:?}", handle.status());
    (latch, handle)
}

/// The unbind command for the default chord on sway's Xvfb keyboard (any nonce: removal
/// does not name the command).
fn unbind_x11_keyboard() -> String {
    Binding::stop(&Hotkey::default(), "x").unbind("0:0:X11_keyboard")
}

#[test]
fn the_physical_chord_latches_and_an_injected_one_does_not() {
    let sway = Sway::start();
    // Positive control for the injected chord: a binding for every device, which sway fires
    // for the virtual keyboard (the per-device ones win for the keyboards they name).
    let mut events = sway.binding_events();
    let control =
        sway.swaymsg(&["bindsym --no-warn Ctrl+Mod1+Shift+s nop any-device-control"]).expect("swaymsg");
    assert!(control.status.success());
    let (latch, handle) = armed(&sway);
    let injected = sway.client(&[
        "wtype", "-M", "ctrl", "-M", "alt", "-M", "shift", "-k", "s", "-m", "shift", "-m", "alt", "-m",
        "ctrl",
    ]);
    assert!(injected.status.success(), "wtype: {}", String::from_utf8_lossy(&injected.stderr));
    // wtype ends after a round trip, so sway has handled its keys; one more IPC round trip
    // lets the monitor's thread read any binding event sway sent for them.
    let _ = sway.swaymsg(&["-t", "get_version"]);
    let fired = loop {
        match events.read_frame(Some(GUARD)).expect("binding event") {
            Some(Frame::Event(_, v)) => break v["binding"]["command"].as_str().unwrap_or("").to_string(),
            Some(Frame::Reply(_)) => {}
            None => panic!("wtype's chord fired no binding at all"),
        }
    };
    assert_eq!(fired, "nop any-device-control", "sway matched wtype's chord to the control binding only");
    assert!(!latch.is_stopped(), "a virtual keyboard's chord latched the stop");
    sway.physical_key("ctrl+alt+shift+s");
    let notice = latch.wait_for_trip_timeout(GUARD).expect("the physical chord latched");
    assert_eq!(notice.kind, TripKind::Engaged, "one trip, the physical one");
    assert_eq!(notice.trip.reason, StopReason::Chord("Ctrl+Alt+Shift+S".into()));
    assert!(handle.stop());
    let after = sway.swaymsg(&[&unbind_x11_keyboard()]).expect("swaymsg");
    assert!(
        !after.status.success(),
        "mcec left its binding behind: {}",
        String::from_utf8_lossy(&after.stdout)
    );
}

#[test]
fn a_removed_binding_latches_as_tampering() {
    let sway = Sway::start();
    let (latch, handle) = armed(&sway);
    let out = sway.swaymsg(&[&unbind_x11_keyboard()]).expect("swaymsg");
    assert!(
        out.status.success(),
        "mcec's binding was there to remove: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let notice = latch.wait_for_trip_timeout(GUARD).expect("the removal latched");
    match notice.trip.reason {
        StopReason::Tampering(why) => {
            assert!(why.contains("tampered") && why.contains("0:0:X11_keyboard"), "{why}")
        }
        other => panic!("latched for {other:?}"),
    }
    // The binding is back, so the operator's chord still stops.
    sway.physical_key("ctrl+alt+shift+s");
    let again = latch.wait_for_trip_timeout(GUARD).expect("the chord after the restore");
    assert_eq!(again.trip.reason, StopReason::Chord("Ctrl+Alt+Shift+S".into()));
    drop(handle);
}

#[test]
fn a_lost_sway_latches() {
    let mut sway = Sway::start();
    let (latch, handle) = armed(&sway);
    sway.stop_sway();
    let notice = latch.wait_for_trip_timeout(GUARD).expect("losing sway latched");
    assert!(
        matches!(notice.trip.reason, StopReason::Tampering(ref why) if why.contains("sway IPC lost")),
        "{:?}",
        notice.trip.reason
    );
    drop(handle);
}

#[test]
fn the_chord_stops_in_another_binding_mode_too() {
    let sway = Sway::start();
    let (latch, handle) = armed(&sway);
    let out = sway.swaymsg(&["mode other"]).expect("swaymsg");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    // The monitor binds in the new mode once it reads sway's `mode` event; the chord is
    // pressed until it latches, within the hang guard.
    let deadline = std::time::Instant::now() + GUARD;
    let notice = loop {
        sway.physical_key("ctrl+alt+shift+s");
        if let Some(n) = latch.wait_for_trip_timeout(Duration::from_millis(200)) {
            break n;
        }
        assert!(std::time::Instant::now() < deadline, "the chord never latched in mode `other`");
    };
    assert_eq!(notice.trip.reason, StopReason::Chord("Ctrl+Alt+Shift+S".into()));
    drop(handle);
}
