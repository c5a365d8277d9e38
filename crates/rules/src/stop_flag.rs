//! The flag every abortable loop asks before its next step (a drag point, a typed
//! character, a queued command, a recorded frame). The emergency-stop latch owns one and
//! sets it; tests set it by hand. Setting it is one atomic store, so it is safe to do from
//! the input thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A cheaply clonable, shared "stop now" flag.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn new() -> Self {
        Self::default()
    }

    /// True once set, until cleared by the operator's re-arm.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    pub fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Only the latch's re-arm path calls this.
    pub fn clear(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
}
