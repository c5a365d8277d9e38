//! The platform-neutral half of every provenance source: what happens to a classified
//! event on the input thread.
//!
//! In order: note the press or release in the ledger, feed keys to the chord detector, engage the latch on
//! a fire, offer the event to the observer channel without blocking. [`Dispatcher::input`]
//! takes no lock, allocates nothing and wakes no thread, even on a fire: the fire only engages
//! the latch (atomics) and keeps the trip in a fixed array until the source calls
//! [`Dispatcher::announce`] outside its callback (a Windows hook must answer within
//! `LowLevelHooksTimeout`). Announcing sends the trip with its chord text and wakes the stop
//! worker, which logs. Tampering records its time and trips the latch at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;
use std::time::Instant;

use mcec_rules::chord::{ChordDetector, ChordStep, KeyEvent};
use mcec_rules::hotkey::Hotkey;
use mcec_rules::latch::{EngagedTrip, Latch, StopReason};

use super::{ChordControls, ClassifiedEvent, Input, LastPhysicalInput, MonitorEvent, Pressed, RawInput};

/// Where a provenance source delivers: the latch to trip, the chord to watch for, the ledger
/// to keep, the operator controls it may answer with chords of its own (only a source whose
/// windows cannot name their events uses them), and an optional observer (a bounded channel;
/// events are dropped when it is full).
#[derive(Debug, Clone)]
pub struct MonitorSink {
    pub latch: Latch,
    pub hotkey: Hotkey,
    pub ledger: LastPhysicalInput,
    pub controls: ChordControls,
    pub events: Option<SyncSender<MonitorEvent>>,
    pub stats: MonitorStats,
}

impl MonitorSink {
    pub fn new(latch: Latch, hotkey: Hotkey, ledger: LastPhysicalInput) -> Self {
        let controls = ChordControls::default();
        MonitorSink { latch, hotkey, ledger, controls, events: None, stats: MonitorStats::default() }
    }

    /// Shares `controls` with the core (which shows the prompts they press).
    pub fn with_controls(mut self, controls: ChordControls) -> Self {
        self.controls = controls;
        self
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

/// How many fires the input thread keeps between two announcements; more is a burst of
/// presses within one callback batch, and those share the last slot (the count stays exact).
const PENDING_CAP: usize = 4;

/// Fires engaged on the input thread and not yet announced. A fixed array, so a fire never
/// allocates.
#[derive(Debug, Default)]
struct PendingTrips {
    slots: [Option<EngagedTrip>; PENDING_CAP],
    len: usize,
    /// Fires past the capacity: each is announced again with the last slot's time.
    extra: u64,
}

impl PendingTrips {
    fn push(&mut self, t: EngagedTrip) {
        if self.len < PENDING_CAP {
            self.slots[self.len] = Some(t);
            self.len += 1;
        } else {
            self.slots[PENDING_CAP - 1] = Some(t);
            self.extra += 1;
        }
    }
}

/// Lives on the input thread; owns the chord detector. Dropping it announces what is pending.
#[derive(Debug)]
pub struct Dispatcher {
    sink: MonitorSink,
    detector: ChordDetector,
    chord_text: String,
    rearms_seen: u64,
    pending: PendingTrips,
}

impl Dispatcher {
    pub fn new(sink: MonitorSink) -> Self {
        let rearms_seen = sink.latch.rearm_count();
        Dispatcher {
            detector: ChordDetector::new(sink.hotkey),
            chord_text: sink.hotkey.to_string(),
            sink,
            rearms_seen,
            pending: PendingTrips::default(),
        }
    }

    pub fn sink(&self) -> &MonitorSink {
        &self.sink
    }

    /// Handles one classified event; true when it fired the chord (and so engaged the latch:
    /// call [`Dispatcher::announce`] once out of the callback).
    pub fn input(&mut self, ev: ClassifiedEvent) -> bool {
        let what = match ev.input {
            Input::Key { code, .. } => Pressed::Key(code),
            Input::Button(b) => Pressed::Button(b),
        };
        self.sink.ledger.record(RawInput {
            time: ev.time,
            what,
            down: ev.down,
            provenance: ev.provenance(),
            at: ev.at,
        });
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
                    self.pending.push(self.sink.latch.engage());
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

    /// Announces every fire engaged since the last call (the chord as the reason) and wakes the
    /// stop worker; returns how many. Call it outside the input callback: it may allocate,
    /// take the channel's lock and lose the CPU to the worker it wakes.
    pub fn announce(&mut self) -> u64 {
        let p = std::mem::take(&mut self.pending);
        let mut count = 0;
        for (i, trip) in p.slots.into_iter().take(p.len).flatten().enumerate() {
            let copies = if i + 1 == PENDING_CAP { 1 + p.extra } else { 1 };
            for _ in 0..copies {
                self.sink.latch.announce(trip, StopReason::Chord(self.chord_text.clone()));
                count += 1;
            }
        }
        count
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        self.announce();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcec_rules::StopFlag;
    use mcec_rules::chord::{Key, Side};
    use mcec_rules::hotkey::{MainKey, Modifier};
    use mcec_rules::latch::{RearmAttestation, RearmRefusal, TripKind};
    use std::time::Duration;

    fn key(key: Key, down: bool, physical: bool) -> ClassifiedEvent {
        ClassifiedEvent {
            input: Input::Key { key, code: 0 },
            down,
            physical,
            forged: false,
            source_device: 7,
            time: 0,
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
        assert_eq!(d.announce(), 1);
        assert!(ledger.snapshot().last_physical_press.is_some());
        assert!(latch.rearm(physical_now()).is_ok());
        // Modifiers are still physically "held" from before the re-arm, but the detector
        // was reset, so the main key alone does not fire.
        if let Some(s) = MainKey::letter('s') {
            d.input(key(Key::Main(s), true, true));
        }
        assert!(!latch.is_stopped());
    }

    #[test]
    fn a_fire_engages_at_once_and_wakes_the_worker_only_when_announced() {
        let (latch, mut d) = armed_dispatcher();
        chord(&mut d, true);
        assert!(latch.is_stopped() && latch.flag().is_set(), "tools are refused before the announcement");
        assert_eq!(latch.wait_for_trip_timeout(Duration::from_millis(1)), None, "nothing announced yet");
        assert_eq!(latch.rearm(physical_now()), Err(RearmRefusal::Busy), "the trip is on its way");
        assert_eq!(d.announce(), 1);
        let notice = latch.wait_for_trip_timeout(Duration::from_secs(5)).map(|n| (n.kind, n.trip.reason));
        assert_eq!(notice, Some((TripKind::Engaged, StopReason::Chord("Ctrl+Alt+Shift+S".into()))));
        assert_eq!(d.announce(), 0, "each fire is announced once");
        assert!(latch.rearm(physical_now()).is_ok());
    }

    #[test]
    fn a_burst_past_the_fixed_array_still_announces_every_fire() {
        let (latch, mut d) = armed_dispatcher();
        chord(&mut d, true);
        let Some(s) = MainKey::letter('s') else { return };
        let fires = PENDING_CAP as u64 + 3;
        for _ in 1..fires {
            d.input(key(Key::Main(s), true, true));
            d.input(key(Key::Main(s), false, true));
        }
        assert_eq!(d.announce(), fires);
        let record = latch.current().expect("stopped");
        assert_eq!(record.later_count, fires - 1, "the state machine counted every fire");
        assert!(latch.rearm(physical_now()).is_ok(), "no trip is left on its way");
    }

    #[test]
    fn dropping_the_dispatcher_announces_what_is_pending() {
        let (latch, mut d) = armed_dispatcher();
        chord(&mut d, true);
        drop(d);
        assert_eq!(
            latch.wait_for_trip_timeout(Duration::from_secs(5)).map(|n| n.kind),
            Some(TripKind::Engaged)
        );
    }

    /// A fresh armed latch and a dispatcher for the default chord feeding it.
    fn armed_dispatcher() -> (Latch, Dispatcher) {
        let latch = Latch::new(StopFlag::new());
        let d = Dispatcher::new(MonitorSink::new(latch.clone(), Hotkey::default(), LastPhysicalInput::new()));
        (latch, d)
    }

    fn physical_now() -> RearmAttestation {
        RearmAttestation { input_physical: true, input_at: Some(Instant::now()), last_tamper_at: None }
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
