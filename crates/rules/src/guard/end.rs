//! What the console's **End** does to one agent (issue 25), decided in one place so that the
//! prompt that asks the operator says what the process will then do.
//!
//! The press on `End` is judged like a press on `Re-arm` (the guard's own monitor, then, for a
//! member, the member's own monitor on the claim it receives: `claim.rs`); what follows
//! depends only on what the ended process is, which it knows itself:
//!
//! * a **session copy** (whatever its transport) stops serving and exits, and its session is
//!   ended and deleted as `end-session` does (its instance lock released first, then the same
//!   token-checked teardown);
//! * a **manual copy on stdio** stops serving and exits: its client sees its connection end;
//! * a **manual copy on HTTP** (a host process) closes its front door: its connections end and
//!   no new one is accepted, while the process, its window and its stop stay until the
//!   operator quits it. Closing the connections alone would let the client reconnect at once
//!   with the same token.

use super::AgentRow;

/// What an attested End does to the process it reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndEffect {
    /// The process exits and its session copy is deleted.
    SessionEnded,
    /// The process exits (its stdio connection ends).
    ProcessEnds,
    /// The process stops serving HTTP and stays.
    FrontDoorClosed,
}

impl EndEffect {
    /// The effect on a process that is a session copy (`session`) and serves `transport`.
    pub fn of(session: bool, transport: &str) -> EndEffect {
        match (session, transport) {
            (true, _) => EndEffect::SessionEnded,
            (false, "http") => EndEffect::FrontDoorClosed,
            (false, _) => EndEffect::ProcessEnds,
        }
    }

    /// Whether the process exits once it stopped serving.
    pub fn exits(self) -> bool {
        self != EndEffect::FrontDoorClosed
    }

    /// What the operator is told will happen.
    pub fn words(self) -> &'static str {
        match self {
            EndEffect::SessionEnded => "Its mcec ends and its session copy is deleted.",
            EndEffect::ProcessEnds => "Its mcec ends, which closes the agent's connection.",
            EndEffect::FrontDoorClosed => {
                "Its HTTP connections are closed and no new one is accepted; that mcec keeps running."
            }
        }
    }
}

/// The End prompt's question for `row`, e.g. `End claude-code 1.2.3 (session a1b2)?`.
pub fn end_question(row: &AgentRow) -> String {
    let own = if row.this_process() { ", this mcec's own agent" } else { "" };
    format!("End {} ({}{own})?", row.client(), row.copy())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{Hello, MemberState, PROTOCOL, Whose};

    fn row(whose: Whose, session: Option<&str>, transport: &str) -> AgentRow {
        let hello = Hello {
            v: PROTOCOL,
            pid: 7,
            client_name: Some("alphabot".into()),
            client_version: Some("2.0".into()),
            session: session.map(Into::into),
            transport: transport.into(),
            since: 0,
            host: false,
        };
        AgentRow::of(whose, &hello, &MemberState::default(), false, None)
    }

    #[test]
    fn a_session_copy_ends_and_goes_whatever_its_transport() {
        assert_eq!(EndEffect::of(true, "stdio"), EndEffect::SessionEnded);
        assert_eq!(EndEffect::of(true, "http"), EndEffect::SessionEnded);
        assert!(EndEffect::SessionEnded.exits());
        assert!(EndEffect::SessionEnded.words().contains("deleted"));
    }

    #[test]
    fn a_manual_copy_on_stdio_exits_and_one_on_http_closes_its_front_door_only() {
        assert_eq!(EndEffect::of(false, "stdio"), EndEffect::ProcessEnds);
        assert!(EndEffect::ProcessEnds.exits());
        assert_eq!(EndEffect::of(false, "http"), EndEffect::FrontDoorClosed);
        assert!(!EndEffect::FrontDoorClosed.exits(), "the host's window and stop stay");
        assert!(!EndEffect::FrontDoorClosed.words().contains("deleted"));
    }

    #[test]
    fn the_question_names_the_agent_and_its_copy() {
        assert_eq!(
            end_question(&row(Whose::Member(3), Some("a1b2"), "stdio")),
            "End alphabot 2.0 (session a1b2)?"
        );
        assert_eq!(
            end_question(&row(Whose::ThisProcess, None, "http")),
            "End alphabot 2.0 (manual copy, this mcec's own agent)?"
        );
    }
}
