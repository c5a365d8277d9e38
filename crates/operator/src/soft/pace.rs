//! How often a change of the state repaints the open windows.
//!
//! Every admitted call changes the state (the overlay's narration, acting or idle), and a
//! repaint of every open window costs about half a millisecond of CPU in a debug build: an
//! agent calling back to back would spend as much CPU on mcec's windows as on its calls. So
//! while changes keep coming they repaint at most every [`INTERVAL`]; the first change after
//! a quiet spell, and any change while the stop is latched, repaint at once (the banner and
//! the prompt never wait). Input to a window repaints it at once, outside this pacing.

use std::time::{Duration, Instant};

/// The shortest time between two repaints caused by state changes while not stopped.
pub(crate) const INTERVAL: Duration = Duration::from_millis(40);

#[derive(Debug, Default)]
pub(crate) struct Pacer {
    /// A change arrived that has not been painted yet.
    pending: bool,
    last: Option<Instant>,
}

impl Pacer {
    /// The state changed.
    pub(crate) fn changed(&mut self) {
        self.pending = true;
    }

    /// Whether to repaint for the pending change now; counts the repaint when it says yes.
    pub(crate) fn due(&mut self, now: Instant, stopped: bool) -> bool {
        let ready = self.last.is_none_or(|last| now >= last + INTERVAL);
        if self.pending && (stopped || ready) {
            self.pending = false;
            self.last = Some(now);
            return true;
        }
        false
    }

    /// When the pending change is due, for the loop's wait.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.pending.then(|| self.last.map_or_else(Instant::now, |last| last + INTERVAL))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_changes_repaints_at_most_once_an_interval() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        assert!(!pacer.due(t0, false), "nothing changed");
        pacer.changed();
        assert!(pacer.due(t0, false), "the first change after a quiet spell paints at once");
        let soon = t0 + INTERVAL / 4;
        pacer.changed();
        pacer.changed();
        assert!(!pacer.due(soon, false));
        assert_eq!(pacer.next(), Some(t0 + INTERVAL), "the loop wakes when it is due");
        assert!(pacer.due(t0 + INTERVAL, false), "both changes in one repaint");
        assert!(!pacer.due(t0 + INTERVAL * 3, false), "painted: nothing pending");
        assert_eq!(pacer.next(), None);
    }

    #[test]
    fn while_stopped_every_change_paints_at_once() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        pacer.changed();
        assert!(pacer.due(t0, false));
        pacer.changed();
        assert!(pacer.due(t0 + Duration::from_millis(1), true), "the banner never waits");
    }
}
