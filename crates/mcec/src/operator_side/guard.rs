//! The guard of a display: on one display and user, exactly one mcec process shows the
//! operator's windows (the banner and the prompts) and the others register with it over a
//! local socket and show nothing of their own while it is there (issue 25).
//!
//! The election is a lock file per display (`place.rs`); its holder is the guard
//! (`leader.rs`: the socket, its members' states on the one banner, the re-arm claim it sends
//! them), every other process a member (`member.rs`: its state to the guard, the guard's claim
//! judged by its own monitor). A member whose guard goes away elects again, and the winner
//! opens the windows. The console's End reaches a member as a claim it judges like a re-arm
//! claim, then ends its own agent. The stop itself stays in each process: every process has
//! its own monitor, latch and stop worker, so a hung or dead guard never lets an agent act.
//! The messages and every pure decision are `mcec_rules::guard`; `wire.rs` is the socket's
//! plumbing (peer credentials, bounded lines). On sway (`sway.rs`) a press is a chord binding
//! of the guard's source: the guard tells its members commitments to its bindings, each
//! member's own source records their presses, and a claim names the binding, whose press the
//! member judges from its own record.
//!
//! Only a process with operator windows and an armed stop on an identified display takes
//! part; on Windows nothing does yet (one interactive desktop, no socket here).

#[cfg(unix)]
mod leader;
#[cfg(unix)]
mod member;
#[cfg(unix)]
mod place;
#[cfg(unix)]
mod sway;
#[cfg(unix)]
mod wire;

use std::sync::Arc;
#[cfg(unix)]
use std::sync::{Mutex, PoisonError};

use mcec_desktop::monitor::ChordControls;
use mcec_operator::OperatorState;
use mcec_rules::StopFlag;
use mcec_rules::activation::Activation;
use mcec_rules::consent::Outcome;
use mcec_rules::latch::Latch;

use super::end::AgentEnd;
use super::rearm::Rearm;
use crate::attest::Attestor;
use crate::consent::OperatorConsent;

/// Who this process is, for its `hello`.
#[derive(Debug, Clone)]
#[cfg_attr(not(unix), allow(dead_code, reason = "no guard outside Unix yet"))]
pub struct Who {
    /// The session copy's id, `None` for a manual copy.
    pub session: Option<String>,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// Plain `mcec`, the host window: the preferred guard.
    pub host: bool,
}

/// What the guard's parts act on.
#[derive(Clone)]
#[cfg_attr(not(unix), allow(dead_code, reason = "no guard outside Unix yet"))]
pub(super) struct Sides {
    pub ui: OperatorState,
    pub latch: Latch,
    pub rearm: Rearm,
    pub who: Who,
    /// This process's consent prompt, through which a guard asks for its members.
    pub consent: Option<Arc<OperatorConsent>>,
    /// Ends this process's agent when a member's End claim is judged the operator's.
    pub end: Arc<AgentEnd>,
    /// The prompts' chords where the monitor answers them (sway): as the guard, what its
    /// source binds (told to the members) and the binding each press fired (named in a
    /// claim); as a member, the guard's bindings and this process's record of their presses.
    pub chords: ChordControls,
}

/// This process's place in its display's guard, for the windows' event handler and the
/// consent asker.
#[derive(Clone, Default)]
pub struct GuardLink {
    /// As the guard: its members.
    #[cfg(unix)]
    leading: Arc<Mutex<Option<Arc<leader::Leader>>>>,
    /// As a member: the connection to the guard.
    #[cfg(unix)]
    member: Arc<Mutex<Option<Arc<member::Connection>>>>,
}

#[cfg(unix)]
impl GuardLink {
    /// Whether this process is its display's guard and has members to speak for.
    pub fn leads_others(&self) -> bool {
        self.leading.lock().unwrap_or_else(PoisonError::into_inner).as_ref().is_some_and(|l| l.has_members())
    }

    /// As the guard: tell every member the operator pressed `Re-arm` with `by` (each judges
    /// it itself).
    pub fn claim_rearm(&self, by: &Activation) {
        if let Some(leader) = self.leading.lock().unwrap_or_else(PoisonError::into_inner).clone() {
            leader.claim_rearm(by);
        }
    }

    /// As the guard: tell member `id` the operator pressed `End` for its agent with `by` (it
    /// judges that itself). The member's label, or `None` when no such member is connected.
    pub fn claim_end(&self, id: u64, by: &Activation) -> Option<String> {
        let leader = self.leading.lock().unwrap_or_else(PoisonError::into_inner).clone()?;
        leader.claim_end(id, by)
    }

    /// As a member: put an agent's request to the guard's one prompt, and judge an `Allow`
    /// there with this process's own monitor. `None` when no guard is connected.
    pub fn ask_guard(
        &self,
        reason: &str,
        commands: &[String],
        stop: &StopFlag,
        attestor: &Attestor,
    ) -> Option<Outcome> {
        let connection = self.member.lock().unwrap_or_else(PoisonError::into_inner).clone()?;
        Some(connection.ask(reason, commands, stop, attestor))
    }
}

/// No guard outside Unix yet: every process is alone.
#[cfg(not(unix))]
impl GuardLink {
    pub fn leads_others(&self) -> bool {
        false
    }

    pub fn claim_rearm(&self, _by: &Activation) {}

    pub fn claim_end(&self, _id: u64, _by: &Activation) -> Option<String> {
        None
    }

    pub fn ask_guard(&self, _: &str, _: &[String], _: &StopFlag, _: &Attestor) -> Option<Outcome> {
        None
    }
}

/// Take part in the display's guard, on a thread of its own, when this process shows operator
/// windows on an identified display; `None` otherwise (it then shows its own windows, as a
/// lone process always did). The windows start hidden ([`hide_until_elected`]) so that no
/// second banner flashes up before the election.
pub(super) fn take_part(sides: Sides, link: GuardLink) -> Option<GuardLink> {
    #[cfg(unix)]
    {
        let place = place::Place::for_this_process()?;
        let thread_link = link.clone();
        super::spawn("mcec-guard", move || member::elect(place, sides, thread_link));
        Some(link)
    }
    #[cfg(not(unix))]
    {
        let _ = (sides, link);
        None
    }
}

/// Whether this process will take part (so its windows start hidden until it knows whether it
/// is the guard).
pub(super) fn hide_until_elected() -> bool {
    #[cfg(unix)]
    {
        place::Place::for_this_process().is_some()
    }
    #[cfg(not(unix))]
    {
        false
    }
}
