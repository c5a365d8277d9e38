//! The guard's chord bindings across the guard socket (sway).
//!
//! On sway the prompts are answered by chords bound in sway by the process that shows them, the
//! guard; a press is a `binding` event that sway sends to every subscriber, so each member's own
//! source sees it too, but cannot tell on which keyboard it was bound. The guard tells its
//! members commitments to its bindings' markers whenever they change ([`bound_message`]), a
//! member adopts them only from the guard lock's holder ([`adopted`]) and its source records the
//! presses of those bindings in its own ledger, and the guard's claim names the binding its
//! press fired ([`claim`]). The member then judges its own record of that press
//! ([`own_activation`]), never the guard's identity of it: a claim whose binding its own
//! source never saw pressed is refused. On X11 none of this applies (no source offers chords):
//! every process's monitor sees the same event under the same identity.

use std::time::Instant;

use mcec_desktop::monitor::{ChordControls, Control, Vouch, Vouches};
use mcec_rules::activation::{Activation, ActivationEvents};
use mcec_rules::guard::{BoundChord, ClaimRefusal, PressClaim, ToMember, claim_of, witnessed_activation};

/// Guard side: the announcement of `vouches` as its message to the members.
pub fn bound_message(vouches: &Vouches) -> ToMember {
    let chords = Control::ALL
        .into_iter()
        .zip(vouches)
        .filter_map(|(control, vouch)| {
            let vouch = vouch.as_ref()?;
            Some(BoundChord {
                control: control.name().into(),
                physical: vouch.physical.clone(),
                injected: vouch.injected.clone(),
            })
        })
        .collect();
    ToMember::Bound { chords }
}

/// Member side: the guard's announced `chords` as this process keeps them. An unknown control or
/// a commitment that is not a SHA-256 in hex is left out.
pub fn adopted(chords: &[BoundChord]) -> Vouches {
    let mut vouches: Vouches = Default::default();
    let digest = |d: &str| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit());
    for chord in chords.iter().filter(|c| digest(&c.physical) && digest(&c.injected)) {
        if let Some(control) = Control::from_name(&chord.control) {
            vouches[control.index()] =
                Some(Vouch { physical: chord.physical.clone(), injected: chord.injected.clone() });
        }
    }
    vouches
}

/// Guard side: the claim for the activation `by`, naming the binding its press fired when it
/// was one of this process's chord bindings.
pub fn claim(chords: &ChordControls, by: &Activation, now: Instant) -> Option<PressClaim> {
    let mut claim = claim_of(by, now)?;
    if let Some(ActivationEvents::Key { press }) = by.events {
        claim.binding = chords.marker_of(press.time);
    }
    Some(claim)
}

/// Member side: the activation to judge for a claim of `control` from the lock's holder (`act`,
/// from `claim_activation`). Where this process's prompts are answered by chord (its source
/// offers one for `control`), its own record of the press of the binding the claim names;
/// elsewhere `act` as it is (its own monitor saw the same event under the same identity).
pub fn own_activation(
    chords: &ChordControls,
    claim: &PressClaim,
    act: Activation,
    control: Control,
) -> Result<Activation, ClaimRefusal> {
    if chords.offered(control).is_none() {
        return Ok(act);
    }
    witnessed_activation(claim, act, control.name(), |marker| {
        chords.witnessed(marker).map(|seen| (seen.control.name(), seen.event))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcec_desktop::monitor::{LastPhysicalInput, Provenance};
    use mcec_rules::hotkey::Hotkey;

    fn vouch(p: char, i: char) -> Vouch {
        Vouch { physical: p.to_string().repeat(64), injected: i.to_string().repeat(64) }
    }

    #[test]
    fn the_announcement_reads_back_and_junk_is_left_out() {
        let mut vouches: Vouches = Default::default();
        vouches[Control::End.index()] = Some(vouch('a', 'b'));
        let ToMember::Bound { mut chords } = bound_message(&vouches) else { unreachable!("a bound message") };
        assert_eq!(chords.len(), 1);
        assert_eq!(chords[0].control, "end");
        assert_eq!(adopted(&chords), vouches);
        chords.push(BoundChord {
            control: "launch".into(),
            physical: "c".repeat(64),
            injected: "d".repeat(64),
        });
        chords.push(BoundChord {
            control: "re-arm".into(),
            physical: "mcec-re-arm-00".into(),
            injected: "d".repeat(64),
        });
        assert_eq!(adopted(&chords), vouches, "an unknown control and a marker in clear are not adopted");
    }

    #[test]
    fn a_member_on_sway_judges_its_own_record_of_the_named_binding() {
        let guard = ChordControls::default();
        let ledger = LastPhysicalInput::new();
        guard.shown(Control::Rearm, Some(Instant::now()));
        let generation = guard.showing()[Control::Rearm.index()].generation;
        let (tx, rx) = std::sync::mpsc::channel();
        guard.on_press(move |_, by| tx.send(by).expect("sent"));
        assert!(guard.pressed(
            Control::Rearm,
            generation,
            "mcec-re-arm-01",
            27,
            Provenance::Physical,
            &ledger
        ));
        let by = rx.recv().expect("the press");
        let claimed = claim(&guard, &by, Instant::now()).expect("a claim");
        assert_eq!(claimed.binding.as_deref(), Some("mcec-re-arm-01"));

        let member = ChordControls::default();
        let act = Activation { events: None, shown_at: None };
        assert_eq!(own_activation(&member, &claimed, act, Control::Rearm), Ok(act), "X11: as it is");
        member.offer(Control::Rearm, Hotkey::default());
        member.offer(Control::End, Hotkey::default());
        assert_eq!(own_activation(&member, &claimed, act, Control::Rearm), Err(ClaimRefusal::NotSeen));
        let mut vouches: Vouches = Default::default();
        vouches[Control::Rearm.index()] = Some(Vouch { physical: "a".repeat(64), injected: "b".repeat(64) });
        member.adopt(vouches);
        let own = LastPhysicalInput::new();
        // The member's source saw the guard's binding fire; its marker matched the commitment.
        assert!(member.pressed_vouched(&"a".repeat(64), "mcec-re-arm-01", 27, &own));
        let mine = own_activation(&member, &claimed, act, Control::Rearm).expect("seen here");
        let Some(ActivationEvents::Key { press }) = mine.events else { unreachable!("a key press") };
        assert!(own.witness(&press).physical.is_some());
        assert_eq!(own_activation(&member, &claimed, act, Control::End), Err(ClaimRefusal::OtherControl));
    }
}
