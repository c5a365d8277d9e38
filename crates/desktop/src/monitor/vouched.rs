//! Another process's chord bindings, for the members of a display's guard (sway).
//!
//! With several mcec on one display, only the guard shows the prompts, so only its source binds
//! their chords; but sway sends every fired binding's command to every IPC subscriber, so each
//! member's own source sees the guard's press too. What a member cannot see is on which keyboard
//! a binding was made, so the guard tells it: for every control whose prompt is shown, a
//! commitment (a one-way digest) to the marker bound on the physical keyboards and to the one
//! bound on the virtual keyboard ([`Vouch`]). A commitment, not the marker: anyone of the user can
//! connect to the guard socket, and an unpressed marker must stay unknown (whoever knows it could
//! bind it on the virtual keyboard). A member's source that sees a fired binding whose marker
//! matches a commitment records the press in its own ledger with the provenance the commitment
//! names; the guard's claim then names the marker (revealed by the press, sway sent it to every
//! subscriber), and the member judges its own record of that press, never the guard's event.
//!
//! [`Relayed`] keeps both sides' state: the guard's (what it announced, which marker each of its
//! own presses fired) and the member's (what it adopted, what it saw).

use std::collections::VecDeque;

use mcec_rules::activation::{InputEventId, Provenance};

use super::{CONTROLS, Control};

/// Commitments to one control's two bindings of one showing of its prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vouch {
    /// To the marker bound on the physical keyboards: its press is physical.
    pub physical: String,
    /// To the marker bound on the virtual keyboard: its press is injected.
    pub injected: String,
}

/// Every control's commitments, `None` where no prompt is shown.
pub type Vouches = [Option<Vouch>; CONTROLS];

/// How many presses each side remembers (a claim names a press at most 2 s old).
const KEEP: usize = 16;

/// A press of an adopted binding, as this process's own source saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenPress {
    pub marker: String,
    pub control: Control,
    /// The identity this process's ledger recorded it under.
    pub event: InputEventId,
}

#[derive(Debug, Default)]
pub(super) struct Relayed {
    /// As the guard: what its source binds now.
    pub announced: Vouches,
    /// As the guard: the marker each of its own presses fired, by the press's identity.
    own: VecDeque<(u32, String)>,
    /// As a member: what the guard announced.
    pub adopted: Vouches,
    /// As a member: presses of adopted bindings.
    seen: VecDeque<SeenPress>,
}

impl Relayed {
    pub fn pressed_own(&mut self, time: u32, marker: &str) {
        push(&mut self.own, (time, marker.to_owned()));
    }

    pub fn marker_of(&self, time: u32) -> Option<String> {
        self.own.iter().rev().find(|(t, _)| *t == time).map(|(_, m)| m.clone())
    }

    /// The control and provenance an adopted commitment names; that binding is spent (the
    /// guard binds a fresh one after any press).
    pub fn take_adopted(&mut self, commitment: &str) -> Option<(Control, Provenance)> {
        Control::ALL.into_iter().zip(self.adopted.iter_mut()).find_map(|(control, slot)| {
            let vouch = slot.as_ref()?;
            let provenance = if vouch.physical == commitment {
                Provenance::Physical
            } else if vouch.injected == commitment {
                Provenance::Injected
            } else {
                return None;
            };
            *slot = None;
            Some((control, provenance))
        })
    }

    pub fn saw(&mut self, press: SeenPress) {
        push(&mut self.seen, press);
    }

    pub fn witnessed(&self, marker: &str) -> Option<SeenPress> {
        self.seen.iter().rev().find(|p| p.marker == marker).cloned()
    }
}

fn push<T>(ring: &mut VecDeque<T>, item: T) {
    if ring.len() == KEEP {
        ring.pop_front();
    }
    ring.push_back(item);
}
