//! The guard's one consent prompt: requests from several agents wait in one queue, in the order
//! they arrived, and the prompt shows the oldest, naming its agent and how many wait behind it.
//! A stop outranks consent: while anything is stopped the re-arm prompt is the one on screen.

use std::collections::VecDeque;

use crate::StopFlag;

/// Which of the guard's prompts is on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    Rearm,
    Consent,
}

/// At most one prompt: the re-arm prompt while anything is stopped (and it is open), else the
/// consent prompt while a request waits.
pub fn prompt_on_top(rearm_open: bool, consent_waiting: bool) -> Option<Prompt> {
    match (rearm_open, consent_waiting) {
        (true, _) => Some(Prompt::Rearm),
        (false, true) => Some(Prompt::Consent),
        (false, false) => None,
    }
}

/// One member's request in the queue.
#[derive(Debug, Clone)]
pub struct Queued {
    /// The member's connection, as the guard numbers them.
    pub member: u64,
    /// The member's number for the request.
    pub id: u64,
    /// What the prompt calls the agent.
    pub agent: String,
    pub reason: String,
    pub commands: Vec<String>,
    /// Set when the request ends on the member's side (the prompt then closes).
    pub withdrawn: StopFlag,
}

/// The requests, oldest first.
#[derive(Debug, Default)]
pub struct ConsentQueue {
    waiting: VecDeque<Queued>,
}

impl ConsentQueue {
    pub fn push(&mut self, request: Queued) {
        self.waiting.push_back(request);
    }

    /// The request to show: the oldest.
    pub fn front(&self) -> Option<&Queued> {
        self.waiting.front()
    }

    /// How many wait behind the one shown.
    pub fn behind(&self) -> usize {
        self.waiting.len().saturating_sub(1)
    }

    /// Take out the request `id` of `member` (answered or withdrawn), ending its prompt.
    pub fn remove(&mut self, member: u64, id: u64) -> Option<Queued> {
        let at = self.waiting.iter().position(|q| q.member == member && q.id == id)?;
        let gone = self.waiting.remove(at)?;
        gone.withdrawn.set();
        Some(gone)
    }

    /// Take out every request of a member that went away.
    pub fn remove_member(&mut self, member: u64) {
        self.waiting.retain(|q| {
            if q.member == member {
                q.withdrawn.set();
            }
            q.member != member
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(member: u64, id: u64) -> Queued {
        Queued {
            member,
            id,
            agent: format!("pid {member}"),
            reason: "to save the file".into(),
            commands: vec!["launch".into()],
            withdrawn: StopFlag::new(),
        }
    }

    #[test]
    fn the_oldest_request_is_shown_and_the_rest_wait_in_order() {
        let mut queue = ConsentQueue::default();
        assert!(queue.front().is_none());
        queue.push(ask(1, 7));
        queue.push(ask(2, 1));
        queue.push(ask(1, 8));
        assert_eq!((queue.front().map(|q| (q.member, q.id)), queue.behind()), (Some((1, 7)), 2));
        let answered = queue.remove(1, 7).expect("there");
        assert!(answered.withdrawn.is_set(), "its prompt ends");
        assert_eq!(queue.front().map(|q| (q.member, q.id)), Some((2, 1)));
        queue.remove_member(2);
        assert_eq!((queue.front().map(|q| (q.member, q.id)), queue.behind()), (Some((1, 8)), 0));
        assert!(queue.remove(2, 1).is_none());
    }

    #[test]
    fn a_stop_outranks_consent_and_one_prompt_at_most_is_shown() {
        assert_eq!(prompt_on_top(true, true), Some(Prompt::Rearm));
        assert_eq!(prompt_on_top(false, true), Some(Prompt::Consent));
        assert_eq!(prompt_on_top(true, false), Some(Prompt::Rearm));
        assert_eq!(prompt_on_top(false, false), None);
    }
}
