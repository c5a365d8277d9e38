//! Whether a member takes the guard's word that the operator pressed `Re-arm` (or a consent
//! request's `Allow`, or the console's `End` for its agent).
//!
//! Any program of the same user can connect to the guard's socket or stand up a socket of its
//! own, so a member never re-arms because a message says so. It turns a claim into the
//! [`Activation`] its own prompt would have reported, only when the message came from the
//! process that holds the guard lock ([`claim_activation`]), and then judges that activation
//! exactly as a click on its own prompt: its own monitor's ledger must show that very press
//! (same server time, button or key, direction) from a physical device, nothing injected or
//! forged at its time, no program pointer move just before it, no recent tampering, the press
//! at least [`crate::activation::SHOW_SETTLE`] after the guard's prompt appeared, at most
//! [`crate::latch::REARM_INPUT_MAX_AGE`] old, and (the latch's rule) later than the member's
//! own stop.
//!
//! Where a press is a chord binding of the guard's source (sway), the member's ledger cannot
//! have the guard's identity of the event (a counter of the guard's process): its own source
//! recorded the press of the guard's binding under an identity of its own. There the claim names
//! the binding's marker, and [`witnessed_activation`] turns it into the member's own record of
//! that press (refused when its source saw none, or saw it press another control), which is
//! then judged the same way.

use std::fmt;
use std::time::{Duration, Instant};

use super::{ClaimEvent, PressClaim};
use crate::activation::{Activation, ActivationEvents, InputEventId, Pressed};

/// Why a claim is refused before its event is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimRefusal {
    /// The message did not come from the process that holds the guard lock.
    NotTheGuard { peer: Option<u32>, holder: Option<u32> },
    /// An event names both or neither of a button and a key, or a click's release is missing.
    Malformed,
    /// Prompts are answered by chord bindings here, and this process's own source saw no
    /// press of the binding the claim names (or the claim names none).
    NotSeen,
    /// The binding the claim names pressed another control here.
    OtherControl,
}

impl ClaimRefusal {
    /// A short machine-readable word for the audit line.
    pub fn code(&self) -> &'static str {
        match self {
            ClaimRefusal::NotTheGuard { .. } => "not-from-guard",
            ClaimRefusal::Malformed => "claim-malformed",
            ClaimRefusal::NotSeen => "not-seen",
            ClaimRefusal::OtherControl => "other-control",
        }
    }
}

impl fmt::Display for ClaimRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pid = |p: &Option<u32>| p.map_or_else(|| "unknown".to_string(), |p| p.to_string());
        match self {
            ClaimRefusal::NotTheGuard { peer, holder } => write!(
                f,
                "the guard's message came from pid {} but the guard lock is held by pid {}",
                pid(peer),
                pid(holder)
            ),
            ClaimRefusal::Malformed => f.write_str("the guard's message names no single press and release"),
            ClaimRefusal::NotSeen => f.write_str(
                "this process's own monitor saw no press of the chord binding the guard's message names",
            ),
            ClaimRefusal::OtherControl => {
                f.write_str("the chord binding the guard's message names was pressed for another control")
            }
        }
    }
}

fn event(e: &ClaimEvent) -> Option<InputEventId> {
    let what = match (e.button, e.key) {
        (Some(b), None) => Pressed::Button(b),
        (None, Some(k)) => Pressed::Key(k),
        _ => return None,
    };
    Some(InputEventId { time: e.time, what, down: e.down })
}

/// The activation a claim names, when `peer` (the process at the other end of the socket, from
/// the kernel's peer credentials) is `holder` (the guard lock's holder in the kernel's lock table). The
/// prompt's shown-at time is `received_at` less the claim's `shown_ms_before`: the message's
/// time in transit makes the prompt look younger, never older (the safe direction).
pub fn claim_activation(
    claim: &PressClaim,
    peer: Option<u32>,
    holder: Option<u32>,
    received_at: Instant,
) -> Result<Activation, ClaimRefusal> {
    if peer.is_none() || peer != holder {
        return Err(ClaimRefusal::NotTheGuard { peer, holder });
    }
    let press = event(&claim.press).ok_or(ClaimRefusal::Malformed)?;
    let events = match (&claim.release, press.what) {
        (Some(release), Pressed::Button(_)) => {
            ActivationEvents::Click { press, release: event(release).ok_or(ClaimRefusal::Malformed)? }
        }
        (None, Pressed::Key(_)) => ActivationEvents::Key { press },
        _ => return Err(ClaimRefusal::Malformed),
    };
    let shown_at = received_at.checked_sub(Duration::from_millis(claim.shown_ms_before));
    Ok(Activation { events: Some(events), shown_at })
}

/// Longest binding marker a claim may name (`mcec-<control>-<16 hex digits>` is 29 bytes).
pub const MAX_MARKER: usize = 64;

/// Where this process's prompts are answered by chord bindings (sway): the activation `act` (from
/// [`claim_activation`]) with its event replaced by this process's own record of the press of the
/// binding `claim` names. `seen` looks that record up by marker: the control it pressed (by name)
/// and the identity this process's ledger has it under. A claim naming no binding, one too long,
/// one never seen pressed here, or one that pressed another control than `control`, is refused.
pub fn witnessed_activation(
    claim: &PressClaim,
    act: Activation,
    control: &str,
    seen: impl FnOnce(&str) -> Option<(&'static str, InputEventId)>,
) -> Result<Activation, ClaimRefusal> {
    let marker = claim.binding.as_deref().filter(|m| m.len() <= MAX_MARKER).ok_or(ClaimRefusal::NotSeen)?;
    let (pressed, press) = seen(marker).ok_or(ClaimRefusal::NotSeen)?;
    if pressed != control {
        return Err(ClaimRefusal::OtherControl);
    }
    Ok(Activation { events: Some(ActivationEvents::Key { press }), ..act })
}

/// The claim a guard sends for the activation that pressed its prompt's `Re-arm`, sent at
/// `now`; `None` when the window could not name the event (nothing to claim).
pub fn claim_of(act: &Activation, now: Instant) -> Option<PressClaim> {
    let wire = |e: InputEventId| {
        let (button, key) = match e.what {
            Pressed::Button(b) => (Some(b), None),
            Pressed::Key(k) => (None, Some(k)),
        };
        ClaimEvent { time: e.time, button, key, down: e.down }
    };
    let (press, release) = match act.events? {
        ActivationEvents::Click { press, release } => (wire(press), Some(wire(release))),
        ActivationEvents::Key { press } => (wire(press), None),
    };
    let shown = act.shown_at?;
    let shown_ms_before = u64::try_from(now.saturating_duration_since(shown).as_millis()).unwrap_or(u64::MAX);
    Some(PressClaim { press, release, shown_ms_before, binding: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activation::{ActivationRefusal, Provenance, Witness, activation_verdict};
    use crate::latch::{RearmRefusal, rearm_verdict};

    const GUARD: u32 = 4242;

    fn click(press: u32, release: u32) -> PressClaim {
        PressClaim {
            press: ClaimEvent { time: press, button: Some(1), key: None, down: true },
            release: Some(ClaimEvent { time: release, button: Some(1), key: None, down: false }),
            shown_ms_before: 1500,
            binding: None,
        }
    }

    /// What a member's monitor saw: the raw events with their time, button and provenance.
    struct Ledger(Vec<(u32, bool, Provenance, Instant)>);

    impl Ledger {
        fn witness(&self, e: &InputEventId) -> Witness {
            let mut w = Witness::default();
            for &(time, down, provenance, at) in &self.0 {
                if time != e.time {
                    continue;
                }
                match provenance {
                    Provenance::Physical if down == e.down => w.physical = Some(at),
                    Provenance::Physical => {}
                    other => w.synthetic = Some(w.synthetic.map_or(other, |s| s.max(other))),
                }
            }
            w
        }
    }

    /// The member's whole decision on a claim: the sender, its own ledger, its own stop.
    fn member_verdict(
        claim: &PressClaim,
        peer: Option<u32>,
        ledger: &Ledger,
        stopped_at: Instant,
        now: Instant,
    ) -> Result<(), String> {
        let act = claim_activation(claim, peer, Some(GUARD), now).map_err(|r| r.code().to_string())?;
        let judged = activation_verdict(&act, |e| ledger.witness(e), None, now)
            .map_err(|r: ActivationRefusal| r.code().to_string())?;
        rearm_verdict(&judged.attestation(None), stopped_at, None, now)
            .map_err(|r: RearmRefusal| format!("{r:?}"))
    }

    /// The member's whole decision on an End claim: the re-arm's, without its latch (ending is
    /// allowed whether the member is stopped or not).
    fn end_verdict(
        claim: &PressClaim,
        peer: Option<u32>,
        ledger: &Ledger,
        now: Instant,
    ) -> Result<(), String> {
        let act = claim_activation(claim, peer, Some(GUARD), now).map_err(|r| r.code().to_string())?;
        activation_verdict(&act, |e| ledger.witness(e), None, now)
            .map(|_| ())
            .map_err(|r| r.code().to_string())
    }

    #[test]
    fn an_end_claim_counts_only_for_the_press_the_members_own_monitor_saw() {
        let (_, now, ledger) = scene();
        assert_eq!(end_verdict(&click(1000, 1090), Some(GUARD), &ledger, now), Ok(()), "no stop needed");
        assert_eq!(
            end_verdict(&click(1000, 1090), Some(GUARD + 1), &ledger, now),
            Err("not-from-guard".into()),
            "a same-user program's End message"
        );
        assert_eq!(end_verdict(&click(7, 8), Some(GUARD), &ledger, now), Err("not-physical".into()));
        let injected = Ledger(vec![
            (1000, true, Provenance::Injected, now - Duration::from_millis(300)),
            (1090, false, Provenance::Injected, now - Duration::from_millis(200)),
        ]);
        assert_eq!(end_verdict(&click(1000, 1090), Some(GUARD), &injected, now), Err("synthetic".into()));
    }

    fn scene() -> (Instant, Instant, Ledger) {
        let stopped_at = Instant::now();
        let press_at = stopped_at + Duration::from_secs(3);
        let ledger = Ledger(vec![
            (1000, true, Provenance::Physical, press_at),
            (1090, false, Provenance::Physical, press_at + Duration::from_millis(90)),
        ]);
        (stopped_at, press_at + Duration::from_millis(300), ledger)
    }

    #[test]
    fn the_operators_press_seen_by_the_members_own_monitor_re_arms_it() {
        let (stopped_at, now, ledger) = scene();
        assert_eq!(member_verdict(&click(1000, 1090), Some(GUARD), &ledger, stopped_at, now), Ok(()));
    }

    #[test]
    fn a_claim_from_anyone_but_the_lock_holder_is_refused() {
        let (stopped_at, now, ledger) = scene();
        let refused = member_verdict(&click(1000, 1090), Some(GUARD + 1), &ledger, stopped_at, now);
        assert_eq!(refused, Err("not-from-guard".into()));
        assert_eq!(
            member_verdict(&click(1000, 1090), None, &ledger, stopped_at, now),
            Err("not-from-guard".into())
        );
        let none_holds = claim_activation(&click(1000, 1090), Some(GUARD), None, now);
        assert_eq!(none_holds, Err(ClaimRefusal::NotTheGuard { peer: Some(GUARD), holder: None }));
    }

    #[test]
    fn a_claim_naming_another_event_is_refused() {
        let (stopped_at, now, ledger) = scene();
        let refused = member_verdict(&click(1001, 1090), Some(GUARD), &ledger, stopped_at, now);
        assert_eq!(refused, Err("not-physical".into()), "no physical raw event at the claimed time");
        let mut right_button = click(1000, 1090);
        right_button.press.button = Some(3);
        right_button.release = Some(ClaimEvent { button: Some(3), ..click(1000, 1090).release.unwrap() });
        assert_eq!(
            member_verdict(&right_button, Some(GUARD), &ledger, stopped_at, now),
            Ok(()),
            "the ledger judges by time and direction; the button is the window's to name"
        );
    }

    #[test]
    fn an_injected_event_at_the_claimed_time_is_refused() {
        let (stopped_at, now, mut ledger) = scene();
        let at = now - Duration::from_millis(100);
        ledger.0.push((1090, false, Provenance::Injected, at));
        let refused = member_verdict(&click(1000, 1090), Some(GUARD), &ledger, stopped_at, now);
        assert_eq!(refused, Err("synthetic".into()));
        let (stopped_at, now, _) = scene();
        let injected_only = Ledger(vec![
            (1000, true, Provenance::Injected, now - Duration::from_millis(300)),
            (1090, false, Provenance::Injected, now - Duration::from_millis(200)),
        ]);
        assert_eq!(
            member_verdict(&click(1000, 1090), Some(GUARD), &injected_only, stopped_at, now),
            Err("synthetic".into())
        );
    }

    #[test]
    fn a_press_before_the_members_own_stop_is_refused() {
        let (_, now, ledger) = scene();
        let stopped_later = now - Duration::from_millis(100);
        let refused = member_verdict(&click(1000, 1090), Some(GUARD), &ledger, stopped_later, now);
        assert_eq!(refused, Err("BeforeStop".into()));
    }

    #[test]
    fn an_old_press_or_a_prompt_shown_just_before_it_is_refused() {
        let (stopped_at, now, ledger) = scene();
        let later = now + Duration::from_secs(3);
        let old = PressClaim { shown_ms_before: 5000, ..click(1000, 1090) };
        assert_eq!(member_verdict(&old, Some(GUARD), &ledger, stopped_at, later), Err("stale-input".into()));
        let mut hasty = click(1000, 1090);
        hasty.shown_ms_before = 350;
        assert_eq!(member_verdict(&hasty, Some(GUARD), &ledger, stopped_at, now), Err("too-soon".into()));
    }

    #[test]
    fn a_claim_without_one_press_and_release_is_malformed() {
        let now = Instant::now();
        let mut both = click(1, 2);
        both.press.key = Some(65);
        assert_eq!(claim_activation(&both, Some(GUARD), Some(GUARD), now), Err(ClaimRefusal::Malformed));
        let mut no_release = click(1, 2);
        no_release.release = None;
        assert_eq!(
            claim_activation(&no_release, Some(GUARD), Some(GUARD), now),
            Err(ClaimRefusal::Malformed)
        );
    }

    /// A guard's claim for a chord binding's press: the guard's own counter as its event.
    fn chord_claim(binding: Option<&str>) -> PressClaim {
        PressClaim {
            press: ClaimEvent { time: 1, button: None, key: Some(27), down: true },
            release: None,
            shown_ms_before: 1500,
            binding: binding.map(str::to_string),
        }
    }

    #[test]
    fn a_chord_claim_is_judged_by_the_members_own_record_of_the_binding() {
        let stopped_at = Instant::now();
        let now = stopped_at + Duration::from_secs(3);
        // The member recorded the guard's physical binding under its own identity 7, and its
        // own identity 1 (the guard's counter) is an unrelated physical press of long ago.
        let own = InputEventId { time: 7, what: Pressed::Key(27), down: true };
        let ledger = Ledger(vec![
            (7, true, Provenance::Physical, now - Duration::from_millis(200)),
            (8, true, Provenance::Injected, now - Duration::from_millis(100)),
            (1, true, Provenance::Physical, now - Duration::from_millis(100)),
        ]);
        let seen = |marker: &str| match marker {
            "mcec-re-arm-p" => Some(("re-arm", own)),
            "mcec-re-arm-i" => Some(("re-arm", InputEventId { time: 8, ..own })),
            "mcec-end-p" => Some(("end", own)),
            _ => None,
        };
        let verdict = |claim: &PressClaim, control: &str| -> Result<(), String> {
            let act =
                claim_activation(claim, Some(GUARD), Some(GUARD), now).map_err(|r| r.code().to_string())?;
            let act = witnessed_activation(claim, act, control, seen).map_err(|r| r.code().to_string())?;
            assert_eq!(act.shown_at, now.checked_sub(Duration::from_millis(1500)));
            let judged = activation_verdict(&act, |e| ledger.witness(e), None, now)
                .map_err(|r| r.code().to_string())?;
            rearm_verdict(&judged.attestation(None), stopped_at, None, now).map_err(|r| format!("{r:?}"))
        };
        assert_eq!(verdict(&chord_claim(Some("mcec-re-arm-p")), "re-arm"), Ok(()));
        assert_eq!(verdict(&chord_claim(Some("mcec-re-arm-i")), "re-arm"), Err("synthetic".into()));
        assert_eq!(verdict(&chord_claim(Some("mcec-re-arm-forged")), "re-arm"), Err("not-seen".into()));
        assert_eq!(
            verdict(&chord_claim(None), "re-arm"),
            Err("not-seen".into()),
            "the guard's own identity is never looked up in the member's ledger"
        );
        assert_eq!(verdict(&chord_claim(Some("mcec-end-p")), "re-arm"), Err("other-control".into()));
        assert_eq!(verdict(&chord_claim(Some("mcec-end-p")), "end"), Ok(()));
        let long = format!("mcec-re-arm-{}", "0".repeat(MAX_MARKER));
        assert_eq!(verdict(&chord_claim(Some(&long)), "re-arm"), Err("not-seen".into()));
    }

    #[test]
    fn the_guard_claims_what_its_window_named() {
        let now = Instant::now();
        let shown = now.checked_sub(Duration::from_millis(800)).expect("an instant 0.8 s back");
        let events = ActivationEvents::Click {
            press: InputEventId { time: 5, what: Pressed::Button(1), down: true },
            release: InputEventId { time: 6, what: Pressed::Button(1), down: false },
        };
        let claim =
            claim_of(&Activation { events: Some(events), shown_at: Some(shown) }, now).expect("a claim");
        assert_eq!(claim.shown_ms_before, 800);
        let back = claim_activation(&claim, Some(GUARD), Some(GUARD), now).expect("from the guard");
        assert_eq!(back.events, Some(events));
        assert_eq!(claim_of(&Activation::unidentified(), now), None);
    }
}
