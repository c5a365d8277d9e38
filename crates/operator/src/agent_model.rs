//! What the settings window's **Agent** tab shows, as plain values the core fills in.
//!
//! The tab decides nothing: the checkbox shows [`AgentTab::allow_provisioning`] as the core
//! last confirmed it (a click only asks the core to change it), the session list is whatever
//! the core last listed, and the handoff is the text of the core's last provisioning.

/// One session copy, already formatted for display.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionRow {
    /// 12 lowercase hex characters.
    pub id: String,
    /// e.g. `42s`, `7m`, `3h`.
    pub age: String,
    /// e.g. `12 KiB`, `48.2 MiB`.
    pub size: String,
    /// Whether an instance holds the session's lock (otherwise it is stale).
    pub running: bool,
}

/// The handoff of the last `Provision new…`, as the texts the operator copies.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HandoffView {
    /// One or more lines: session id, directory, how to start and end it.
    pub summary: String,
    /// The same session's entries for each client choice, the generic JSON first; the tab
    /// shows and copies the one the operator picked.
    pub clients: Vec<ClientHandoff>,
}

/// One client's entries for a provisioned session, in that client's own format.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClientHandoff {
    /// The client's name on its choice button, e.g. `Codex CLI`.
    pub label: String,
    /// Where the entry goes, e.g. `~/.codex/config.toml`.
    pub place: String,
    /// The entry for stdio (the client starts the copy).
    pub stdio: String,
    /// The entry for HTTP with the bearer, when the copy serves HTTP and the client can take it.
    pub http: Option<String>,
    /// What the operator must know besides (why there is no HTTP entry, where the bearer goes).
    pub note: Option<String>,
}

/// Which of a handoff's entries a `Copy` button puts on the clipboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandoffPart {
    Stdio,
    Http,
}

impl HandoffView {
    /// The text of `part` for the client labelled `label`.
    pub fn text(&self, label: &str, part: HandoffPart) -> Option<&str> {
        let client = self.clients.iter().find(|c| c.label == label)?;
        match part {
            HandoffPart::Stdio => Some(&client.stdio),
            HandoffPart::Http => client.http.as_deref(),
        }
    }
}

/// The last outcome the core reported on the tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentMessage {
    pub text: String,
    /// A refusal or failure (shown in red) rather than a confirmation.
    pub is_error: bool,
}

impl AgentMessage {
    pub fn info(text: impl Into<String>) -> Self {
        Self { text: text.into(), is_error: false }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self { text: text.into(), is_error: true }
    }
}

/// Everything the Agent tab draws.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgentTab {
    /// `AllowSessionProvisioning` as the running copy applies it.
    pub allow_provisioning: bool,
    /// This process is a session copy: the checkbox is disabled.
    pub in_session_copy: bool,
    /// Oldest first.
    pub sessions: Vec<SessionRow>,
    /// Where the sessions live, shown under the list.
    pub sessions_root: String,
    pub handoff: Option<HandoffView>,
    pub message: Option<AgentMessage>,
    /// A request was sent and the core has not answered yet.
    pub pending: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::OperatorState;

    #[test]
    fn agent_tab_is_what_the_core_set() {
        let st = OperatorState::new();
        assert!(!st.snapshot().settings_open);
        st.open_settings();
        st.update_agent_tab(|tab| {
            tab.allow_provisioning = true;
            tab.sessions.push(SessionRow { id: "0123456789ab".into(), ..Default::default() });
        });
        st.mark_agent_pending();
        let s = st.snapshot();
        assert!(s.settings_open && s.agent.allow_provisioning && s.agent.pending);
        assert_eq!(s.agent.sessions.len(), 1);
        st.close_settings();
        assert!(!st.snapshot().settings_open);
    }
}
