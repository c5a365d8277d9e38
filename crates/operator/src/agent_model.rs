//! What the settings window's **Agent** tab shows, as plain values the core fills in.
//!
//! The tab decides nothing: the checkbox shows [`AgentTab::allow_provisioning`] as the core
//! last confirmed it (a click only asks the core to change it), the session list is whatever
//! the core last listed, and the handoff is the text of the core's last provisioning, with
//! the session's bearer token masked ([`HandoffView::masked`]) until the operator reveals it
//! with an attested click: the core keeps the token and hands this model the masked text, so
//! nothing here holds it while it is hidden.

/// One session copy, already formatted for display.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionRow {
    /// 12 lowercase hex characters.
    pub id: String,
    /// e.g. `42s`, `7m`, `3h`.
    pub age: String,
    /// e.g. `12 KiB`, `48.2 MiB`.
    pub size: String,
    /// Whether an instance holds the session's lock.
    pub running: bool,
    /// The copy's state in words (`running`, `not started`, `stale`…), from its own files.
    pub state: String,
}

/// The start of every mask.
const BULLETS: &str = "••••••••";

/// What stands in for a hidden token: bullets, then at most its last 4 characters (none of
/// a token shorter than 16, so a short one is never mostly shown).
pub fn mask_token(token: &str) -> String {
    let count = token.chars().count();
    if count < 16 {
        return BULLETS.to_string();
    }
    let tail: String = token.chars().skip(count - 4).collect();
    format!("{BULLETS}{tail}")
}

/// The handoff of the last `Provision new…`, as the texts the operator copies.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HandoffView {
    /// One or more lines: session id, directory, how to start and end it.
    pub summary: String,
    /// The same session's entries for each client choice, the generic JSON first; the tab
    /// shows and copies the one the operator picked.
    pub clients: Vec<ClientHandoff>,
    /// The texts show [`mask_token`] where the token is; the tab offers `Reveal token…`.
    pub token_hidden: bool,
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
    /// Whether `text` (one of this view's) shows a hidden token's mask: it cannot be copied.
    pub fn hides_token_in(&self, text: &str) -> bool {
        self.token_hidden && text.contains(BULLETS)
    }

    /// This view with every occurrence of `token` in every text replaced by its mask. An
    /// empty token hides nothing.
    pub fn masked(&self, token: &str) -> HandoffView {
        if token.is_empty() {
            return self.clone();
        }
        let mask = mask_token(token);
        let hide = |text: &str| text.replace(token, &mask);
        HandoffView {
            summary: hide(&self.summary),
            clients: self
                .clients
                .iter()
                .map(|c| ClientHandoff {
                    label: hide(&c.label),
                    place: hide(&c.place),
                    stdio: hide(&c.stdio),
                    http: c.http.as_deref().map(hide),
                    note: c.note.as_deref().map(hide),
                })
                .collect(),
            token_hidden: true,
        }
    }

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

    const TOKEN: &str = "87dc288a428d21566651f164cbe92c38a7eb3c82132cdbb67fc221a72d239f3e";

    fn handoff() -> HandoffView {
        HandoffView {
            summary: "Session 0123456789ab".into(),
            clients: vec![
                ClientHandoff {
                    label: "JSON".into(),
                    stdio: r#"{"command": "/s/mcec", "args": ["mcp"]}"#.into(),
                    http: Some(format!(r#"{{"headers": {{"Authorization": "Bearer {TOKEN}"}}}}"#)),
                    ..Default::default()
                },
                ClientHandoff {
                    label: "Codex CLI".into(),
                    note: Some(format!("export MCEC_BEARER_TOKEN='{TOKEN}'")),
                    ..Default::default()
                },
            ],
            token_hidden: false,
        }
    }

    #[test]
    fn a_mask_shows_at_most_the_last_four_characters() {
        assert_eq!(mask_token(TOKEN), "••••••••9f3e");
        assert_eq!(mask_token("short-token"), "••••••••", "a short token shows nothing of itself");
        assert_eq!(mask_token("abcdefghijklmnop"), "••••••••mnop");
    }

    #[test]
    fn a_masked_handoff_holds_the_token_nowhere() {
        let shown = handoff();
        let masked = shown.masked(TOKEN);
        assert!(masked.token_hidden && !shown.token_hidden);
        let everything = format!("{masked:?}");
        assert!(!everything.contains(TOKEN), "{everything}");
        // Nor any 5 characters of it in a row: only the last 4 may show.
        for start in 0..TOKEN.len() - 4 {
            assert!(!everything.contains(&TOKEN[start..start + 5]), "{everything}");
        }
        let http = masked.text("JSON", HandoffPart::Http).expect("http");
        assert!(http.contains("Bearer ••••••••9f3e"), "{http}");
        assert_eq!(masked.clients[1].note.as_deref(), Some("export MCEC_BEARER_TOKEN='••••••••9f3e'"));
        // What holds no token is unchanged.
        assert_eq!(masked.text("JSON", HandoffPart::Stdio), shown.text("JSON", HandoffPart::Stdio));
        assert_eq!(masked.summary, shown.summary);
        assert_eq!(shown.masked(""), shown, "an empty token hides nothing");
        assert!(masked.hides_token_in(http) && !masked.hides_token_in(&masked.clients[0].stdio));
    }
}
