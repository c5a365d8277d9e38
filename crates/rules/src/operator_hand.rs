//! The operator's hand in a session's own display (issue 26): when the agent's input waits.
//!
//! A session with a display of its own shows it as a window on the operator's desktop, and
//! the operator can reach into it with their own mouse and keyboard. Both hands on one pointer
//! would fight, so while the operator is using that window (their physical pointer is in it
//! and they moved, clicked or typed there within [`QUIET`]) the agent's actuation waits, at
//! most [`PATIENCE`], and then answers `operator-active` with nothing sent. The platform says
//! when it last saw the hand (`mcec_desktop::seams::SessionWindow`); the decision is here.

use std::time::Duration;

use crate::{ErrorCode, ToolError};

/// How long after the operator's last use of the session's window the agent may act again.
pub const QUIET: Duration = Duration::from_secs(2);
/// The longest an actuation waits for the operator's hand to leave before it gives up.
pub const PATIENCE: Duration = Duration::from_secs(5);

/// What an actuation does about the operator's hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandVerdict {
    /// The window has been left alone for [`QUIET`] (or was never used): act.
    Act,
    /// Look again after this long.
    Wait(Duration),
    /// The hand stayed for all of [`PATIENCE`]: answer `operator-active`.
    GiveUp,
}

/// `since_seen`: how long ago the hand was last seen in the window (`None`: never);
/// `waited`: how long this actuation has waited already.
pub fn verdict(since_seen: Option<Duration>, waited: Duration) -> HandVerdict {
    let Some(since) = since_seen.filter(|since| *since < QUIET) else {
        return HandVerdict::Act;
    };
    if waited >= PATIENCE {
        return HandVerdict::GiveUp;
    }
    let until_quiet = QUIET - since;
    let until_patience_ends = PATIENCE - waited;
    HandVerdict::Wait(until_quiet.min(until_patience_ends).min(Duration::from_millis(50)))
}

/// The answer when the operator kept using the session's window for all of [`PATIENCE`].
pub fn operator_active() -> ToolError {
    ToolError::new(
        ErrorCode::OperatorActive,
        format!(
            "The operator is using this session's display in its window on their desktop (their own \
             pointer is in it and they used it within the last {} s). mcec waited {} s and sent \
             nothing; try again once they have left it.",
            QUIET.as_secs(),
            PATIENCE.as_secs()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn a_window_never_used_or_left_alone_for_two_seconds_lets_the_agent_act() {
        assert_eq!(verdict(None, Duration::ZERO), HandVerdict::Act);
        assert_eq!(verdict(Some(QUIET), Duration::ZERO), HandVerdict::Act);
        assert_eq!(verdict(Some(MS(60_000)), PATIENCE), HandVerdict::Act);
    }

    #[test]
    fn a_hand_seen_just_now_makes_the_agent_wait_in_short_steps() {
        assert_eq!(verdict(Some(MS(10)), Duration::ZERO), HandVerdict::Wait(MS(50)));
        assert_eq!(verdict(Some(MS(1_990)), Duration::ZERO), HandVerdict::Wait(MS(10)));
        assert_eq!(verdict(Some(MS(100)), MS(4_980)), HandVerdict::Wait(MS(20)));
    }

    #[test]
    fn a_hand_that_stays_for_all_the_patience_is_operator_active() {
        assert_eq!(verdict(Some(MS(0)), PATIENCE), HandVerdict::GiveUp);
        let refused = operator_active();
        assert_eq!(refused.code, ErrorCode::OperatorActive);
        assert_eq!(refused.code.as_str(), "operator-active");
        assert!(refused.detail.contains("sent nothing"), "{}", refused.detail);
    }
}
