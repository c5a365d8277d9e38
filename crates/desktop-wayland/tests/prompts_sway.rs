//! The prompts' chords on a real sway: while the re-arm prompt is shown, the re-arm chord
//! from the virtual keyboard is reported as injected (and the rules refuse it), the same chord
//! from the physical keyboard is a physical press the rules count and the latch re-arms on;
//! with no prompt shown the chord presses nothing; every showing and every press gets a
//! fresh nonce; nothing is left bound after the monitor stops.

mod common;

use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use common::{GUARD, Sway};
use mcec_desktop::monitor::{
    ChordControls, Control, LastPhysicalInput, MonitorHandle, MonitorSink, ProvenanceMonitor,
};
use mcec_desktop_wayland::SwayMonitor;
use mcec_desktop_wayland::chord::Binding;
use mcec_desktop_wayland::ipc::{Frame, Ipc};
use mcec_rules::StopFlag;
use mcec_rules::activation::{Activation, ActivationRefusal, SHOW_SETTLE, activation_verdict};
use mcec_rules::hotkey::Hotkey;
use mcec_rules::latch::{Latch, StopReason};

const PHYSICAL_R: &str = "ctrl+alt+shift+r";
const INJECTED_R: [&str; 15] =
    ["wtype", "-M", "ctrl", "-M", "alt", "-M", "shift", "-k", "r", "-m", "shift", "-m", "alt", "-m", "ctrl"];

struct Armed {
    latch: Latch,
    ledger: LastPhysicalInput,
    controls: ChordControls,
    presses: Receiver<(Control, Activation)>,
    handle: MonitorHandle,
}

fn armed(sway: &Sway) -> Armed {
    let latch = Latch::new(StopFlag::new());
    let ledger = LastPhysicalInput::new();
    let controls = ChordControls::default();
    let (tx, presses) = mpsc::channel();
    controls.on_press(move |control, by| {
        let _ = tx.send((control, by));
    });
    let sink =
        MonitorSink::new(latch.clone(), Hotkey::default(), ledger.clone()).with_controls(controls.clone());
    let handle = SwayMonitor::new(sway.swaysock.clone()).start(sink).expect("the sway stop arms");
    assert_eq!(controls.offered(Control::Rearm).map(|c| c.to_string()).as_deref(), Some("Ctrl+Alt+Shift+R"));
    Armed { latch, ledger, controls, presses, handle }
}

/// Presses until the monitor reports a press (the binder binds a moment after the prompt
/// shows, or after the last press spent the nonce).
fn press_until_reported(presses: &Receiver<(Control, Activation)>, press: impl Fn()) -> Activation {
    let deadline = Instant::now() + GUARD;
    loop {
        press();
        if let Ok((control, by)) = presses.recv_timeout(Duration::from_millis(200)) {
            assert_eq!(control, Control::Rearm);
            return by;
        }
        assert!(Instant::now() < deadline, "the chord was never reported");
    }
}

/// The `nop` markers of every binding sway reported so far, in order.
fn fired(events: &mut Ipc, sway: &Sway) -> Vec<String> {
    // One round trip of another connection: sway has sent every event of what it handled.
    let _ = sway.swaymsg(&["-t", "get_version"]);
    let mut out = Vec::new();
    while let Ok(Some(frame)) = events.read_frame(Some(Duration::from_millis(100))) {
        if let Frame::Event(_, v) = frame {
            out.push(v["binding"]["command"].as_str().unwrap_or("").trim_start_matches("nop ").to_string());
        }
    }
    out
}

#[test]
fn the_rearm_chord_counts_only_from_the_physical_keyboard_while_the_prompt_is_shown() {
    let sway = Sway::start();
    let mut events = sway.binding_events();
    let a = armed(&sway);

    // No prompt: the chord is bound nowhere, so nothing fires; the stop chord after it is the
    // positive control (sway reports bindings in the order of the keys).
    sway.physical_key(PHYSICAL_R);
    sway.physical_key("ctrl+alt+shift+s");
    let notice = a.latch.wait_for_trip_timeout(GUARD).expect("the stop chord latched");
    assert_eq!(notice.trip.reason, StopReason::Chord("Ctrl+Alt+Shift+S".into()));
    let before = fired(&mut events, &sway);
    assert!(before.iter().all(|m| m.starts_with("mcec-stop-")), "{before:?}");
    assert!(a.presses.try_recv().is_err(), "a chord with no prompt shown pressed something");

    // The prompt is shown (long enough ago that a press is past the settle time).
    let shown = Instant::now().checked_sub(SHOW_SETTLE * 2).expect("a past instant");
    a.controls.shown(Control::Rearm, Some(shown));
    let injected = press_until_reported(&a.presses, || {
        let out = sway.client(&INJECTED_R);
        assert!(out.status.success(), "wtype: {}", String::from_utf8_lossy(&out.stderr));
    });
    let verdict = activation_verdict(&injected, |e| a.ledger.witness(e), None, Instant::now());
    assert!(matches!(verdict, Err(ActivationRefusal::Synthetic { .. })), "{verdict:?}");
    assert!(a.latch.is_stopped());

    let physical = press_until_reported(&a.presses, || sway.physical_key(PHYSICAL_R));
    assert_eq!(physical.shown_at, Some(shown));
    let judged = activation_verdict(&physical, |e| a.ledger.witness(e), None, Instant::now())
        .expect("the physical chord counts");
    a.latch.rearm(judged.attestation(a.ledger.last_tamper())).expect("the latch re-arms");
    assert!(!a.latch.is_stopped());

    // Shown again: a fresh nonce.
    a.controls.shown(Control::Rearm, None);
    a.controls.shown(Control::Rearm, Some(shown + Duration::from_millis(1)));
    press_until_reported(&a.presses, || sway.physical_key(PHYSICAL_R));
    a.controls.shown(Control::Rearm, None);
    let rearms: Vec<String> =
        fired(&mut events, &sway).into_iter().filter(|m| m.starts_with("mcec-re-arm-")).collect();
    assert_eq!(rearms.len(), 3, "one press each: injected, physical, physical again: {rearms:?}");
    assert!(rearms[0] != rearms[1] && rearms[1] != rearms[2] && rearms[0] != rearms[2], "{rearms:?}");

    assert!(a.handle.stop());
    let r = Hotkey::parse("Ctrl+Alt+Shift+R").expect("chord");
    for device in ["0:0:X11_keyboard", "0:0:virtual_keyboard"] {
        let unbind = Binding::prompt("re-arm", &r, "x").unbind(device);
        let after = sway.swaymsg(&[&unbind]).expect("swaymsg");
        assert!(!after.status.success(), "mcec left a re-arm binding on {device}");
    }
}

#[test]
fn a_removed_rearm_binding_is_tampering() {
    let sway = Sway::start();
    let a = armed(&sway);
    a.controls.shown(Control::Rearm, Some(Instant::now()));
    // Bound once a press is reported; the press spends its nonce, and the binding is made again.
    press_until_reported(&a.presses, || sway.physical_key(PHYSICAL_R));
    let r = Hotkey::parse("Ctrl+Alt+Shift+R").expect("chord");
    let unbind = Binding::prompt("re-arm", &r, "x").unbind("0:0:X11_keyboard");
    // Removed as soon as it is back (the binder binds again after the press).
    let deadline = Instant::now() + GUARD;
    while !sway.swaymsg(&[&unbind]).expect("swaymsg").status.success() {
        assert!(Instant::now() < deadline, "the re-arm binding never came back");
        std::thread::sleep(Duration::from_millis(20));
    }
    let notice = a.latch.wait_for_trip_timeout(GUARD).expect("the removal latched");
    match notice.trip.reason {
        StopReason::Tampering(why) => assert!(why.contains("re-arm binding"), "{why}"),
        other => panic!("latched for {other:?}"),
    }
    assert!(a.latch.last_tamper().is_some(), "a re-arm now refuses for the quiet period");
    drop(a.handle);
}
