//! The slow half of the emergency stop as data: which steps a trip calls for and in which
//! order, and what follows the latch's answer to a re-arm. The binary runs these steps over
//! small traits (`mcec/src/operator_side/stop_worker.rs`, `rearm.rs`); this module decides,
//! that one acts.
//!
//! The rules:
//! - A stop this process engaged itself writes its durable record first, before the audit
//!   line, the release and the banner: the stop must outlive the process even if it dies in
//!   the next instant. A stop that came from the record (another process's, or one recorded
//!   before this process started) has its record already.
//! - Every step runs whatever the one before did: a record that cannot be written, a release
//!   that fails or an audit line that cannot be written never keeps the banner down. Nothing
//!   here clears the latch: a record that cannot be written leaves the stop latched (its
//!   writer puts "not recorded" on the banner and takes actuation away).
//! - An accepted re-arm is audited, stamped on the session record and then removes the
//!   record; a record that cannot be removed still holds the stop for every process, so this
//!   one latches again at once and says why ([`after_clear`]).

use std::time::SystemTime;

use crate::latch::{StopReason, TripKind, TripNotice};

/// The audit event every stop and re-arm line is written under.
pub const STOP_EVENT: &str = "emergency-stop";
/// The audit event of a refused re-arm.
pub const REARM_REFUSED_EVENT: &str = "rearm-refused";

/// One step of a stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopStep {
    /// Write the durable stop record under this stop's id (a fresh one when it has none).
    WriteRecord { reason: String, wall: SystemTime },
    /// The audit line, under [`STOP_EVENT`].
    Audit(String),
    /// End any recording and release held input (buttons 1–3, every modifier).
    ReleaseInput,
    /// The red banner and the re-arm prompt, with the reason.
    ShowStopped(String),
    /// Open the re-arm prompt again (the chord pressed while stopped).
    OpenPrompt,
    /// Stamp the stop on the session record (`session-status`).
    StampStop { wall: SystemTime, reason: String },
    /// Correct the open stop's reason on the session record.
    AmendStop(&'static str),
}

/// The steps `notice` calls for, in the order they run.
pub fn stop_steps(notice: &TripNotice) -> Vec<StopStep> {
    let reason = notice.trip.reason.to_string();
    let wall = notice.trip.wall;
    match (notice.kind, &notice.trip.reason) {
        (TripKind::Engaged, engaged_by) => {
            let mut steps = Vec::with_capacity(5);
            if !matches!(engaged_by, StopReason::Recorded(_)) {
                steps.push(StopStep::WriteRecord { reason: reason.clone(), wall });
            }
            steps.extend([
                StopStep::Audit(format!("engaged; reason={reason}")),
                StopStep::ReleaseInput,
                StopStep::ShowStopped(reason.clone()),
                StopStep::StampStop { wall, reason },
            ]);
            steps
        }
        // Forged input can reach the chord detector before the tamper check sees the request,
        // so the stop may have engaged as a "chord": correct the record.
        (TripKind::Retriggered, StopReason::Tampering(_)) => vec![
            StopStep::Audit(format!("tampering while stopped; reason={reason}")),
            StopStep::AmendStop("input tampering detected"),
        ],
        (TripKind::Retriggered, _) => vec![
            StopStep::Audit(format!("pressed again while stopped; reason={reason}")),
            StopStep::OpenPrompt,
        ],
    }
}

/// One step of a re-arm attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RearmStep {
    /// An audit line: `event` and its detail.
    Audit { event: &'static str, detail: String },
    /// Stamp the re-arm on the session record.
    StampRearm,
    /// Release the ids this stop held and remove the durable record; what follows is
    /// [`after_clear`] of the outcome.
    ClearRecord,
    /// Show `✔ Re-armed`.
    ShowRearmed,
    /// Latch again (why): the record still holds the stop.
    Relatch(String),
    /// Tell the operator in the prompt.
    ShowRefusal(String),
}

/// What follows the latch's answer to a re-arm pressed `by` (the judged events in `detail`).
pub fn rearm_steps(rearmed: Result<(), String>, by: &str, detail: &str) -> Vec<RearmStep> {
    match rearmed {
        Ok(()) => vec![
            RearmStep::Audit { event: STOP_EVENT, detail: format!("re-armed {by}; {detail}") },
            RearmStep::StampRearm,
            RearmStep::ClearRecord,
        ],
        Err(refusal) => vec![
            RearmStep::Audit { event: REARM_REFUSED_EVENT, detail: format!("{refusal} ({by}); {detail}") },
            RearmStep::ShowRefusal(format!("Re-arm refused: {refusal}")),
        ],
    }
}

/// What follows the removal of the record after an accepted re-arm.
pub fn after_clear(cleared: Result<(), String>) -> Vec<RearmStep> {
    match cleared {
        Ok(()) => vec![RearmStep::ShowRearmed],
        Err(e) => {
            let why = format!("the stop record could not be cleared: {e}");
            vec![
                RearmStep::Relatch(why.clone()),
                RearmStep::Audit { event: REARM_REFUSED_EVENT, detail: why.clone() },
                RearmStep::ShowRefusal(format!("Still stopped: {why}")),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::latch::Trip;

    fn notice(kind: TripKind, reason: StopReason) -> TripNotice {
        TripNotice { kind, trip: Trip { reason, at: Instant::now(), wall: SystemTime::UNIX_EPOCH } }
    }

    #[test]
    fn an_engaged_stop_writes_its_record_first_then_every_other_step() {
        let chord = notice(TripKind::Engaged, StopReason::Chord("Ctrl+Alt+Shift+S".into()));
        let reason = "operator pressed Ctrl+Alt+Shift+S".to_string();
        let wall = SystemTime::UNIX_EPOCH;
        assert_eq!(
            stop_steps(&chord),
            [
                StopStep::WriteRecord { reason: reason.clone(), wall },
                StopStep::Audit(format!("engaged; reason={reason}")),
                StopStep::ReleaseInput,
                StopStep::ShowStopped(reason.clone()),
                StopStep::StampStop { wall, reason },
            ]
        );
        let forged = stop_steps(&notice(TripKind::Engaged, StopReason::Tampering("XTEST".into())));
        assert!(matches!(forged[0], StopStep::WriteRecord { .. }), "{forged:?}");
        let button = "the operator pressed Stop in the mcec window";
        let pressed = stop_steps(&notice(TripKind::Engaged, StopReason::Control(button.into())));
        assert_eq!(pressed[0], StopStep::WriteRecord { reason: button.into(), wall }, "{pressed:?}");
        assert_eq!(pressed[1], StopStep::Audit(format!("engaged; reason={button}")));
    }

    #[test]
    fn a_stop_from_the_record_does_not_write_it_again() {
        let recorded =
            stop_steps(&notice(TripKind::Engaged, StopReason::Recorded("a stop is recorded".into())));
        assert!(!recorded.iter().any(|s| matches!(s, StopStep::WriteRecord { .. })), "{recorded:?}");
        assert!(recorded.contains(&StopStep::ReleaseInput));
        assert!(recorded.contains(&StopStep::ShowStopped("a stop is recorded".into())));
    }

    #[test]
    fn a_trip_while_stopped_reopens_the_prompt_or_amends_the_reason() {
        let again = stop_steps(&notice(TripKind::Retriggered, StopReason::Chord("Pause".into())));
        assert_eq!(
            again,
            [
                StopStep::Audit("pressed again while stopped; reason=operator pressed Pause".into()),
                StopStep::OpenPrompt
            ]
        );
        let forged = stop_steps(&notice(TripKind::Retriggered, StopReason::Tampering("XTEST".into())));
        assert_eq!(forged[1], StopStep::AmendStop("input tampering detected"));
        assert!(
            !forged
                .iter()
                .chain(&again)
                .any(|s| matches!(s, StopStep::WriteRecord { .. } | StopStep::ReleaseInput))
        );
    }

    #[test]
    fn an_accepted_rearm_clears_the_record_and_a_failed_clear_latches_again() {
        let accepted = rearm_steps(Ok(()), "by the operator", "judged");
        assert_eq!(accepted.last(), Some(&RearmStep::ClearRecord));
        assert_eq!(
            accepted[0],
            RearmStep::Audit { event: STOP_EVENT, detail: "re-armed by the operator; judged".into() }
        );
        assert_eq!(after_clear(Ok(())), [RearmStep::ShowRearmed]);
        let kept = after_clear(Err("read-only file system".into()));
        assert!(matches!(&kept[0], RearmStep::Relatch(why) if why.contains("read-only")), "{kept:?}");
        assert!(!kept.contains(&RearmStep::ShowRearmed));

        let refused = rearm_steps(Err("no physical press".into()), "by the operator", "judged");
        assert!(!refused.iter().any(|s| matches!(s, RearmStep::ClearRecord | RearmStep::StampRearm)));
        assert_eq!(refused[1], RearmStep::ShowRefusal("Re-arm refused: no physical press".into()));
    }
}
