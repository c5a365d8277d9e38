//! What the host window's console says about the agents on its display (issue 25): one row
//! per mcec serving an agent (the guard's members and the guard itself) and the shared
//! activity list. Pure, so every word the operator reads is decided and tested here; the
//! guard's leader fills these from its members' `hello`, state and action messages, the
//! host window only draws them.

use super::{Hello, MAX_TEXT, MemberState};
use crate::text::ellipsize;

/// How many actions the activity list keeps (all agents together).
pub const ACTIVITY_LINES: usize = 50;

/// What an agent's mcec is doing, as the console says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentState {
    Acting,
    Idle,
    Waiting,
    Stopped,
}

impl AgentState {
    /// A stop outranks everything; a request waiting for the operator outranks acting.
    pub fn of(state: &MemberState, waiting_for_consent: bool) -> AgentState {
        if state.stopped {
            AgentState::Stopped
        } else if waiting_for_consent {
            AgentState::Waiting
        } else if state.acting {
            AgentState::Acting
        } else {
            AgentState::Idle
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            AgentState::Acting => "acting",
            AgentState::Idle => "idle",
            AgentState::Waiting => "waiting for consent",
            AgentState::Stopped => "stopped",
        }
    }
}

/// Which process a row of the Agents list is, so that its End reaches that one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Whose {
    /// The guard's own process (the host window's own agent).
    ThisProcess,
    /// The guard's member of this id (the guard numbers its connections, never reusing an id,
    /// so an End asked for a member that left reaches nobody).
    Member(u64),
}

/// One row of the console's Agents list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRow {
    /// The client's name (else the session or pid, as [`Hello::label`]).
    pub label: String,
    pub version: Option<String>,
    /// The session copy's id; `None` for a manual copy.
    pub session: Option<String>,
    pub transport: String,
    /// When the mcec started, in seconds since the Unix epoch.
    pub since: u64,
    /// Calls its agent made since it started, when known.
    pub calls: Option<u64>,
    /// Its agent's last action in plain words (`crate::narration`).
    pub last_action: Option<String>,
    pub state: AgentState,
    /// The process this row is.
    pub whose: Whose,
}

impl AgentRow {
    /// A row from what a member said (its words cut again: a member is not trusted to have).
    pub fn of(
        whose: Whose,
        hello: &Hello,
        state: &MemberState,
        waiting: bool,
        last_action: Option<&str>,
    ) -> AgentRow {
        let clean = |s: &str, n: usize| ellipsize(s.replace(char::is_control, " ").trim(), n);
        AgentRow {
            label: hello.label(),
            version: hello.client_version.as_deref().map(|v| clean(v, 24)),
            session: hello.session.as_deref().map(|s| clean(s, 40)),
            transport: clean(&hello.transport, 16),
            since: hello.since,
            calls: state.calls,
            last_action: last_action.map(|a| clean(a, MAX_TEXT)),
            state: AgentState::of(state, waiting),
            whose,
        }
    }

    /// This row is the guard's own process.
    pub fn this_process(&self) -> bool {
        self.whose == Whose::ThisProcess
    }

    /// `claude-code 1.2.3`, or the label alone.
    pub fn client(&self) -> String {
        match &self.version {
            Some(version) if !version.is_empty() => format!("{} {version}", self.label),
            _ => self.label.clone(),
        }
    }

    /// `session 3f2a…` or `manual copy`.
    pub fn copy(&self) -> String {
        match &self.session {
            Some(session) => format!("session {session}"),
            None => "manual copy".into(),
        }
    }

    /// The row's second line: copy, transport, age, calls, state.
    pub fn details(&self, now: u64) -> String {
        let calls = match self.calls {
            Some(1) => ", 1 call".to_string(),
            Some(n) => format!(", {n} calls"),
            None => String::new(),
        };
        format!(
            "{}, {}, for {}{calls}: {}",
            self.copy(),
            self.transport,
            age(self.since, now),
            self.state.word()
        )
    }
}

/// How long since `since` (seconds since the epoch), in its largest whole unit.
pub fn age(since: u64, now: u64) -> String {
    let s = now.saturating_sub(since);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// One entry of the activity list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityLine {
    /// When, in seconds since the Unix epoch.
    pub at: u64,
    /// Which agent (a row's label).
    pub agent: String,
    /// The action in plain words (`crate::narration`).
    pub line: String,
}

impl ActivityLine {
    /// `21:03:07 UTC  claude-code: clicked Save in Editor`.
    pub fn text(&self) -> String {
        let day = self.at % 86400;
        format!("{:02}:{:02}:{:02} UTC  {}: {}", day / 3600, day / 60 % 60, day % 60, self.agent, self.line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::PROTOCOL;

    fn hello() -> Hello {
        Hello {
            v: PROTOCOL,
            pid: 7,
            client_name: Some("claude-code".into()),
            client_version: Some("1.2.3".into()),
            session: None,
            transport: "stdio".into(),
            since: 1000,
            host: false,
        }
    }

    #[test]
    fn the_state_word_puts_a_stop_first_then_a_waiting_request_then_acting() {
        let st = |stopped, acting| MemberState { stopped, acting, ..MemberState::default() };
        assert_eq!(AgentState::of(&st(true, true), true).word(), "stopped");
        assert_eq!(AgentState::of(&st(false, true), true).word(), "waiting for consent");
        assert_eq!(AgentState::of(&st(false, true), false).word(), "acting");
        assert_eq!(AgentState::of(&st(false, false), false).word(), "idle");
    }

    #[test]
    fn a_row_says_client_copy_transport_age_calls_and_state() {
        let state = MemberState { acting: true, calls: Some(3), ..MemberState::default() };
        let row = AgentRow::of(Whose::Member(1), &hello(), &state, false, Some("captured the screen"));
        assert_eq!(row.client(), "claude-code 1.2.3");
        assert_eq!(row.details(1075), "manual copy, stdio, for 1m, 3 calls: acting");
        assert_eq!(row.last_action.as_deref(), Some("captured the screen"));
        let session = Hello { session: Some("a1b2".into()), client_version: None, ..hello() };
        let row = AgentRow::of(
            Whose::Member(1),
            &session,
            &MemberState { calls: Some(1), ..MemberState::default() },
            false,
            None,
        );
        assert_eq!(row.client(), "claude-code");
        assert_eq!(row.details(1000), "session a1b2, stdio, for 0s, 1 call: idle");
        let unknown = AgentRow::of(Whose::Member(1), &hello(), &MemberState::default(), false, None);
        assert_eq!(unknown.details(1000), "manual copy, stdio, for 0s: idle", "no count when none was sent");
    }

    #[test]
    fn a_members_words_are_cleaned_and_cut() {
        let noisy = Hello { client_version: Some("1\n2".into()), transport: "x".repeat(100), ..hello() };
        let row =
            AgentRow::of(Whose::Member(1), &noisy, &MemberState::default(), false, Some(&"y".repeat(500)));
        assert_eq!(row.version.as_deref(), Some("1 2"));
        assert!(row.transport.ends_with('…') && row.transport.chars().count() <= 17, "{}", row.transport);
        let action = row.last_action.unwrap();
        assert!(action.ends_with('…') && action.chars().count() <= MAX_TEXT + 1);
    }

    #[test]
    fn ages_use_their_largest_unit_and_a_clock_behind_is_zero() {
        assert_eq!(age(100, 159), "59s");
        assert_eq!(age(100, 160), "1m");
        assert_eq!(age(0, 7200), "2h");
        assert_eq!(age(0, 3 * 86400 + 5), "3d");
        assert_eq!(age(100, 50), "0s");
    }

    #[test]
    fn an_activity_line_says_when_who_and_what() {
        let line = ActivityLine {
            at: 86400 * 3 + 3600 * 21 + 60 * 3 + 7,
            agent: "a".into(),
            line: "typed 3 characters".into(),
        };
        assert_eq!(line.text(), "21:03:07 UTC  a: typed 3 characters");
    }
}
