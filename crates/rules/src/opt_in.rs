//! Whether the Agent tab's **Allow agents to provision session copies** opt-in may change
//! `AllowSessionProvisioning`.
//!
//! This is the one permission an agent must never grant itself, and a toolkit cannot tell who
//! clicked (an injected click presses an egui checkbox as well as a hand does). So the change
//! is honoured on the same judgement as a re-arm: the event that pressed the opt-in's
//! `Confirm` was the operator's own ([`crate::activation::activation_verdict`]). Inside a
//! session copy it is never honoured, whoever clicked: a driving agent must not widen its
//! own rights.

use std::fmt;

use crate::activation::{ActivationRefusal, Judged};

/// Why a change of the opt-in was refused. `Display` is the sentence the Agent tab shows
/// and the audit line's reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptInRefusal {
    /// This process is a session copy.
    SessionCopy,
    /// The event that pressed `Confirm` was not the operator's own.
    Activation(ActivationRefusal),
}

impl OptInRefusal {
    /// A short machine-readable word for the audit line.
    pub fn code(&self) -> &'static str {
        match self {
            OptInRefusal::SessionCopy => "session-copy",
            OptInRefusal::Activation(r) => r.code(),
        }
    }
}

impl fmt::Display for OptInRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptInRefusal::SessionCopy => {
                f.write_str("this is a session copy; it can never allow provisioning")
            }
            OptInRefusal::Activation(r) => r.fmt(f),
        }
    }
}

impl std::error::Error for OptInRefusal {}

/// The rule: never in a session copy; otherwise the judgement of the event that pressed
/// `Confirm`.
pub fn opt_in_verdict(
    judged: Result<Judged, ActivationRefusal>,
    in_session_copy: bool,
) -> Result<Judged, OptInRefusal> {
    if in_session_copy {
        return Err(OptInRefusal::SessionCopy);
    }
    judged.map_err(OptInRefusal::Activation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activation::{ActivationEvents, InputEventId, Pressed};
    use std::time::Instant;

    fn judged(press_at: Instant) -> Judged {
        let press = InputEventId { time: 1, what: Pressed::Button(1), down: true };
        let release = InputEventId { time: 2, what: Pressed::Button(1), down: false };
        Judged { events: ActivationEvents::Click { press, release }, press_at }
    }

    #[test]
    fn a_judged_click_is_honoured_outside_a_session_copy_only() {
        let now = Instant::now();
        assert_eq!(opt_in_verdict(Ok(judged(now)), false), Ok(judged(now)));
        assert_eq!(opt_in_verdict(Ok(judged(now)), true), Err(OptInRefusal::SessionCopy));
    }

    #[test]
    fn a_refused_activation_is_the_refusal() {
        let refused = Err(ActivationRefusal::Unidentified);
        assert_eq!(
            opt_in_verdict(refused, false),
            Err(OptInRefusal::Activation(ActivationRefusal::Unidentified))
        );
        assert_eq!(opt_in_verdict(refused, true), Err(OptInRefusal::SessionCopy));
        assert_eq!(OptInRefusal::Activation(ActivationRefusal::NoMonitor).code(), "no-monitor");
        assert!(OptInRefusal::SessionCopy.to_string().contains("session copy"));
    }
}
