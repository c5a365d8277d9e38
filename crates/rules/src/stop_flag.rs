//! The flag every abortable loop asks before its next step (a drag point, a typed
//! character, a queued command, a recorded frame). The emergency-stop latch owns the root
//! flag and sets it; tests set it by hand. Setting it is one atomic store, so it is safe to
//! do from the input thread.
//!
//! A flag can have children ([`StopFlag::child`]): a child reads as set when it or any
//! ancestor is set, and setting a child leaves its ancestors alone. The process's "the
//! client went away" flag is a child of the latch's, and each call's cancel flag a child of
//! that, so a loop asks one flag and stops for all three reasons.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a sleeping loop asks the flag: the most a wait outlasts a stop.
const POLL: Duration = Duration::from_millis(5);

/// A cheaply clonable, shared "stop now" flag.
#[derive(Debug, Clone, Default)]
pub struct StopFlag {
    own: Arc<AtomicBool>,
    parent: Option<Arc<StopFlag>>,
}

impl StopFlag {
    pub fn new() -> Self {
        Self::default()
    }

    /// A new flag that is also set whenever `self` (or one of its ancestors) is.
    pub fn child(&self) -> StopFlag {
        StopFlag { own: Arc::default(), parent: Some(Arc::new(self.clone())) }
    }

    /// True once this flag or an ancestor is set, until cleared.
    pub fn is_set(&self) -> bool {
        self.own.load(Ordering::SeqCst) || self.parent.as_ref().is_some_and(|p| p.is_set())
    }

    /// True when this flag itself was set, whatever its ancestors say.
    pub fn is_set_here(&self) -> bool {
        self.own.load(Ordering::SeqCst)
    }

    pub fn set(&self) {
        self.own.store(true, Ordering::SeqCst);
    }

    /// Only the latch's re-arm path calls this on the root flag.
    pub fn clear(&self) {
        self.own.store(false, Ordering::SeqCst);
    }

    /// Sleep for `d`, waking within a few milliseconds once the flag is set. True when the
    /// whole time passed with the flag unset (also for a zero `d`), false when it woke for the
    /// flag: a caller that waited before acting must not act then.
    pub fn sleep(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        loop {
            if self.is_set() {
                return false;
            }
            match end.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => std::thread::sleep(left.min(POLL)),
                _ => return true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_sees_its_ancestors_but_not_the_other_way_round() {
        let root = StopFlag::new();
        let process = root.child();
        let call = process.child();
        let sibling = process.child();
        call.set();
        assert!(call.is_set() && call.is_set_here());
        assert!(!process.is_set() && !root.is_set() && !sibling.is_set());
        root.set();
        assert!(process.is_set() && sibling.is_set() && !process.is_set_here());
        root.clear();
        assert!(!sibling.is_set() && call.is_set());
        let clone = call.clone();
        clone.clear();
        assert!(!call.is_set(), "clones share one flag");
    }

    #[test]
    fn sleep_wakes_for_the_flag_and_says_so() {
        let flag = StopFlag::new();
        assert!(flag.sleep(Duration::ZERO));
        let started = Instant::now();
        assert!(flag.sleep(Duration::from_millis(20)));
        assert!(started.elapsed() >= Duration::from_millis(20), "it slept the whole time");

        let setter = flag.clone();
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            setter.set();
        });
        assert!(!flag.sleep(Duration::from_secs(600)), "woke for the flag, not the clock");
        waker.join().unwrap();
        assert!(!flag.child().sleep(Duration::ZERO), "a set ancestor counts, even for no wait");
    }
}
