//! The record the re-arm path reads: when the last press happened and whether a person or
//! a program made it, and when tampering was last seen.
//!
//! Written on the input thread for every press, so it is lock-free: each time is an atomic
//! count of nanoseconds since the ledger was made (0 = never). A re-arm is attributed to the
//! *most recent* press of any provenance, not to the most recent physical one, so an injected
//! click on the prompt is refused even when the operator pressed a key a moment earlier.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use mcec_rules::latch::RearmAttestation;

#[derive(Debug)]
struct Times {
    base: Instant,
    physical_press: AtomicU64,
    injected_press: AtomicU64,
    physical_button: AtomicU64,
    injected_button: AtomicU64,
    tamper: AtomicU64,
}

/// Shared, cheaply clonable record of recent presses (keys and buttons 1-3).
#[derive(Debug, Clone)]
pub struct LastPhysicalInput(Arc<Times>);

/// A point-in-time copy of the ledger.
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

impl LastPhysicalInput {
    pub fn new() -> Self {
        LastPhysicalInput(Arc::new(Times {
            base: Instant::now(),
            physical_press: AtomicU64::new(0),
            injected_press: AtomicU64::new(0),
            physical_button: AtomicU64::new(0),
            injected_button: AtomicU64::new(0),
            tamper: AtomicU64::new(0),
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

    /// Records a key press (`button == false`) or a press of pointer button 1-3.
    pub fn record_press(&self, physical: bool, button: bool, at: Instant) {
        let v = self.encode(at);
        let t = &self.0;
        match (physical, button) {
            (true, false) => Self::bump(&t.physical_press, v),
            (false, false) => Self::bump(&t.injected_press, v),
            (true, true) => {
                Self::bump(&t.physical_press, v);
                Self::bump(&t.physical_button, v);
            }
            (false, true) => {
                Self::bump(&t.injected_press, v);
                Self::bump(&t.injected_button, v);
            }
        }
    }

    pub fn record_tamper(&self, at: Instant) {
        Self::bump(&self.0.tamper, self.encode(at));
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

    /// The attestation for a re-arm triggered by a key or a click: the latest press of any kind.
    pub fn attest(&self) -> RearmAttestation {
        let s = self.snapshot();
        attestation(s.last_physical_press, s.last_injected_press, s.last_tamper)
    }

    /// The attestation for a re-arm triggered by a click: the latest press of buttons 1-3.
    pub fn attest_click(&self) -> RearmAttestation {
        let s = self.snapshot();
        attestation(s.last_physical_button, s.last_injected_button, s.last_tamper)
    }
}

fn attestation(
    physical: Option<Instant>,
    injected: Option<Instant>,
    tamper: Option<Instant>,
) -> RearmAttestation {
    // Ties go to "injected": the safe reading.
    let input_physical = match (physical, injected) {
        (Some(p), Some(i)) => p > i,
        (Some(_), None) => true,
        (None, _) => false,
    };
    RearmAttestation { input_physical, input_at: physical.max(injected), last_tamper_at: tamper }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn latest_press_decides() {
        let l = LastPhysicalInput::new();
        assert_eq!(
            l.attest(),
            RearmAttestation { input_physical: false, input_at: None, last_tamper_at: None }
        );
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_millis(5);
        l.record_press(true, false, t0);
        assert!(l.attest().input_physical);
        l.record_press(false, true, t1);
        let a = l.attest();
        assert!(!a.input_physical, "an injected click after a physical key is injected");
        assert_eq!(a.input_at, Some(t1));
        assert!(!l.attest_click().input_physical);
        l.record_press(true, true, t1 + Duration::from_millis(1));
        assert!(l.attest_click().input_physical);
    }

    #[test]
    fn times_only_move_forward_and_tamper_is_reported() {
        let l = LastPhysicalInput::new();
        let t0 = Instant::now() + Duration::from_millis(10);
        l.record_press(true, false, t0);
        l.record_press(true, false, t0 - Duration::from_millis(5));
        assert_eq!(l.snapshot().last_physical_press, Some(t0));
        l.record_tamper(t0);
        assert_eq!(l.attest().last_tamper_at, Some(t0));
    }
}
