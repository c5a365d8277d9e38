//! Whether a click on the Agent tab's **Allow agents to provision session copies**
//! checkbox may change `AllowSessionProvisioning`.
//!
//! This is the one permission an agent must never grant itself, and a toolkit cannot tell who
//! clicked (an injected click presses an egui checkbox as well as a hand does). So the change
//! is honoured on the same evidence as a re-arm: the provenance monitor's attestation that the
//! latest button press was physical and recent, with no tampering seen lately. Inside a
//! session copy it is never honoured, whoever clicked: a driving agent must not widen its
//! own rights.

use std::fmt;
use std::time::{Duration, Instant};

use crate::latch::{PressRefusal, RearmAttestation, TAMPER_QUIET_PERIOD};

/// Why a change of the opt-in was refused. `Display` is the sentence the Agent tab shows
/// and the audit line's reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptInRefusal {
    /// This process is a session copy.
    SessionCopy,
    /// The monitor saw no press at all (it may not be running).
    NoInputSeen,
    /// The latest press came from an injected (synthetic) source.
    NotPhysical,
    /// The latest physical press is older than [`crate::latch::REARM_INPUT_MAX_AGE`].
    Stale { age: Duration },
    /// Tampering was seen less than [`TAMPER_QUIET_PERIOD`] ago.
    RecentTampering { ago: Duration },
}

impl OptInRefusal {
    /// A short machine-readable word for the audit line.
    pub fn code(&self) -> &'static str {
        match self {
            OptInRefusal::SessionCopy => "session-copy",
            OptInRefusal::NoInputSeen => "no-input-seen",
            OptInRefusal::NotPhysical => "not-physical",
            OptInRefusal::Stale { .. } => "stale-input",
            OptInRefusal::RecentTampering { .. } => "recent-tampering",
        }
    }
}

impl fmt::Display for OptInRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptInRefusal::SessionCopy => {
                f.write_str("this is a session copy; it can never allow provisioning")
            }
            OptInRefusal::NoInputSeen => f.write_str(
                "no physical click was seen (is the emergency stop armed?); click with your own mouse",
            ),
            OptInRefusal::NotPhysical => f.write_str(
                "the click came from synthetic (injected) input; only your own mouse can change this",
            ),
            OptInRefusal::Stale { age } => write!(
                f,
                "the last physical click is {:.1} s old; click the checkbox again with your own mouse",
                age.as_secs_f64()
            ),
            OptInRefusal::RecentTampering { ago } => write!(
                f,
                "forged input was detected {:.0} s ago; wait {} s without tampering and click again",
                ago.as_secs_f64(),
                TAMPER_QUIET_PERIOD.as_secs()
            ),
        }
    }
}

impl std::error::Error for OptInRefusal {}

/// What the provenance monitor says about the input just before the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptInEvidence {
    /// The latest press of pointer buttons 1-3 (the click on the checkbox).
    pub click: RearmAttestation,
    /// The latest press of any kind, keys included: a checkbox with the keyboard focus also
    /// toggles on Space, so an injected Space right after the operator's own click must not
    /// ride on that click's attestation.
    pub latest_press: RearmAttestation,
}

/// The rule. `evidence` is `None` when no provenance monitor runs (nothing can be attested);
/// `now` is when the decision is made. Both the latest click and the latest press of any
/// kind must pass.
pub fn opt_in_verdict(
    evidence: Option<&OptInEvidence>,
    in_session_copy: bool,
    now: Instant,
) -> Result<(), OptInRefusal> {
    if in_session_copy {
        return Err(OptInRefusal::SessionCopy);
    }
    physical_click_verdict(evidence, now)
}

/// The provenance half of the rule, shared with the consent prompt's `Allow`: the latest
/// click and the latest press of any kind were physical, recent, and no tampering was seen
/// lately. `evidence` is `None` when no provenance monitor runs.
pub fn physical_click_verdict(evidence: Option<&OptInEvidence>, now: Instant) -> Result<(), OptInRefusal> {
    let Some(evidence) = evidence else {
        return Err(OptInRefusal::NoInputSeen);
    };
    one_press(&evidence.click, now)?;
    one_press(&evidence.latest_press, now)
}

/// The shared press rule ([`RearmAttestation::check`]) with no lower bound: there is no stop
/// to have come after, so `BeforeStop` cannot occur.
fn one_press(att: &RearmAttestation, now: Instant) -> Result<(), OptInRefusal> {
    att.check(None, None, now).map_err(|refusal| match refusal {
        PressRefusal::RecentTampering { ago } => OptInRefusal::RecentTampering { ago },
        PressRefusal::NoInputSeen | PressRefusal::BeforeStop => OptInRefusal::NoInputSeen,
        PressRefusal::NotPhysical => OptInRefusal::NotPhysical,
        PressRefusal::Stale { age } => OptInRefusal::Stale { age },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latch::REARM_INPUT_MAX_AGE;

    fn att(physical: bool, at: Option<Instant>, tamper: Option<Instant>) -> RearmAttestation {
        RearmAttestation { input_physical: physical, input_at: at, last_tamper_at: tamper }
    }

    /// The same attestation for the click and for the latest press (the click was the last press).
    fn ev(physical: bool, at_: Option<Instant>, tamper: Option<Instant>) -> OptInEvidence {
        let a = att(physical, at_, tamper);
        OptInEvidence { click: a, latest_press: a }
    }

    #[test]
    fn a_recent_physical_click_is_honoured() {
        let now = Instant::now() + Duration::from_secs(60);
        let click = now - Duration::from_millis(100);
        assert_eq!(opt_in_verdict(Some(&ev(true, Some(click), None)), false, now), Ok(()));
        let old_tamper = now - TAMPER_QUIET_PERIOD - Duration::from_secs(1);
        assert_eq!(opt_in_verdict(Some(&ev(true, Some(click), Some(old_tamper))), false, now), Ok(()));
    }

    #[test]
    fn a_session_copy_never_honours_it() {
        let now = Instant::now();
        assert_eq!(
            opt_in_verdict(Some(&ev(true, Some(now), None)), true, now),
            Err(OptInRefusal::SessionCopy)
        );
    }

    #[test]
    fn injected_missing_stale_and_tampered_input_is_refused() {
        let now = Instant::now() + Duration::from_secs(60);
        let click = now - Duration::from_millis(100);
        assert_eq!(opt_in_verdict(None, false, now), Err(OptInRefusal::NoInputSeen));
        assert_eq!(opt_in_verdict(Some(&ev(false, None, None)), false, now), Err(OptInRefusal::NoInputSeen));
        assert_eq!(
            opt_in_verdict(Some(&ev(false, Some(click), None)), false, now),
            Err(OptInRefusal::NotPhysical)
        );
        let old = now - REARM_INPUT_MAX_AGE - Duration::from_millis(1);
        assert!(matches!(
            opt_in_verdict(Some(&ev(true, Some(old), None)), false, now),
            Err(OptInRefusal::Stale { .. })
        ));
        let tamper = now - Duration::from_secs(3);
        let refused = opt_in_verdict(Some(&ev(true, Some(click), Some(tamper))), false, now);
        assert!(matches!(refused, Err(OptInRefusal::RecentTampering { .. })), "{refused:?}");
    }

    #[test]
    fn an_injected_key_after_a_physical_click_is_refused() {
        let now = Instant::now() + Duration::from_secs(60);
        let click = att(true, Some(now - Duration::from_millis(300)), None);
        let space = att(false, Some(now - Duration::from_millis(100)), None);
        let evidence = OptInEvidence { click, latest_press: space };
        assert_eq!(opt_in_verdict(Some(&evidence), false, now), Err(OptInRefusal::NotPhysical));
        // A physical key press after the click is the operator's own.
        let key = att(true, Some(now - Duration::from_millis(100)), None);
        assert_eq!(opt_in_verdict(Some(&OptInEvidence { click, latest_press: key }), false, now), Ok(()));
        // No click seen at all (a keyboard-only toggle) is refused, however physical the key.
        let none = att(false, None, None);
        let refused = opt_in_verdict(Some(&OptInEvidence { click: none, latest_press: key }), false, now);
        assert_eq!(refused, Err(OptInRefusal::NoInputSeen));
    }

    #[test]
    fn every_refusal_has_a_code_and_a_sentence() {
        let all = [
            OptInRefusal::SessionCopy,
            OptInRefusal::NoInputSeen,
            OptInRefusal::NotPhysical,
            OptInRefusal::Stale { age: Duration::from_secs(3) },
            OptInRefusal::RecentTampering { ago: Duration::from_secs(1) },
        ];
        for r in all {
            assert!(!r.code().is_empty() && !r.code().contains(' '));
            assert!(r.to_string().len() > 20, "{r}");
        }
    }
}
