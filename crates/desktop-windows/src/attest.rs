//! What the hook thread vouches for: when the operator last pressed a key or a mouse button
//! with their own hands.
//!
//! The re-arm prompt, the provisioning opt-in and consent are honoured only when a physical
//! press happened just before the toolkit reported the click (a toolkit cannot tell who
//! clicked). The hook thread writes here with two relaxed atomic stores; readers on any thread
//! get `Instant`s back.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Shared, cloneable record of the last physical key and button presses.
#[derive(Debug, Clone)]
pub struct PhysicalPresses(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    base: Instant,
    /// Nanoseconds after `base`, plus one; zero means never.
    key: AtomicU64,
    button: AtomicU64,
}

impl Default for PhysicalPresses {
    fn default() -> Self {
        PhysicalPresses(Arc::new(Inner {
            base: Instant::now(),
            key: AtomicU64::new(0),
            button: AtomicU64::new(0),
        }))
    }
}

impl PhysicalPresses {
    pub fn new() -> Self {
        Self::default()
    }

    fn stamp(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.0.base).as_nanos()).unwrap_or(u64::MAX - 1) + 1
    }

    fn read(&self, cell: &AtomicU64) -> Option<Instant> {
        match cell.load(Ordering::Relaxed) {
            0 => None,
            n => Some(self.0.base + Duration::from_nanos(n - 1)),
        }
    }

    /// Called on the hook thread for a physical key-down.
    pub fn record_key(&self, at: Instant) {
        self.0.key.fetch_max(self.stamp(at), Ordering::Relaxed);
    }

    /// Called on the hook thread for a physical button-down.
    pub fn record_button(&self, at: Instant) {
        self.0.button.fetch_max(self.stamp(at), Ordering::Relaxed);
    }

    pub fn last_key(&self) -> Option<Instant> {
        self.read(&self.0.key)
    }

    pub fn last_button(&self) -> Option<Instant> {
        self.read(&self.0.button)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_then_latest() {
        let p = PhysicalPresses::new();
        assert_eq!((p.last_key(), p.last_button()), (None, None));
        let t1 = Instant::now();
        let t2 = t1 + Duration::from_millis(5);
        p.record_button(t2);
        p.record_button(t1);
        assert_eq!(p.last_button(), Some(t2), "an older press never overwrites a newer one");
        assert_eq!(p.last_key(), None);
        p.record_key(t1);
        assert_eq!(p.last_key(), Some(t1));
    }
}
