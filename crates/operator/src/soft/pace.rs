//! How often a change of the state repaints the open windows.
//!
//! Every admitted call changes the state (the overlay's narration, acting or idle), and a
//! repaint of every open window costs about half a millisecond of CPU in a debug build: an
//! agent calling back to back would spend as much CPU on mcec's windows as on its calls. So
//! while changes keep coming they repaint at most every [`INTERVAL`]. The first change after a
//! quiet spell waits [`SETTLE`]: a call arrives, is narrated, then acts, and a repaint started
//! at once would compete with that call's own work for the CPU and the X server (an agent's
//! calls are usually seconds apart, so nearly every call is "after a quiet spell"). Any change
//! while the stop is latched repaints at once (the banner and the prompt never wait). Input to
//! a window repaints it at once, outside this pacing.

use std::time::{Duration, Instant};

/// The shortest time between two repaints caused by state changes while not stopped.
pub(crate) const INTERVAL: Duration = Duration::from_millis(40);

/// How long a change waits before it is painted, while not stopped: a short call (a pointer
/// move, a click, about a millisecond) has answered by then; a person does not see the delay.
pub(crate) const SETTLE: Duration = Duration::from_millis(8);

#[derive(Debug, Default)]
pub(crate) struct Pacer {
    /// Since when a change has been waiting to be painted.
    pending_since: Option<Instant>,
    last: Option<Instant>,
}

impl Pacer {
    /// The state changed at `now`.
    pub(crate) fn changed(&mut self, now: Instant) {
        self.pending_since.get_or_insert(now);
    }

    /// Whether to repaint for the pending change now; counts the repaint when it says yes.
    pub(crate) fn due(&mut self, now: Instant, stopped: bool) -> bool {
        let Some(at) = self.next() else { return false };
        if stopped || now >= at {
            self.pending_since = None;
            self.last = Some(now);
            return true;
        }
        false
    }

    /// When the pending change is due, for the loop's wait.
    pub(crate) fn next(&self) -> Option<Instant> {
        let since = self.pending_since?;
        let settled = since + SETTLE;
        Some(self.last.map_or(settled, |last| settled.max(last + INTERVAL)))
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
        pacer.changed(t0);
        assert!(!pacer.due(t0, false), "the first change after a quiet spell settles first");
        assert_eq!(pacer.next(), Some(t0 + SETTLE));
        let t1 = t0 + SETTLE;
        assert!(pacer.due(t1, false), "then it paints");
        let soon = t1 + INTERVAL / 4;
        pacer.changed(soon);
        pacer.changed(soon + Duration::from_millis(1));
        assert!(!pacer.due(soon + SETTLE, false), "settled, but within the interval");
        assert_eq!(pacer.next(), Some(t1 + INTERVAL), "the loop wakes when it is due");
        assert!(pacer.due(t1 + INTERVAL, false), "both changes in one repaint");
        assert!(!pacer.due(t1 + INTERVAL * 3, false), "painted: nothing pending");
        assert_eq!(pacer.next(), None);
    }

    #[test]
    fn while_stopped_every_change_paints_at_once() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        pacer.changed(t0);
        assert!(pacer.due(t0, true), "the stop's banner does not settle");
        pacer.changed(t0);
        assert!(pacer.due(t0 + Duration::from_millis(1), true), "the banner never waits");
    }

    #[test]
    fn a_change_after_a_quiet_spell_waits_only_the_settle() {
        let t0 = Instant::now();
        let mut pacer = Pacer::default();
        pacer.changed(t0);
        assert!(pacer.due(t0 + SETTLE, false));
        let later = t0 + INTERVAL * 10;
        pacer.changed(later);
        assert_eq!(pacer.next(), Some(later + SETTLE), "the interval is long past: only the settle");
    }
}
