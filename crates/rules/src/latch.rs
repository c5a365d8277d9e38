//! The emergency-stop latch: once tripped it stays stopped until the operator re-arms it
//! with physical input, and nothing else clears it.
//!
//! Two layers:
//! - [`StopState`] is the rule as a state machine. `Armed` accepts a trip; `Stopped` accepts
//!   more trips (each recorded, the state unchanged) and exactly one way out, a re-arm whose
//!   [`RearmAttestation`] passes [`rearm_verdict`]. Every transition consumes the state and
//!   returns the next one, and every `match` names every state.
//! - [`Latch`] is the shared handle. A trip has two halves. [`Latch::engage`] is what an input
//!   callback calls: one lock-free update of the latch word, one store to the [`StopFlag`], two
//!   clock reads; no lock, no allocation, no wake-up, so it cannot block or be preempted by the
//!   thread it wakes. [`Latch::announce`] (the input thread calls it once its callback has
//!   returned) hands the trip and its reason to the state machine and wakes the worker: two
//!   channel sends, which may allocate and take the channel's lock. [`Latch::trip`] does both.
//!   The state machine behind a mutex catches up with the trips whenever anyone else looks
//!   (query, re-arm). A worker thread blocks in [`Latch::wait_for_trip`] and does the slow
//!   work (audit line, release input, banner).
//!
//! The latch word holds the stopped bit and a trip counter; a re-arm clears the bit only with
//! a compare-and-swap against the word it checked, so a trip that lands during a re-arm is
//! never lost. There is deliberately no method that clears the latch without an attestation.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use crate::StopFlag;

/// How recent the input that pressed "Re-arm" must be.
pub const REARM_INPUT_MAX_AGE: Duration = Duration::from_secs(2);
/// How long after the last tampering a re-arm stays refused.
pub const TAMPER_QUIET_PERIOD: Duration = Duration::from_secs(10);
const HISTORY_CAP: usize = 32;
const LATER_REASONS_CAP: usize = 16;

/// Why the stop engaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The operator pressed the chord (its display form, e.g. `Ctrl+Alt+Shift+S`).
    Chord(String),
    /// The provenance monitor saw forged input (what it saw).
    Tampering(String),
    /// The durable stop record holds a stop this process did not latch itself: one recorded
    /// before it started, or by another mcec on the same display (why, in words).
    Recorded(String),
    /// The operator pressed one of mcec's own stop controls (which, in words: the host
    /// window's Stop). Stopping needs no proof of a physical hand, so no event is judged.
    Control(String),
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Chord(c) => write!(f, "operator pressed {c}"),
            StopReason::Tampering(d) => write!(f, "input tampering detected: {d}"),
            StopReason::Recorded(why) | StopReason::Control(why) => f.write_str(why),
        }
    }
}

/// One trip as the input thread reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trip {
    pub reason: StopReason,
    pub at: Instant,
    pub wall: SystemTime,
}

/// Whether a trip engaged the stop or hit an already stopped latch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TripKind {
    /// Armed -> Stopped: run the stop steps.
    Engaged,
    /// Already stopped: the operator pressed the chord again (reopen the re-arm prompt) or
    /// more tampering arrived.
    Retriggered,
}

/// A trip [`Latch::engage`]d but not yet [`Latch::announce`]d: plain data, so an input callback
/// can keep it without allocating.
#[must_use = "an engaged trip must be announced, or the worker never hears of it"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngagedTrip {
    pub kind: TripKind,
    pub at: Instant,
    pub wall: SystemTime,
}

/// What a worker blocked in [`Latch::wait_for_trip`] is woken with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TripNotice {
    pub kind: TripKind,
    pub trip: Trip,
}

/// One stop, from engagement to re-arm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopRecord {
    pub engaged: Trip,
    /// Trips while stopped, oldest first, the first `LATER_REASONS_CAP` kept.
    pub later: Vec<Trip>,
    /// All trips while stopped, including those not kept in `later`.
    pub later_count: u64,
    pub rearmed_at: Option<SystemTime>,
}

/// The provenance verdict about the input that pressed "Re-arm", built by the monitor side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RearmAttestation {
    /// Whether the most recent press (key or button) came from a physical device.
    pub input_physical: bool,
    /// When that press happened; `None` when no press was seen at all.
    pub input_at: Option<Instant>,
    /// When the monitor last saw tampering, if ever.
    pub last_tamper_at: Option<Instant>,
}

/// Why a re-arm was refused. `Display` is the sentence the prompt shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RearmRefusal {
    /// The latch is not stopped.
    NotStopped,
    /// The monitor saw no press at all.
    NoInputSeen,
    /// The press came from an injected (synthetic) source.
    NotPhysical,
    /// The press is older than [`REARM_INPUT_MAX_AGE`].
    Stale { age: Duration },
    /// The press happened before the stop engaged.
    BeforeStop,
    /// Tampering was seen less than [`TAMPER_QUIET_PERIOD`] ago.
    RecentTampering { ago: Duration },
    /// Another trip landed while the re-arm was being decided.
    StoppedAgain,
    /// A trip was still on its way from the input thread; try again.
    Busy,
}

impl fmt::Display for RearmRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RearmRefusal::NotStopped => f.write_str("the emergency stop is not engaged"),
            RearmRefusal::NoInputSeen => {
                f.write_str("no physical key or click was seen; re-arm with your own mouse or keyboard")
            }
            RearmRefusal::NotPhysical => f.write_str(
                "the re-arm was pressed by synthetic (injected) input; only your own mouse or keyboard can re-arm",
            ),
            RearmRefusal::Stale { age } => write!(
                f,
                "the last physical input is {:.1} s old; press Re-arm again with your own mouse or keyboard",
                age.as_secs_f64()
            ),
            RearmRefusal::BeforeStop => {
                f.write_str("the input came before the stop engaged; press Re-arm with your own mouse or keyboard")
            }
            RearmRefusal::RecentTampering { ago } => write!(
                f,
                "forged input was detected {:.0} s ago; wait {} s without tampering before re-arming",
                ago.as_secs_f64(),
                TAMPER_QUIET_PERIOD.as_secs()
            ),
            RearmRefusal::StoppedAgain => f.write_str("the stop was triggered again during the re-arm; still stopped"),
            RearmRefusal::Busy => f.write_str("a stop is still being recorded; try again"),
        }
    }
}

impl std::error::Error for RearmRefusal {}

/// The pure re-arm rule. `stopped_at` is when the stop engaged; `latch_tamper_at` is the
/// latest tampering the latch itself recorded (the later of it and the attestation's counts).
pub fn rearm_verdict(
    att: &RearmAttestation,
    stopped_at: Instant,
    latch_tamper_at: Option<Instant>,
    now: Instant,
) -> Result<(), RearmRefusal> {
    att.check(latch_tamper_at, Some(stopped_at), now).map_err(|refusal| match refusal {
        PressRefusal::RecentTampering { ago } => RearmRefusal::RecentTampering { ago },
        PressRefusal::NoInputSeen => RearmRefusal::NoInputSeen,
        PressRefusal::NotPhysical => RearmRefusal::NotPhysical,
        PressRefusal::BeforeStop => RearmRefusal::BeforeStop,
        PressRefusal::Stale { age } => RearmRefusal::Stale { age },
    })
}

/// Why an attested press is not the operator's own recent press.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PressRefusal {
    /// Tampering was seen less than [`TAMPER_QUIET_PERIOD`] ago.
    RecentTampering { ago: Duration },
    /// No press was seen at all.
    NoInputSeen,
    /// The press came from an injected (synthetic) source.
    NotPhysical,
    /// The press came before `not_before` (for a re-arm: before the stop engaged).
    BeforeStop,
    /// The press is older than [`REARM_INPUT_MAX_AGE`].
    Stale { age: Duration },
}

impl RearmAttestation {
    /// The one rule behind a re-arm and the provisioning opt-in, checked in this order: no
    /// tampering (the monitor's, or `tampered_at`) for [`TAMPER_QUIET_PERIOD`]; a press was
    /// seen; it was physical; it came no earlier than `not_before`; it is at most
    /// [`REARM_INPUT_MAX_AGE`] old.
    pub fn check(
        &self,
        tampered_at: Option<Instant>,
        not_before: Option<Instant>,
        now: Instant,
    ) -> Result<(), PressRefusal> {
        if let Some(t) = self.last_tamper_at.max(tampered_at) {
            let ago = now.saturating_duration_since(t);
            if ago < TAMPER_QUIET_PERIOD {
                return Err(PressRefusal::RecentTampering { ago });
            }
        }
        let Some(input_at) = self.input_at else {
            return Err(PressRefusal::NoInputSeen);
        };
        if !self.input_physical {
            return Err(PressRefusal::NotPhysical);
        }
        if not_before.is_some_and(|t| input_at < t) {
            return Err(PressRefusal::BeforeStop);
        }
        let age = now.saturating_duration_since(input_at);
        if age > REARM_INPUT_MAX_AGE {
            return Err(PressRefusal::Stale { age });
        }
        Ok(())
    }
}

/// The armed state: the chord is live and nothing is refused.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Armed;

/// The stopped state: everything is refused until an accepted re-arm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    record: Box<StopRecord>,
}

/// The latch as a state machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopState {
    Armed(Armed),
    Stopped(Stopped),
}

impl Armed {
    pub fn trip(self, trip: Trip) -> Stopped {
        Stopped {
            record: Box::new(StopRecord {
                engaged: trip,
                later: Vec::new(),
                later_count: 0,
                rearmed_at: None,
            }),
        }
    }
}

impl Stopped {
    /// A trip while stopped stays stopped; it is recorded.
    pub fn trip(mut self, trip: Trip) -> Stopped {
        self.record.later_count += 1;
        if self.record.later.len() < LATER_REASONS_CAP {
            self.record.later.push(trip);
        }
        self
    }

    /// `t` engaged the stop, but a later trip was applied first and opened the record: `t`
    /// becomes the trip that engaged it, and the other one the first of the later trips.
    fn opened_by(mut self, t: Trip) -> Stopped {
        let placeholder = std::mem::replace(&mut self.record.engaged, t);
        self.record.later_count += 1;
        self.record.later.insert(0, placeholder);
        self.record.later.truncate(LATER_REASONS_CAP);
        self
    }

    /// The one way out. On success returns the closed record with `rearmed_at` set.
    pub fn rearm(
        mut self,
        att: &RearmAttestation,
        latch_tamper_at: Option<Instant>,
        now: Instant,
        wall: SystemTime,
    ) -> Result<(Armed, StopRecord), (Stopped, RearmRefusal)> {
        match rearm_verdict(att, self.record.engaged.at, latch_tamper_at, now) {
            Ok(()) => {
                self.record.rearmed_at = Some(wall);
                Ok((Armed, *self.record))
            }
            Err(refusal) => Err((self, refusal)),
        }
    }

    pub fn record(&self) -> &StopRecord {
        &self.record
    }
}

impl StopState {
    pub fn trip(self, trip: Trip) -> StopState {
        match self {
            StopState::Armed(a) => StopState::Stopped(a.trip(trip)),
            StopState::Stopped(s) => StopState::Stopped(s.trip(trip)),
        }
    }

    pub fn is_stopped(&self) -> bool {
        match self {
            StopState::Armed(_) => false,
            StopState::Stopped(_) => true,
        }
    }
}

struct Core {
    state: StopState,
    applied: u64,
    last_tamper: Option<Instant>,
    history: VecDeque<StopRecord>,
    pending: Receiver<(TripKind, Trip)>,
}

struct Shared {
    /// bit 0: stopped; bits 1..: number of trips ever.
    word: AtomicU64,
    rearms: AtomicU64,
    flag: StopFlag,
    pending_tx: Sender<(TripKind, Trip)>,
    wake_tx: Sender<TripNotice>,
    core: Mutex<Core>,
    wake_rx: Mutex<Receiver<TripNotice>>,
    /// Trips whose steps the worker has finished; see [`Latch::settle`].
    settled: Mutex<u64>,
    settled_cv: Condvar,
}

/// The shared latch handle; clones share one latch.
#[derive(Clone)]
pub struct Latch(Arc<Shared>);

impl fmt::Debug for Latch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Latch").field("stopped", &self.is_stopped()).finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Latch {
    /// A fresh, armed latch that sets and clears `flag`.
    pub fn new(flag: StopFlag) -> Latch {
        flag.clear();
        let (pending_tx, pending) = mpsc::channel();
        let (wake_tx, wake_rx) = mpsc::channel();
        Latch(Arc::new(Shared {
            word: AtomicU64::new(0),
            rearms: AtomicU64::new(0),
            flag,
            pending_tx,
            wake_tx,
            core: Mutex::new(Core {
                state: StopState::Armed(Armed),
                applied: 0,
                last_tamper: None,
                history: VecDeque::new(),
                pending,
            }),
            wake_rx: Mutex::new(wake_rx),
            settled: Mutex::new(0),
            settled_cv: Condvar::new(),
        }))
    }

    /// The flag this latch sets.
    pub fn flag(&self) -> &StopFlag {
        &self.0.flag
    }

    /// Engages the stop and announces it at once: [`Latch::engage`] then [`Latch::announce`].
    pub fn trip(&self, reason: StopReason) -> TripKind {
        let engaged = self.engage();
        let kind = engaged.kind;
        self.announce(engaged, reason);
        kind
    }

    /// The half of a trip an input callback may do: from here every tool is refused and every
    /// abortable loop stops. Lock-free; allocates nothing and wakes nobody. Each engaged trip
    /// must reach [`Latch::announce`] exactly once: until it does, the worker sleeps and
    /// [`Latch::rearm`] answers [`RearmRefusal::Busy`].
    pub fn engage(&self) -> EngagedTrip {
        let (at, wall) = (Instant::now(), SystemTime::now());
        let before =
            self.0.word.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| Some(w.wrapping_add(2) | 1));
        let before = match before {
            Ok(w) | Err(w) => w,
        };
        self.0.flag.set();
        let kind = if before & 1 == 1 { TripKind::Retriggered } else { TripKind::Engaged };
        EngagedTrip { kind, at, wall }
    }

    /// Records an engaged trip with its reason and wakes the worker. Not for a hook callback:
    /// the sends may allocate, take the channel's lock and hand the CPU to the woken worker.
    pub fn announce(&self, engaged: EngagedTrip, reason: StopReason) {
        let EngagedTrip { kind, at, wall } = engaged;
        let trip = Trip { reason, at, wall };
        // Both receivers live as long as the senders (same Arc), so a send cannot fail.
        let _ = self.0.pending_tx.send((kind, trip.clone()));
        let _ = self.0.wake_tx.send(TripNotice { kind, trip });
    }

    /// True from the first trip until an accepted re-arm.
    pub fn is_stopped(&self) -> bool {
        self.0.word.load(Ordering::SeqCst) & 1 == 1
    }

    /// Counts accepted re-arms; the input thread compares it to reset its chord detector.
    pub fn rearm_count(&self) -> u64 {
        self.0.rearms.load(Ordering::SeqCst)
    }

    /// Blocks until the next trip (the worker's loop). `None` cannot happen while the latch
    /// exists (the sender lives beside the receiver); it is there instead of a panic.
    pub fn wait_for_trip(&self) -> Option<TripNotice> {
        lock(&self.0.wake_rx).recv().ok()
    }

    /// As [`Latch::wait_for_trip`], giving up after `timeout` (so a worker can notice shutdown).
    pub fn wait_for_trip_timeout(&self, timeout: Duration) -> Option<TripNotice> {
        lock(&self.0.wake_rx).recv_timeout(timeout).ok()
    }

    /// The worker finished the steps of one trip notice (the record, the audit line, the
    /// release). An exiting process waits for this with [`Latch::wait_settled`], so a stop
    /// pressed just before the client hangs up is still recorded and audited.
    pub fn settle(&self) {
        *lock(&self.0.settled) += 1;
        self.0.settled_cv.notify_all();
    }

    /// Waits until every trip engaged so far has settled, at most `timeout`; false on timeout.
    pub fn wait_settled(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut settled = lock(&self.0.settled);
        loop {
            let trips = self.0.word.load(Ordering::SeqCst) >> 1;
            if *settled >= trips {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            settled = self.0.settled_cv.wait_timeout(settled, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }

    /// Applies every trip counted in the latch word to the state machine.
    fn sync(&self, core: &mut Core) -> Result<u64, RearmRefusal> {
        let word = self.0.word.load(Ordering::SeqCst);
        let counted = word >> 1;
        while core.applied < counted {
            match core.pending.recv_timeout(Duration::from_millis(200)) {
                Ok((kind, t)) => apply(core, kind, t),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    return Err(RearmRefusal::Busy);
                }
            }
        }
        while let Ok((kind, t)) = core.pending.try_recv() {
            apply(core, kind, t);
        }
        Ok(word)
    }

    /// The current stop, if stopped.
    pub fn current(&self) -> Option<StopRecord> {
        let mut core = lock(&self.0.core);
        let _ = self.sync(&mut core);
        match &core.state {
            StopState::Armed(_) => None,
            StopState::Stopped(s) => Some(s.record().clone()),
        }
    }

    /// Closed stops, oldest first (the last few dozen).
    pub fn history(&self) -> Vec<StopRecord> {
        let mut core = lock(&self.0.core);
        let _ = self.sync(&mut core);
        core.history.iter().cloned().collect()
    }

    /// When the latch last recorded a tampering trip.
    pub fn last_tamper(&self) -> Option<Instant> {
        let mut core = lock(&self.0.core);
        let _ = self.sync(&mut core);
        core.last_tamper
    }

    /// The operator's re-arm. Accepted only when stopped and `att` passes [`rearm_verdict`];
    /// clears the flag and returns the closed stop record.
    pub fn rearm(&self, att: RearmAttestation) -> Result<StopRecord, RearmRefusal> {
        let mut core = lock(&self.0.core);
        let word = self.sync(&mut core)?;
        let now = Instant::now();
        let last_tamper = core.last_tamper;
        let state = std::mem::replace(&mut core.state, StopState::Armed(Armed));
        let stopped = match state {
            StopState::Armed(a) => {
                core.state = StopState::Armed(a);
                return Err(RearmRefusal::NotStopped);
            }
            StopState::Stopped(s) => s,
        };
        match stopped.rearm(&att, last_tamper, now, SystemTime::now()) {
            Err((s, refusal)) => {
                core.state = StopState::Stopped(s);
                Err(refusal)
            }
            Ok((armed, record)) => {
                let cleared =
                    self.0.word.compare_exchange(word, word & !1, Ordering::SeqCst, Ordering::SeqCst);
                if cleared.is_err() {
                    // A trip landed after the check: undo and stay stopped.
                    let mut record = record;
                    record.rearmed_at = None;
                    core.state = StopState::Stopped(Stopped { record: Box::new(record) });
                    let _ = self.sync(&mut core);
                    return Err(RearmRefusal::StoppedAgain);
                }
                self.0.flag.clear();
                // A trip between the swap and the clear must not lose its flag.
                if self.is_stopped() {
                    self.0.flag.set();
                }
                self.0.rearms.fetch_add(1, Ordering::SeqCst);
                core.state = StopState::Armed(armed);
                if core.history.len() == HISTORY_CAP {
                    core.history.pop_front();
                }
                core.history.push_back(record.clone());
                Ok(record)
            }
        }
    }
}

/// Applies one announced trip. Trips are announced in any order, so a trip that found the
/// latch already stopped may arrive before the one that stopped it; when that one arrives, it
/// takes its place as the trip that opened the stop.
fn apply(core: &mut Core, kind: TripKind, t: Trip) {
    core.applied += 1;
    if let StopReason::Tampering(_) = t.reason {
        core.last_tamper = core.last_tamper.max(Some(t.at));
    }
    let state = std::mem::replace(&mut core.state, StopState::Armed(Armed));
    core.state = match (state, kind) {
        // Within one stop only one trip finds the latch armed: this one opened the stop.
        (StopState::Stopped(s), TripKind::Engaged) => StopState::Stopped(s.opened_by(t)),
        (state, _) => state.trip(t),
    };
}

#[cfg(test)]
mod tests;
