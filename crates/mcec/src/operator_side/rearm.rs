//! The operator's re-arm: the events that pressed `Re-arm` are judged (`crate::attest`), the
//! latch decides, and what follows its answer (`mcec_rules::stop_steps::rearm_steps`: audit,
//! session stamp, the record's removal, the banner, or latching again when the record
//! cannot be removed) runs over the traits of `sides.rs`.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::SystemTime;

use mcec_mcp::Agent;
use mcec_operator::OperatorState;
use mcec_rules::activation::Activation;
use mcec_rules::latch::{Latch, StopReason};
use mcec_rules::stop_steps::{RearmStep, after_clear, rearm_steps};

use super::sides::{AuditLog, Audited, SessionStamp, Windows};
use crate::attest::Attestor;
use crate::stop_follower::Keeper;

/// What the operator's re-arm touches.
#[derive(Clone)]
pub struct Rearm {
    pub latch: Latch,
    pub attestor: Attestor,
    pub ui: Option<OperatorState>,
    pub agent: Arc<Agent>,
    pub record: Keeper,
}

/// What the steps after a re-arm's verdict act on.
pub struct RearmSides<'a> {
    pub latch: &'a Latch,
    pub audit: &'a dyn AuditLog,
    pub windows: &'a dyn Windows,
    pub session: &'a dyn SessionStamp,
}

/// Run `steps` in order, with the record's removal (`clear`) followed by what its outcome
/// calls for.
pub fn run_rearm_steps(
    steps: Vec<RearmStep>,
    sides: &RearmSides<'_>,
    mut clear: impl FnMut() -> Result<(), String>,
) {
    let mut queue = VecDeque::from(steps);
    while let Some(step) = queue.pop_front() {
        match step {
            RearmStep::Audit { event, detail } => sides.audit.audit(event, &detail),
            RearmStep::StampRearm => sides.session.stamp_rearm(SystemTime::now()),
            RearmStep::ClearRecord => queue.extend(after_clear(clear())),
            RearmStep::ShowRearmed => sides.windows.show_rearmed(),
            RearmStep::Relatch(why) => {
                tracing::error!("{why}");
                sides.latch.trip(StopReason::Recorded(why));
            }
            RearmStep::ShowRefusal(message) => sides.windows.show_refusal(&message),
        }
    }
}

impl Rearm {
    /// Ask the latch to re-arm on the judgement of the events `event` names (the click or
    /// key that pressed `Re-arm`); an accepted re-arm releases this stop's ids and removes the
    /// durable record. The events are judged first (that may wait for the monitor); then the
    /// record lock is held throughout, so the follower cannot write the record back between
    /// the verdict and the removal.
    pub fn attempt(&self, by: &str, event: &Activation) -> bool {
        let judgement = self.attestor.judge(event);
        let mut held = self.record.hold();
        let rearmed = match judgement.verdict {
            Ok(judged) => {
                let tamper = self.attestor.ledger.last_tamper();
                self.latch.rearm(judged.attestation(tamper)).map(|_| ()).map_err(|r| r.to_string())
            }
            Err(refusal) => Err(refusal.to_string()),
        };
        let accepted = rearmed.is_ok();
        let sides =
            RearmSides { latch: &self.latch, audit: &Audited, windows: &self.ui, session: &*self.agent };
        run_rearm_steps(rearm_steps(rearmed, by, &judgement.detail), &sides, || held.release_and_clear());
        accepted
    }
}

impl Rearm {
    /// As the display's guard with nothing of its own stopped: judge the events that pressed
    /// `Re-arm` for the members' sake (each judges them again itself). Audited; a refusal is
    /// shown in the prompt.
    pub fn judge_for_others(&self, by: &Activation) -> bool {
        let judgement = self.attestor.judge(by);
        match judgement.verdict {
            Ok(_) => {
                Audited.audit("rearm-for-members", &judgement.detail);
                true
            }
            Err(refusal) => {
                Audited.audit("rearm-refused", &format!("{refusal} (for the members); {}", judgement.detail));
                self.ui.show_refusal(&format!("Re-arm refused: {refusal}"));
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use mcec_rules::StopFlag;
    use mcec_rules::latch::RearmAttestation;

    use super::super::stop_worker::tests::Fake;
    use super::*;

    fn stopped_then_rearmed() -> Latch {
        let latch = Latch::new(StopFlag::new());
        latch.trip(StopReason::Chord("Ctrl+Alt+Shift+S".into()));
        let physical =
            RearmAttestation { input_physical: true, input_at: Some(Instant::now()), last_tamper_at: None };
        latch.rearm(physical).expect("an attested re-arm");
        latch
    }

    fn sides<'a>(latch: &'a Latch, fake: &'a Fake) -> RearmSides<'a> {
        RearmSides { latch, audit: fake, windows: fake, session: fake }
    }

    #[test]
    fn an_accepted_rearm_is_stamped_then_clears_the_record_then_shows_it() {
        let latch = stopped_then_rearmed();
        let fake = Fake::default();
        let mut cleared = 0;
        run_rearm_steps(rearm_steps(Ok(()), "by the operator", "judged"), &sides(&latch, &fake), || {
            cleared += 1;
            Ok(())
        });
        assert_eq!(cleared, 1);
        assert_eq!(
            *fake.journal.borrow(),
            ["audit emergency-stop: re-armed by the operator; judged", "stamp rearm", "rearmed"]
        );
        assert!(!latch.is_stopped());
    }

    /// Issue 24: a record that cannot be removed keeps the stop: the latch engages again.
    #[test]
    fn a_record_that_cannot_be_cleared_latches_again() {
        let latch = stopped_then_rearmed();
        let fake = Fake::default();
        run_rearm_steps(rearm_steps(Ok(()), "by the operator", "judged"), &sides(&latch, &fake), || {
            Err("cannot remove display-9: read-only file system".into())
        });
        assert!(latch.is_stopped() && latch.flag().is_set());
        let journal = fake.journal.borrow();
        assert!(!journal.contains(&"rearmed".to_string()), "{journal:?}");
        assert!(journal.last().is_some_and(|l| l.starts_with("refusal Still stopped")), "{journal:?}");
    }

    #[test]
    fn a_refused_rearm_never_touches_the_record() {
        let latch = Latch::new(StopFlag::new());
        latch.trip(StopReason::Chord("Ctrl+Alt+Shift+S".into()));
        let fake = Fake::default();
        run_rearm_steps(
            rearm_steps(Err("synthetic".into()), "by the operator", "judged"),
            &sides(&latch, &fake),
            || panic!("a refused re-arm removed the record"),
        );
        assert!(latch.is_stopped());
        assert_eq!(
            *fake.journal.borrow(),
            ["audit rearm-refused: synthetic (by the operator); judged", "refusal Re-arm refused: synthetic"]
        );
    }
}
