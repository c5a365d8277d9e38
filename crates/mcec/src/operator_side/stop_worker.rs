//! The stop worker: the thread that wakes on the latch and runs the slow steps of a stop off
//! the input thread. Which steps and in which order is `mcec_rules::stop_steps`; this file
//! runs them over the traits of `sides.rs`, each whatever the one before did, and watches
//! for the display going away between trips.

use std::sync::Arc;
use std::time::Duration;

use mcec_desktop::DesktopTools;
use mcec_desktop::monitor::{MonitorHandle, MonitorStatus};
use mcec_mcp::Agent;
use mcec_mcp::audit::audit;
use mcec_operator::OperatorState;
use mcec_rules::gates::DesktopGate;
use mcec_rules::latch::Latch;
use mcec_rules::stop_steps::{STOP_EVENT, StopStep, stop_steps};

use super::sides::{AuditLog, Audited, Hands, RecordStore, SessionStamp, Windows};
use crate::stop_follower::Keeper;

/// What the steps of a stop act on.
pub struct StopSides<'a> {
    pub record: &'a dyn RecordStore,
    pub audit: &'a dyn AuditLog,
    pub hands: &'a dyn Hands,
    pub windows: &'a dyn Windows,
    pub session: &'a dyn SessionStamp,
}

/// Run `steps` in order; every step runs whatever the ones before it did.
pub fn run_stop_steps(steps: Vec<StopStep>, sides: &StopSides<'_>) {
    for step in steps {
        match step {
            StopStep::WriteRecord { reason, wall } => {
                // A failure is logged, audited and shown by the store; the stop goes on.
                let _unrecorded = sides.record.record_own_stop(&reason, wall);
            }
            StopStep::Audit(detail) => sides.audit.audit(STOP_EVENT, &detail),
            StopStep::ReleaseInput => {
                if let Err(e) = sides.hands.release_all() {
                    tracing::error!("releasing held input after the stop failed: {e}");
                }
            }
            StopStep::ShowStopped(reason) => sides.windows.show_stopped(&reason),
            StopStep::OpenPrompt => sides.windows.open_prompt(),
            StopStep::StampStop { wall, reason } => sides.session.stamp_stop(wall, &reason),
            StopStep::AmendStop(note) => sides.session.amend_stop(note),
        }
    }
}

/// The worker thread: the steps of every trip, for as long as the process lives.
pub fn stop_worker(
    latch: Latch,
    monitor: Option<MonitorHandle>,
    desktop: Option<Arc<DesktopTools>>,
    ui: Option<OperatorState>,
    agent: Arc<Agent>,
    record: Keeper,
) {
    let sides =
        StopSides { record: &record, audit: &Audited, hands: &desktop, windows: &ui, session: &*agent };
    let mut display_lost = false;
    loop {
        let Some(notice) = latch.wait_for_trip_timeout(Duration::from_millis(500)) else {
            if let Some(MonitorStatus::DisplayLost(why)) = monitor.as_ref().map(MonitorHandle::status)
                && !display_lost
            {
                display_lost = true;
                tracing::error!("the display went away ({why}); desktop tools now answer no-desktop");
                audit("display-lost", &why);
                record.set_base_gate(DesktopGate::NoDesktop {
                    detail: format!("the X display went away: {why}"),
                });
            }
            continue;
        };
        run_stop_steps(stop_steps(&notice), &sides);
        latch.settle();
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::cell::RefCell;
    use std::time::SystemTime;

    use mcec_rules::StopFlag;
    use mcec_rules::latch::{StopReason, TripKind};

    use super::*;

    /// Every side at once, writing what it was asked into one journal; with `fail`, every
    /// step that can fail fails.
    #[derive(Default)]
    pub struct Fake {
        pub journal: RefCell<Vec<String>>,
        pub fail: bool,
    }

    impl Fake {
        fn note(&self, what: String) {
            self.journal.borrow_mut().push(what);
        }

        fn outcome(&self) -> Result<(), String> {
            if self.fail { Err("no space left on device".into()) } else { Ok(()) }
        }

        pub fn sides(&self) -> StopSides<'_> {
            StopSides { record: self, audit: self, hands: self, windows: self, session: self }
        }
    }

    impl RecordStore for Fake {
        fn record_own_stop(&self, reason: &str, _: SystemTime) -> Result<(), String> {
            self.note(format!("record {reason}"));
            self.outcome()
        }
    }

    impl AuditLog for Fake {
        fn audit(&self, event: &str, detail: &str) {
            self.note(format!("audit {event}: {detail}"));
        }
    }

    impl Hands for Fake {
        fn release_all(&self) -> Result<(), String> {
            self.note("release".into());
            self.outcome()
        }
    }

    impl Windows for Fake {
        fn show_stopped(&self, reason: &str) {
            self.note(format!("banner {reason}"));
        }
        fn open_prompt(&self) {
            self.note("prompt".into());
        }
        fn show_rearmed(&self) {
            self.note("rearmed".into());
        }
        fn show_refusal(&self, message: &str) {
            self.note(format!("refusal {message}"));
        }
    }

    impl SessionStamp for Fake {
        fn stamp_stop(&self, _: SystemTime, reason: &str) {
            self.note(format!("stamp stop {reason}"));
        }
        fn amend_stop(&self, note: &str) {
            self.note(format!("amend {note}"));
        }
        fn stamp_rearm(&self, _: SystemTime) {
            self.note("stamp rearm".into());
        }
    }

    /// The chord on a real latch, and the steps its notice calls for.
    fn chord() -> (Latch, Vec<StopStep>) {
        let latch = Latch::new(StopFlag::new());
        assert_eq!(latch.trip(StopReason::Chord("Ctrl+Alt+Shift+S".into())), TripKind::Engaged);
        let notice = latch.wait_for_trip_timeout(Duration::ZERO).expect("the trip's notice");
        (latch, stop_steps(&notice))
    }

    const STOP_JOURNAL: [&str; 5] = [
        "record operator pressed Ctrl+Alt+Shift+S",
        "audit emergency-stop: engaged; reason=operator pressed Ctrl+Alt+Shift+S",
        "release",
        "banner operator pressed Ctrl+Alt+Shift+S",
        "stamp stop operator pressed Ctrl+Alt+Shift+S",
    ];

    #[test]
    fn the_record_is_written_first_then_every_step_in_order() {
        let (latch, steps) = chord();
        let fake = Fake::default();
        run_stop_steps(steps, &fake.sides());
        assert_eq!(*fake.journal.borrow(), STOP_JOURNAL);
        assert!(latch.is_stopped());
    }

    /// Issue 24: each step runs when the one before failed, and a record that cannot be
    /// written keeps the stop latched.
    #[test]
    fn every_step_runs_when_the_ones_before_failed_and_the_stop_stays_latched() {
        let (latch, steps) = chord();
        let fake = Fake { fail: true, ..Fake::default() };
        run_stop_steps(steps, &fake.sides());
        assert_eq!(*fake.journal.borrow(), STOP_JOURNAL);
        assert!(latch.is_stopped() && latch.flag().is_set(), "nothing in a stop's steps clears the latch");
    }
}
