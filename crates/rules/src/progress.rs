//! How a long call says how far it got without knowing who is listening. The MCP server
//! gives each call a [`Progress`] and runs the call inside [`Progress::scope`]; the tool
//! layer's loops call [`report`] at each step (a point walked, a character typed, a
//! millisecond waited), which does nothing outside a scope. The server reads
//! [`Progress::latest`] when it tells the client, so reporting is one store per step and
//! never waits on the client.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, PoisonError};

/// The latest step of one call: `done` of `total` `unit`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub done: u64,
    pub total: u64,
    pub unit: &'static str,
}

/// One call's progress, shared between the thread running it and the server.
#[derive(Debug, Clone, Default)]
pub struct Progress(Arc<Mutex<Option<Step>>>);

thread_local! {
    static CURRENT: RefCell<Option<Progress>> = const { RefCell::new(None) };
}

impl Progress {
    pub fn new() -> Self {
        Self::default()
    }

    /// The last step reported, if any.
    pub fn latest(&self) -> Option<Step> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Run `f` with this progress receiving every [`report`] made on this thread.
    pub fn scope<T>(&self, f: impl FnOnce() -> T) -> T {
        struct Restore(Option<Progress>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                CURRENT.with(|c| *c.borrow_mut() = previous);
            }
        }
        let _restore = Restore(CURRENT.with(|c| c.borrow_mut().replace(self.clone())));
        f()
    }
}

/// Record that the call running on this thread has done `done` of `total` `unit`s.
pub fn report(done: u64, total: u64, unit: &'static str) {
    CURRENT.with(|c| {
        if let Some(progress) = &*c.borrow() {
            *progress.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(Step { done, total, unit });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_reach_only_the_scope_they_are_made_in() {
        report(1, 2, "outside");
        let progress = Progress::new();
        let inner = Progress::new();
        progress.scope(|| {
            report(3, 10, "points");
            inner.scope(|| report(1, 1, "nested"));
            std::thread::spawn(|| report(9, 9, "other thread")).join().unwrap();
        });
        report(5, 5, "after");
        assert_eq!(progress.latest(), Some(Step { done: 3, total: 10, unit: "points" }));
        assert_eq!(inner.latest(), Some(Step { done: 1, total: 1, unit: "nested" }));
    }
}
