//! The platform-neutral half of every provenance source: what happens to a classified
//! event on the input thread.
//!
//! In order: note a press in the ledger, feed keys to the chord detector, trip the latch on a
//! fire, offer the event to the observer channel without blocking. Tampering records its time
//! and trips the latch. Nothing here allocates on the hot path except the chord text on a
//! fire, and nothing logs: the latch wakes a worker for that.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;
use std::time::Instant;

use mcec_rules::chord::{ChordDetector, ChordStep, KeyEvent};
use mcec_rules::hotkey::Hotkey;
use mcec_rules::latch::{Latch, StopReason};

use super::{ClassifiedEvent, Input, LastPhysicalInput, MonitorEvent};

/// Where a provenance source delivers: the latch to trip, the chord to watch for, the ledger
/// to keep, and an optional observer (a bounded channel; events are dropped when it is full).
#[derive(Debug, Clone)]
pub struct MonitorSink {
    pub latch: Latch,
    pub hotkey: Hotkey,
    pub ledger: LastPhysicalInput,
    pub events: Option<SyncSender<MonitorEvent>>,
    pub stats: MonitorStats,
}

impl MonitorSink {
    pub fn new(latch: Latch, hotkey: Hotkey, ledger: LastPhysicalInput) -> Self {
        MonitorSink { latch, hotkey, ledger, events: None, stats: MonitorStats::default() }
    }

    /// Adds an observer channel.
    pub fn with_events(mut self, tx: SyncSender<MonitorEvent>) -> Self {
        self.events = Some(tx);
        self
    }

    fn offer(&self, ev: MonitorEvent) {
        if let Some(tx) = &self.events {
            let _ = tx.try_send(ev);
        }
    }

    /// Forged input: trip first, then record, then tell the observer. Callable from any thread.
    pub fn tampering(&self, detail: String) {
        let at = Instant::now();
        self.latch.trip(StopReason::Tampering(detail.clone()));
        self.ledger.record_tamper(at);
        self.offer(MonitorEvent::Tampering { detail, at });
    }

    /// The display went away.
    pub fn display_lost(&self, detail: String) {
        self.offer(MonitorEvent::DisplayLost { detail });
    }
}

/// Time the input thread spends per event (shared with the handle).
#[derive(Debug, Clone, Default)]
pub struct MonitorStats(Arc<StatsInner>);

#[derive(Debug, Default)]
struct StatsInner {
    events: AtomicU64,
    total_nanos: AtomicU64,
    max_nanos: AtomicU64,
}

/// A copy of the per-event timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatsSnapshot {
    pub events: u64,
    pub total_nanos: u64,
    pub max_nanos: u64,
}

impl MonitorStats {
    /// Adds one event that took `nanos` on the input thread.
    pub fn add(&self, nanos: u64) {
        self.0.events.fetch_add(1, Ordering::Relaxed);
        self.0.total_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.0.max_nanos.fetch_max(nanos, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            events: self.0.events.load(Ordering::Relaxed),
            total_nanos: self.0.total_nanos.load(Ordering::Relaxed),
            max_nanos: self.0.max_nanos.load(Ordering::Relaxed),
        }
    }
}

/// Lives on the input thread; owns the chord detector.
#[derive(Debug)]
pub struct Dispatcher {
    sink: MonitorSink,
    detector: ChordDetector,
    chord_text: String,
    rearms_seen: u64,
}

impl Dispatcher {
    pub fn new(sink: MonitorSink) -> Self {
        let rearms_seen = sink.latch.rearm_count();
        Dispatcher {
            detector: ChordDetector::new(sink.hotkey),
            chord_text: sink.hotkey.to_string(),
            sink,
            rearms_seen,
        }
    }

    pub fn sink(&self) -> &MonitorSink {
        &self.sink
    }

    /// Handles one classified event; true when it fired the chord (and so tripped the latch).
    pub fn input(&mut self, ev: ClassifiedEvent) -> bool {
        if ev.down {
            match ev.input {
                Input::Key { .. } => self.sink.ledger.record_press(ev.physical, false, ev.at),
                Input::Button(1..=3) => self.sink.ledger.record_press(ev.physical, true, ev.at),
                Input::Button(_) => {}
            }
        }
        let mut fired = false;
        if let Input::Key { key, .. } = ev.input {
            let rearms = self.sink.latch.rearm_count();
            if rearms != self.rearms_seen {
                // Re-arm starts the operator from a clean slate.
                self.rearms_seen = rearms;
                self.detector.reset();
            }
            let kev = KeyEvent { key, down: ev.down, physical: ev.physical, device: ev.source_device };
            match self.detector.feed(&kev) {
                ChordStep::Fired => {
                    self.sink.latch.trip(StopReason::Chord(self.chord_text.clone()));
                    fired = true;
                }
                ChordStep::Quiet => {}
            }
        }
        self.sink.offer(MonitorEvent::Input(ev));
        fired
    }

    /// A source device went away: forget what it held.
    pub fn device_removed(&mut self, device: u16) {
        self.detector.forget_device(device);
        self.sink.offer(MonitorEvent::DeviceRemoved { device });
    }

    /// Records the time one event took on the input thread.
    pub fn account(&self, started: Instant) {
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.sink.stats.add(nanos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcec_rules::StopFlag;
    use mcec_rules::chord::{Key, Side};
    use mcec_rules::hotkey::{MainKey, Modifier};
    use mcec_rules::latch::RearmAttestation;

    fn key(key: Key, down: bool, physical: bool) -> ClassifiedEvent {
        ClassifiedEvent {
            input: Input::Key { key, code: 0 },
            down,
            physical,
            source_device: 7,
            at: Instant::now(),
        }
    }

    fn chord(d: &mut Dispatcher, physical: bool) {
        for m in [Modifier::Ctrl, Modifier::Alt, Modifier::Shift] {
            d.input(key(Key::Modifier(m, Side::Left), true, physical));
        }
        if let Some(s) = MainKey::letter('s') {
            d.input(key(Key::Main(s), true, physical));
            d.input(key(Key::Main(s), false, physical));
        }
    }

    #[test]
    fn physical_chord_trips_injected_does_not_and_rearm_resets_the_detector() {
        let latch = Latch::new(StopFlag::new());
        let ledger = LastPhysicalInput::new();
        let mut d = Dispatcher::new(MonitorSink::new(latch.clone(), Hotkey::default(), ledger.clone()));
        chord(&mut d, false);
        assert!(!latch.is_stopped());
        chord(&mut d, true);
        assert!(latch.is_stopped());
        assert!(ledger.attest().input_physical);
        let att = RearmAttestation { input_at: Some(Instant::now()), ..ledger.attest() };
        assert!(latch.rearm(att).is_ok());
        // Modifiers are still physically "held" from before the re-arm, but the detector
        // was reset, so the main key alone does not fire.
        if let Some(s) = MainKey::letter('s') {
            d.input(key(Key::Main(s), true, true));
        }
        assert!(!latch.is_stopped());
    }

    #[test]
    fn tampering_trips_and_is_recorded() {
        let latch = Latch::new(StopFlag::new());
        let ledger = LastPhysicalInput::new();
        let sink = MonitorSink::new(latch.clone(), Hotkey::default(), ledger.clone());
        sink.tampering("forged key".into());
        assert!(latch.is_stopped());
        assert!(ledger.snapshot().last_tamper.is_some());
    }
}
