//! The guard of a display: on one display and user, exactly one mcec process (the guard) owns
//! the operator's windows, and every other mcec there (a member) registers with it over a local
//! socket and shows nothing of its own while it is there. This module is the part with no OS
//! in it: the messages they exchange ([`ToGuard`], [`ToMember`], newline-delimited JSON), what
//! the one banner says for the members' states (`display.rs`), what the host's console says
//! of each agent (`console.rs`), what the console's End does to an agent (`end.rs`), and
//! whether a member accepts the guard's word that the operator pressed Re-arm or End
//! (`claim.rs`).
//!
//! The guard never decides for a member: the stop stays per process (each has its own monitor
//! and latch), and a re-arm or End claim only names the event the guard's prompt saw; the
//! member judges that event against its own monitor's ledger, as it would a click on its own
//! prompt.

mod claim;
mod console;
mod display;
mod end;
mod queue;

use serde::{Deserialize, Serialize};

pub use claim::{ClaimRefusal, MAX_MARKER, claim_activation, claim_of, witnessed_activation};
pub use console::{ACTIVITY_LINES, ActivityLine, AgentRow, AgentState, Whose, age};
pub use display::{DisplayCount, DisplayLook, headline};
pub use end::{EndEffect, end_question};
pub use queue::{ConsentQueue, Prompt, Queued, prompt_on_top};

/// The protocol's version, in every `hello`. A guard refuses a member that speaks another.
pub const PROTOCOL: u32 = 1;

/// Longest line either side reads; a longer one ends the connection.
pub const MAX_LINE: usize = 4096;

/// Longest text field (a label, a narrated action) a side keeps from a message.
pub const MAX_TEXT: usize = 120;

/// What a member tells its guard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ToGuard {
    /// The first message on a connection.
    Hello(Hello),
    /// The member's stop and activity, sent whenever they change.
    State(MemberState),
    /// The member's MCP client named itself (`initialize`'s `clientInfo`).
    Client { name: String, version: String },
    /// One admitted call of the member's agent, in plain words (`crate::narration`).
    Action { line: String },
    /// The member judged a re-arm claim and stayed stopped, for this reason.
    Refused { reason: String },
    /// The member judged an End claim and refused it (its agent goes on), for this reason.
    EndRefused { reason: String },
    /// The member's agent asks for commands (`request-command-access`): the guard queues it in
    /// its one consent prompt, naming the agent.
    Consent { id: u64, reason: String, commands: Vec<String> },
    /// The member's request ended on its side (stopped, cancelled, timed out).
    Withdrawn { id: u64 },
}

/// Who a member is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    /// [`PROTOCOL`].
    pub v: u32,
    pub pid: u32,
    /// The MCP client's `clientInfo` name and version, when the process knows them.
    pub client_name: Option<String>,
    pub client_version: Option<String>,
    /// The session copy's id, or `None` for a manual copy.
    pub session: Option<String>,
    /// `stdio` or `http`.
    pub transport: String,
    /// When the member started, in seconds since the Unix epoch.
    pub since: u64,
    /// The member is the host (plain `mcec`, the operator's own window): a guard that is not
    /// hands the windows over to it.
    #[serde(default)]
    pub host: bool,
}

impl Hello {
    /// What the guard calls this member on the banner and in the audit: the client's name,
    /// else the session id, else the process id.
    pub fn label(&self) -> String {
        let name = match (&self.client_name, &self.session) {
            (Some(name), _) => name.clone(),
            (None, Some(session)) => format!("session {session}"),
            (None, None) => format!("pid {}", self.pid),
        };
        crate::text::ellipsize(name.replace(char::is_control, " ").trim(), 40)
    }
}

/// A member's stop and activity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberState {
    pub stopped: bool,
    /// The stop id the member holds (the durable record's), when stopped.
    pub stop_id: Option<String>,
    /// The member's agent has acted since the last stop or re-arm.
    pub acting: bool,
    /// Calls the member's agent made since it started (absent from an older member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u64>,
}

/// What a guard tells a member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ToMember {
    /// The operator pressed `Re-arm` in the guard's prompt with these events; the member
    /// judges them itself ([`claim_activation`], then its own monitor).
    Rearm(PressClaim),
    /// The operator pressed `End` for this member's agent in the guard's End prompt with these
    /// events; the member judges them itself, as a re-arm claim, before it ends anything.
    End(PressClaim),
    /// The guard is giving the windows up (a host window takes them): elect again.
    Handover,
    /// The operator's answer to the member's request `id`.
    ConsentAnswer { id: u64, answer: ConsentAnswer },
    /// The chords the guard's provenance source binds now, for the prompts it shows (sway):
    /// for each, commitments to the binding's marker on the physical keyboards and on the
    /// virtual one. Sent whenever they change and to a member as it joins; none while no
    /// prompt is shown. A member's own source records the presses of these bindings.
    Bound { chords: Vec<BoundChord> },
}

/// One control's bindings in the guard's source, as [`ToMember::Bound`] names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BoundChord {
    /// The control (`re-arm`, `allow`, `opt-in`, `end`, `reveal`).
    pub control: String,
    /// SHA-256 (hex) of the marker bound on the physical keyboards: its press is physical.
    pub physical: String,
    /// SHA-256 (hex) of the marker bound on the virtual keyboard: its press is injected.
    pub injected: String,
}

/// What the operator did with a member's consent request in the guard's prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ConsentAnswer {
    /// `Allow` was pressed by these events (judged physical by the guard); the member judges
    /// them again with its own monitor before it grants anything.
    Allowed(PressClaim),
    Denied,
    TimedOut,
    /// No prompt could be shown, for this reason.
    Unavailable(String),
}

/// The identity of the event that pressed `Re-arm` (or a consent request's `Allow`) in the
/// guard's prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PressClaim {
    /// The press: the X server time and the button or key.
    pub press: ClaimEvent,
    /// The release of a click; `None` for Space on the focused button.
    pub release: Option<ClaimEvent>,
    /// How long before the guard sent the claim its prompt was first shown, in milliseconds.
    pub shown_ms_before: u64,
    /// Where the press was a chord binding of the guard's source (sway): the marker its
    /// command carried (revealed by the press: sway sent it to every subscriber). The member
    /// judges its own record of that binding's press, not `press`, which is the guard's own
    /// identity of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<String>,
}

/// One input event of a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimEvent {
    /// The platform's event time (X11: the server timestamp).
    pub time: u32,
    /// A pointer button, or else…
    pub button: Option<u32>,
    /// …a key code.
    pub key: Option<u32>,
    pub down: bool,
}

/// One message as a line (no newline inside: JSON escapes them).
pub fn encode<T: Serialize>(message: &T) -> String {
    let mut line = serde_json::to_string(message).unwrap_or_default();
    line.push('\n');
    line
}

/// A member's line, or why it is refused.
pub fn decode_to_guard(line: &str) -> Result<ToGuard, String> {
    let message: ToGuard = serde_json::from_str(line).map_err(|e| format!("not a member message: {e}"))?;
    match &message {
        ToGuard::Hello(hello) if hello.v != PROTOCOL => {
            Err(format!("protocol version {} (this guard speaks {PROTOCOL})", hello.v))
        }
        _ => Ok(message),
    }
}

/// A guard's line, or why it is refused.
pub fn decode_to_member(line: &str) -> Result<ToMember, String> {
    serde_json::from_str(line).map_err(|e| format!("not a guard message: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello() -> Hello {
        Hello {
            v: PROTOCOL,
            pid: 42,
            client_name: None,
            client_version: None,
            session: Some("a1b2".into()),
            transport: "stdio".into(),
            since: 1,
            host: false,
        }
    }

    #[test]
    fn messages_are_one_line_of_tagged_json_and_read_back() {
        let state = ToGuard::State(MemberState {
            stopped: true,
            stop_id: Some("00ff".into()),
            acting: false,
            calls: None,
        });
        let line = encode(&state);
        assert_eq!(line, "{\"type\":\"state\",\"stopped\":true,\"stopId\":\"00ff\",\"acting\":false}\n");
        assert_eq!(decode_to_guard(&line), Ok(state));
        let action = ToGuard::Action { line: "typed 3 characters\ninto x".into() };
        assert_eq!(encode(&action).matches('\n').count(), 1);
        let claim = ToMember::Rearm(PressClaim {
            press: ClaimEvent { time: 7, button: Some(1), key: None, down: true },
            release: Some(ClaimEvent { time: 9, button: Some(1), key: None, down: false }),
            shown_ms_before: 900,
            binding: None,
        });
        assert!(!encode(&claim).contains("binding"), "an X11 claim reads as before");
        assert_eq!(decode_to_member(&encode(&claim)), Ok(claim.clone()));
        let ToMember::Rearm(press) = claim else { unreachable!("a re-arm was built above") };
        let end = ToMember::End(press);
        assert!(encode(&end).starts_with("{\"type\":\"end\",\"press\":"), "{}", encode(&end));
        assert!(decode_to_guard(&encode(&end)).is_err(), "a member cannot send an End");
        assert_eq!(decode_to_member(&encode(&end)), Ok(end));
        let refused = ToGuard::EndRefused { reason: "synthetic".into() };
        assert_eq!(encode(&refused), "{\"type\":\"endRefused\",\"reason\":\"synthetic\"}\n");
        assert_eq!(decode_to_guard(&encode(&refused)), Ok(refused));
        assert_eq!(decode_to_member("{\"type\":\"handover\"}"), Ok(ToMember::Handover));
        let denied = ToMember::ConsentAnswer { id: 3, answer: ConsentAnswer::Denied };
        assert_eq!(encode(&denied), "{\"type\":\"consentAnswer\",\"id\":3,\"answer\":\"denied\"}\n");
        assert_eq!(decode_to_member(&encode(&denied)), Ok(denied));
        let bound = ToMember::Bound {
            chords: vec![BoundChord {
                control: "re-arm".into(),
                physical: "ab".into(),
                injected: "cd".into(),
            }],
        };
        assert_eq!(
            encode(&bound),
            "{\"type\":\"bound\",\"chords\":[{\"control\":\"re-arm\",\"physical\":\"ab\",\"injected\":\"cd\"}]}\n"
        );
        assert_eq!(decode_to_member(&encode(&bound)), Ok(bound.clone()));
        assert!(decode_to_guard(&encode(&bound)).is_err(), "a member cannot announce bindings");
        let ask = ToGuard::Consent { id: 3, reason: "to save".into(), commands: vec!["launch".into()] };
        assert_eq!(decode_to_guard(&encode(&ask)), Ok(ask));
    }

    #[test]
    fn another_version_or_garbage_is_refused() {
        let old = ToGuard::Hello(Hello { v: PROTOCOL + 1, ..hello() });
        assert!(decode_to_guard(&encode(&old)).unwrap_err().contains("protocol version"));
        assert!(decode_to_guard("{\"type\":\"rearm\"}").is_err(), "a member cannot send a guard's message");
        assert!(decode_to_member("{\"type\":\"state\",\"stopped\":false,\"acting\":false}").is_err());
        assert!(decode_to_guard("hello").is_err());
    }

    #[test]
    fn a_member_is_named_by_its_client_then_its_session_then_its_pid() {
        assert_eq!(hello().label(), "session a1b2");
        assert_eq!(Hello { client_name: Some("claude-code\n".into()), ..hello() }.label(), "claude-code");
        assert_eq!(Hello { session: None, ..hello() }.label(), "pid 42");
    }
}
