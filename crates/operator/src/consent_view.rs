//! What the consent prompt shows, and how the core opens, refuses and closes it: state only,
//! with no toolkit in it, so it builds where the prompt itself is not drawn yet (Windows).

use crate::state::OperatorState;

/// What the consent prompt shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentView {
    /// The agent's reason, sanitized by the core.
    pub reason: String,
    /// The commands that are not enabled yet, exactly as named.
    pub commands: Vec<String>,
    /// Why the last `Allow` was not honoured, if it was not.
    pub refusal: Option<String>,
    /// `Allow` was clicked and the core has not answered yet.
    pub checking: bool,
    /// Which agent asks, when the prompt speaks for several (the display's guard).
    pub agent: Option<String>,
    /// How many requests wait behind this one.
    pub behind: usize,
}

impl OperatorState {
    /// Open the consent prompt (core side). The caller sanitized `reason`.
    pub fn open_consent(&self, reason: impl Into<String>, commands: Vec<String>) {
        self.open_consent_for(None, 0, reason, commands);
    }

    /// Open the consent prompt for `agent`'s request, with `behind` more waiting (core side).
    pub fn open_consent_for(
        &self,
        agent: Option<String>,
        behind: usize,
        reason: impl Into<String>,
        commands: Vec<String>,
    ) {
        let view =
            ConsentView { reason: reason.into(), commands, refusal: None, checking: false, agent, behind };
        self.update_consent(|consent| *consent = Some(view));
    }

    /// Close the consent prompt (core side: granted, timed out, stopped). Returns whether it
    /// was open.
    pub fn close_consent(&self) -> bool {
        self.update_consent(|consent| consent.take().is_some())
    }

    /// The core did not honour `Allow`; the prompt shows `message` and stays open.
    pub fn refuse_consent(&self, message: impl Into<String>) {
        let message = message.into();
        self.update_consent(|consent| {
            if let Some(view) = consent {
                view.refusal = Some(message);
                view.checking = false;
            }
        });
    }

    /// How many requests wait behind the one shown (core side: the display's guard queues).
    pub fn set_consent_behind(&self, behind: usize) {
        self.update_consent(|consent| {
            if let Some(view) = consent {
                view.behind = behind;
            }
        });
    }

    pub(crate) fn mark_consent_checking(&self) {
        self.update_consent(|consent| {
            if let Some(view) = consent {
                view.checking = true;
                view.refusal = None;
            }
        });
    }
}
