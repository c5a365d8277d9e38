//! `WindowsMonitor` through mcec-desktop's `ProvenanceMonitor` seam, under Wine
//! (`scripts/windows-build --test`): armed means both hooks run and report `Running(Full)`;
//! injected chords (mcec's marked, another program's unmarked) reach the ledger as injected
//! and never trip the latch; stopping the handle ends the hook thread. The physical side (a
//! key from Wine's X server trips it) is `tests/windows/test_stop_wine.py`.

#![cfg(windows)]

use std::sync::mpsc;
use std::time::Duration;

use mcec_desktop::monitor::{
    Coverage, Input, LastPhysicalInput, MonitorEvent, MonitorSink, MonitorStatus, ProvenanceMonitor,
};
use mcec_desktop_windows::WindowsMonitor;
use mcec_desktop_windows::inject::{self, Mark};
use mcec_desktop_windows::vk::chord_strokes;
use mcec_rules::StopFlag;
use mcec_rules::hotkey::Hotkey;
use mcec_rules::latch::Latch;

#[test]
fn armed_monitor_sees_injected_chords_as_injected_and_never_trips() {
    let latch = Latch::new(StopFlag::new());
    let ledger = LastPhysicalInput::new();
    let (tx, rx) = mpsc::sync_channel(256);
    let sink = MonitorSink::new(latch.clone(), Hotkey::default(), ledger.clone()).with_events(tx);
    let handle = WindowsMonitor::new().and_then(|m| m.start(sink)).expect("the hooks install");
    assert_eq!(handle.status(), MonitorStatus::Running(Coverage::Full));
    assert!(handle.is_running());

    let strokes = chord_strokes(Hotkey::default());
    for mark in [Mark::Foreign, Mark::Mcec] {
        inject::send_keys(&strokes, mark).expect("SendInput");
        for (vk, down) in &strokes {
            // A hang guard, not a timed assertion.
            let ev = rx.recv_timeout(Duration::from_secs(30)).expect("the monitor reported nothing");
            let MonitorEvent::Input(ev) = ev else { panic!("{ev:?}") };
            assert!(matches!(ev.input, Input::Key { code, .. } if code == u32::from(*vk)), "{ev:?}");
            assert_eq!((ev.down, ev.physical), (*down, false), "{ev:?}");
        }
    }
    assert!(!latch.is_stopped(), "an injected chord tripped the stop");
    let seen = ledger.snapshot();
    assert!(seen.last_injected_press.is_some(), "the ledger saw the injected presses");
    assert_eq!(seen.last_physical_press, None);
    assert_eq!(handle.stats().events, 2 * strokes.len() as u64);
    assert!(handle.stop(), "the hook thread ended");
}
