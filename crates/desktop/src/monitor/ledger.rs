//! The provenance monitor's memory, read by the operator's safety decisions: a small ring of
//! the latest raw presses and releases (time, button or key, provenance, arrival), and when
//! tampering was last seen.
//!
//! A re-arm, a consent prompt's `Allow` or the provisioning opt-in is judged on the one event
//! that activated the control (`mcec_rules::activation`): the window names it by its platform
//! time and button or key, and [`LastPhysicalInput::witness`] says whether a physical raw
//! event with that identity arrived, and whether a synthetic one shares its time. The
//! "latest press" times of [`InputSnapshot`] are facts for diagnostics and benches; no
//! decision rests on them.
//!
//! Written on the input thread for every press and release, so it is lock-free and never
//! allocates: each ring slot is a sequence word and two data words (a seqlock over atomics),
//! each time an atomic count of nanoseconds since the ledger was made (0 = never).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use mcec_rules::activation::{InputEventId, Pressed, Provenance, Witness};

/// How many raw presses and releases the ring remembers (see `docs/decisions.md`).
pub const RAW_RING_SIZE: usize = 256;

/// One raw press or release as the monitor classified it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawInput {
    /// The platform's event time (X11: the server timestamp of the raw event).
    pub time: u32,
    pub what: Pressed,
    pub down: bool,
    pub provenance: Provenance,
    /// When the monitor thread received it.
    pub at: Instant,
}

#[derive(Debug, Default)]
struct Slot {
    /// Odd while being written; bumped twice per write.
    seq: AtomicU64,
    /// time (bits 32..64), code (bits 8..32), flags (bits 0..8, see `pack`).
    word: AtomicU64,
    /// Arrival, encoded like every time here.
    at: AtomicU64,
}

#[derive(Debug)]
struct Times {
    base: Instant,
    physical_press: AtomicU64,
    injected_press: AtomicU64,
    physical_button: AtomicU64,
    injected_button: AtomicU64,
    tamper: AtomicU64,
    next: AtomicU64,
    ring: [Slot; RAW_RING_SIZE],
}

/// Shared, cheaply clonable record of recent input (keys and buttons).
#[derive(Debug, Clone)]
pub struct LastPhysicalInput(Arc<Times>);

/// A point-in-time copy of the ledger's "latest" times (diagnostics; no verdict uses them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InputSnapshot {
    pub last_physical_press: Option<Instant>,
    pub last_injected_press: Option<Instant>,
    pub last_physical_button: Option<Instant>,
    pub last_injected_button: Option<Instant>,
    pub last_tamper: Option<Instant>,
}

impl Default for LastPhysicalInput {
    fn default() -> Self {
        Self::new()
    }
}

const VALID: u64 = 1 << 7;
const DOWN: u64 = 1;
const KEY: u64 = 1 << 1;
const CODE_MAX: u32 = 0x00ff_ffff;

fn pack(raw: &RawInput) -> u64 {
    let (code, key) = match raw.what {
        Pressed::Button(b) => (b, 0),
        Pressed::Key(k) => (k, KEY),
    };
    let prov = match raw.provenance {
        Provenance::Physical => 0,
        Provenance::Injected => 1,
        Provenance::Forged => 2,
    };
    (u64::from(raw.time) << 32)
        | (u64::from(code.min(CODE_MAX)) << 8)
        | (prov << 2)
        | key
        | if raw.down { DOWN } else { 0 }
        | VALID
}

/// The identity and provenance of a packed slot; `None` for an empty one.
fn unpack(word: u64) -> Option<(InputEventId, Provenance)> {
    if word & VALID == 0 {
        return None;
    }
    let time = (word >> 32) as u32;
    let code = ((word >> 8) as u32) & CODE_MAX;
    let what = if word & KEY != 0 { Pressed::Key(code) } else { Pressed::Button(code) };
    let provenance = match (word >> 2) & 3 {
        0 => Provenance::Physical,
        1 => Provenance::Injected,
        _ => Provenance::Forged,
    };
    Some((InputEventId { time, what, down: word & DOWN != 0 }, provenance))
}

impl LastPhysicalInput {
    pub fn new() -> Self {
        LastPhysicalInput(Arc::new(Times {
            base: Instant::now(),
            physical_press: AtomicU64::new(0),
            injected_press: AtomicU64::new(0),
            physical_button: AtomicU64::new(0),
            injected_button: AtomicU64::new(0),
            tamper: AtomicU64::new(0),
            next: AtomicU64::new(0),
            ring: std::array::from_fn(|_| Slot::default()),
        }))
    }

    fn encode(&self, at: Instant) -> u64 {
        let nanos = at.saturating_duration_since(self.0.base).as_nanos();
        u64::try_from(nanos).unwrap_or(u64::MAX - 1).saturating_add(1)
    }

    fn decode(&self, v: u64) -> Option<Instant> {
        (v != 0).then(|| self.0.base + std::time::Duration::from_nanos(v - 1))
    }

    fn bump(slot: &AtomicU64, v: u64) {
        slot.fetch_max(v, Ordering::SeqCst);
    }

    /// Records one raw press or release: into the ring, and (presses of keys and buttons 1-3)
    /// into the "latest" times. Lock-free, allocation-free; one writer at a time (the input
    /// thread).
    pub fn record(&self, raw: RawInput) {
        let t = &self.0;
        let v = self.encode(raw.at);
        let index =
            usize::try_from(t.next.fetch_add(1, Ordering::SeqCst) % RAW_RING_SIZE as u64).unwrap_or(0);
        let slot = &t.ring[index];
        slot.seq.fetch_add(1, Ordering::SeqCst);
        slot.word.store(pack(&raw), Ordering::SeqCst);
        slot.at.store(v, Ordering::SeqCst);
        slot.seq.fetch_add(1, Ordering::SeqCst);
        if !raw.down {
            return;
        }
        let physical = raw.provenance == Provenance::Physical;
        match raw.what {
            Pressed::Key(_) => Self::bump(if physical { &t.physical_press } else { &t.injected_press }, v),
            Pressed::Button(1..=3) => {
                Self::bump(if physical { &t.physical_press } else { &t.injected_press }, v);
                Self::bump(if physical { &t.physical_button } else { &t.injected_button }, v);
            }
            Pressed::Button(_) => {}
        }
    }

    pub fn record_tamper(&self, at: Instant) {
        Self::bump(&self.0.tamper, self.encode(at));
    }

    /// When tampering was last seen.
    pub fn last_tamper(&self) -> Option<Instant> {
        self.decode(self.0.tamper.load(Ordering::SeqCst))
    }

    /// One consistent read of a slot, or `None` for an empty slot or one being rewritten
    /// (after a few tries).
    fn read(&self, slot: &Slot) -> Option<(InputEventId, Provenance, Instant)> {
        for _ in 0..4 {
            let before = slot.seq.load(Ordering::SeqCst);
            if !before.is_multiple_of(2) {
                std::hint::spin_loop();
                continue;
            }
            let word = slot.word.load(Ordering::SeqCst);
            let at = slot.at.load(Ordering::SeqCst);
            if slot.seq.load(Ordering::SeqCst) == before {
                let (id, provenance) = unpack(word)?;
                return Some((id, provenance, self.decode(at)?));
            }
        }
        None
    }

    /// What the ring says about the event `id`: when a physical raw event with its time,
    /// button or key and direction arrived, and the worst provenance of any synthetic raw
    /// event with its time.
    pub fn witness(&self, id: &InputEventId) -> Witness {
        let mut seen = Witness::default();
        for slot in &self.0.ring {
            let Some((raw, provenance, at)) = self.read(slot) else { continue };
            if raw.time != id.time {
                continue;
            }
            match provenance {
                Provenance::Physical if raw == *id => {
                    seen.physical = Some(seen.physical.map_or(at, |p| p.min(at)));
                }
                Provenance::Physical => {}
                synthetic => seen.synthetic = seen.synthetic.max(Some(synthetic)),
            }
        }
        seen
    }

    pub fn snapshot(&self) -> InputSnapshot {
        let t = &self.0;
        let get = |a: &AtomicU64| self.decode(a.load(Ordering::SeqCst));
        InputSnapshot {
            last_physical_press: get(&t.physical_press),
            last_injected_press: get(&t.injected_press),
            last_physical_button: get(&t.physical_button),
            last_injected_button: get(&t.injected_button),
            last_tamper: get(&t.tamper),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn raw(time: u32, what: Pressed, down: bool, provenance: Provenance, at: Instant) -> RawInput {
        RawInput { time, what, down, provenance, at }
    }

    fn id(time: u32, what: Pressed, down: bool) -> InputEventId {
        InputEventId { time, what, down }
    }

    #[test]
    fn the_ring_finds_the_event_by_time_button_and_direction() {
        let l = LastPhysicalInput::new();
        let t0 = Instant::now();
        let left = Pressed::Button(1);
        l.record(raw(100, left, true, Provenance::Physical, t0));
        l.record(raw(180, left, false, Provenance::Physical, t0 + Duration::from_millis(80)));
        assert_eq!(l.witness(&id(100, left, true)), Witness { physical: Some(t0), synthetic: None });
        assert_eq!(l.witness(&id(100, left, false)).physical, None, "a release is not the press");
        assert_eq!(l.witness(&id(100, Pressed::Button(3), true)).physical, None, "another button");
        assert_eq!(l.witness(&id(101, left, true)), Witness::default(), "another time: never seen");
        assert_eq!(l.witness(&id(100, Pressed::Key(1), true)).physical, None, "key 1 is not button 1");
    }

    #[test]
    fn a_synthetic_event_at_the_same_time_is_reported_worst_first() {
        let l = LastPhysicalInput::new();
        let t0 = Instant::now();
        l.record(raw(500, Pressed::Button(1), true, Provenance::Physical, t0));
        l.record(raw(500, Pressed::Key(38), true, Provenance::Injected, t0));
        let w = l.witness(&id(500, Pressed::Button(1), true));
        assert_eq!((w.physical, w.synthetic), (Some(t0), Some(Provenance::Injected)));
        l.record(raw(500, Pressed::Key(39), false, Provenance::Forged, t0));
        assert_eq!(l.witness(&id(500, Pressed::Button(1), true)).synthetic, Some(Provenance::Forged));
        // A forged event from a physical device's id is never the physical match.
        l.record(raw(600, Pressed::Button(1), true, Provenance::Forged, t0));
        assert_eq!(l.witness(&id(600, Pressed::Button(1), true)).physical, None);
    }

    #[test]
    fn the_ring_is_bounded_and_forgets_the_oldest() {
        let l = LastPhysicalInput::new();
        let t0 = Instant::now();
        let n = u32::try_from(RAW_RING_SIZE).expect("small");
        for time in 0..n + 10 {
            l.record(raw(time, Pressed::Key(40), true, Provenance::Physical, t0));
        }
        for time in 0..10 {
            assert_eq!(l.witness(&id(time, Pressed::Key(40), true)).physical, None, "time {time} forgotten");
        }
        for time in [10, n, n + 9] {
            assert!(l.witness(&id(time, Pressed::Key(40), true)).physical.is_some(), "time {time} kept");
        }
    }

    #[test]
    fn latest_times_move_forward_and_tamper_is_reported() {
        let l = LastPhysicalInput::new();
        let t0 = Instant::now() + Duration::from_millis(10);
        l.record(raw(1, Pressed::Key(40), true, Provenance::Physical, t0));
        l.record(raw(2, Pressed::Key(40), true, Provenance::Physical, t0 - Duration::from_millis(5)));
        assert_eq!(l.snapshot().last_physical_press, Some(t0));
        l.record(raw(3, Pressed::Button(1), true, Provenance::Injected, t0));
        assert_eq!(l.snapshot().last_injected_button, Some(t0));
        assert_eq!(l.last_tamper(), None);
        l.record_tamper(t0);
        assert_eq!(l.last_tamper(), Some(t0));
    }

    #[test]
    fn readers_never_see_a_torn_slot_while_the_input_thread_writes() {
        let l = LastPhysicalInput::new();
        let t0 = Instant::now();
        let writer = {
            let l = l.clone();
            std::thread::spawn(move || {
                for time in 0..20_000u32 {
                    let provenance = if time % 2 == 0 { Provenance::Physical } else { Provenance::Injected };
                    l.record(raw(time, Pressed::Button(time % 3 + 1), true, provenance, t0));
                }
            })
        };
        for time in (0..20_000u32).step_by(97) {
            let w = l.witness(&id(time, Pressed::Button(time % 3 + 1), true));
            // An even time is only ever physical, an odd one only ever injected.
            if time % 2 == 0 {
                assert_eq!(w.synthetic, None, "time {time}");
            } else {
                assert_eq!(w.physical, None, "time {time}");
            }
        }
        writer.join().expect("writer");
    }
}
