//! The console's End (issue 25), as far as this process goes: the signal that ends its own
//! agent's serving ([`AgentEnd`], which `crate::serve` waits on beside the signals), and the
//! guard's handling of a press on the End prompt's `End` ([`end_pressed`]).
//!
//! The press counts only as Re-arm's does: the events that pressed it are judged against this
//! process's own provenance monitor (`crate::attest`), and an injected or unidentified press
//! is refused with an audit line, ending nothing. For a member's agent the guard only passes
//! the judged press on (`ToMember::End`); the member judges the claim itself with its own
//! monitor before it ends (`guard/member.rs`). What an End then does is
//! `mcec_rules::guard::EndEffect`.

use std::sync::atomic::{AtomicBool, Ordering};

use mcec_mcp::audit::audit;
use mcec_rules::activation::Activation;
use mcec_rules::guard::Whose;
use tokio::sync::Notify;

use super::guard::GuardLink;
use super::rearm::Rearm;

/// Set once the operator's attested End reached this process: its agent's serving ends.
#[derive(Debug, Default)]
pub struct AgentEnd {
    ended: AtomicBool,
    notify: Notify,
}

impl AgentEnd {
    /// End this process's agent (the serving loop wakes; a later call changes nothing).
    pub fn end(&self) {
        self.ended.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub fn is_ended(&self) -> bool {
        self.ended.load(Ordering::SeqCst)
    }

    /// Resolves once [`AgentEnd::end`] was called (at once when it already was).
    pub async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            if self.is_ended() {
                return;
            }
            notified.await;
        }
    }
}

/// The End prompt's `End` was pressed by `by` for `whose`: judge the press here, then end this
/// process's own agent or send the judged press to that member. The prompt closes when the
/// End went on, and says why not otherwise.
pub(super) fn end_pressed(
    whose: Whose,
    by: &Activation,
    rearm: &Rearm,
    guard: Option<&GuardLink>,
    end: &AgentEnd,
) {
    let judgement = rearm.attestor.judge(by);
    let answer = |refusal: Option<String>| {
        if let Some(ui) = &rearm.ui {
            ui.end_answered(refusal);
        }
    };
    if let Err(refusal) = judgement.verdict {
        audit("end-refused", &format!("{}: the console's End; {}", refusal.code(), judgement.detail));
        return answer(Some(format!("Not ended: {refusal}")));
    }
    match whose {
        Whose::ThisProcess => {
            audit("agent-ended", &format!("by the operator in the console; {}", judgement.detail));
            answer(None);
            end.end();
            // A host stays without its agent: its row goes and its windows stop saying
            // that an agent acts.
            rearm.agent.forget_client();
            if let Some(ui) = &rearm.ui {
                ui.set_acting(false);
            }
        }
        Whose::Member(id) => match guard.and_then(|g| g.claim_end(id, by)) {
            Some(label) => {
                audit("guard-end-sent", &format!("to {label}; {}", judgement.detail));
                answer(None);
            }
            None => {
                audit("end-refused", &format!("agent-gone: member {id} is no longer connected"));
                answer(Some("Not ended: that agent is no longer connected".into()));
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn an_end_wakes_a_waiter_and_one_that_comes_later() {
        let end = Arc::new(AgentEnd::default());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let waiter = {
            let end = end.clone();
            runtime.spawn(async move { end.wait().await })
        };
        assert!(!end.is_ended());
        end.end();
        runtime.block_on(waiter).expect("the waiter woke");
        runtime.block_on(end.wait());
        assert!(end.is_ended());
    }
}
