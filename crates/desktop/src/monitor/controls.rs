//! Operator controls a provenance source answers with a key chord of its own, for platforms
//! where a window cannot learn which device pressed its button (sway: a Wayland client is
//! never told which keyboard or mouse an event came from).
//!
//! There the voucher for the operator's hand is the source's: while a prompt whose answer only
//! the operator may give is on screen, the source binds a chord for it on the physical
//! keyboards only (sway: a per-device binding with a fresh nonce), and a press of that
//! binding is what activated the control. [`ChordControls`] is the meeting point, shared by
//! the core and the source: the core says which prompt is on screen since when
//! ([`ChordControls::shown`]) and what a press does ([`ChordControls::on_press`]); the source
//! says which chord it binds ([`ChordControls::offer`]), waits for the prompts to change
//! ([`ChordControls::wait_change`]) and reports each press it sees
//! ([`ChordControls::pressed`]): the press goes into the ledger like any raw event, with its
//! provenance, and the core gets an [`Activation`] naming it, which the same rules judge as
//! the click of a prompt on X11 (`mcec_rules::activation`: physical, at least
//! `SHOW_SETTLE` after the prompt appeared, no recent tampering). A press from an injecting
//! device is reported too, as injected, so its refusal is audited like any other.
//!
//! The event identity is a counter of this process, not a platform time: the source that uses
//! this is the only writer of its ledger, so no other event can carry the same identity.
//!
//! With several processes on one display only the guard binds; its members learn of its
//! bindings and record their presses through the same meeting point (`vouched.rs`):
//! [`ChordControls::announce`] and [`ChordControls::marker_of`] on the guard's side,
//! [`ChordControls::adopt`], [`ChordControls::pressed_vouched`] and
//! [`ChordControls::witnessed`] on a member's.

use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use mcec_rules::activation::{Activation, ActivationEvents, InputEventId, Pressed, Provenance};
use mcec_rules::hotkey::{Hotkey, MainKey};

use super::vouched::{Relayed, SeenPress, Vouches};
use super::{LastPhysicalInput, RawInput};

/// A control a chord can press.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Control {
    /// The re-arm prompt's `Re-arm`.
    Rearm,
    /// The consent prompt's `Allow`.
    Allow,
    /// The provisioning opt-in's confirmation (its `Confirm`).
    OptIn,
    /// The console's End prompt (its `End`).
    End,
    /// The token reveal's confirmation (its `Reveal`).
    Reveal,
}

/// How many controls there are.
pub const CONTROLS: usize = 5;

impl Control {
    pub const ALL: [Control; CONTROLS] =
        [Control::Rearm, Control::Allow, Control::OptIn, Control::End, Control::Reveal];

    /// Its place in [`Control::ALL`].
    pub fn index(self) -> usize {
        match self {
            Control::Rearm => 0,
            Control::Allow => 1,
            Control::OptIn => 2,
            Control::End => 3,
            Control::Reveal => 4,
        }
    }

    /// The letters of the chords that may press it: the first unless the stop is that chord,
    /// then the spare. The ten letters are all different (and none is `S`, the default stop),
    /// so whatever the stop, no two controls share a chord and none is the stop's.
    const fn letters(self) -> (char, char) {
        match self {
            Control::Rearm => ('r', 'e'),
            Control::Allow => ('a', 'y'),
            Control::OptIn => ('p', 'o'),
            Control::End => ('n', 'd'),
            Control::Reveal => ('t', 'v'),
        }
    }

    /// The chord that presses this control beside the stop chord `stop`: `Ctrl+Alt+Shift+`
    /// `R` (re-arm), `A` (allow), `P` (the opt-in's confirmation), `N` (End), `T` (reveal the
    /// token), or, when the stop is that chord already, `E`, `Y`, `O`, `D`, `V`.
    pub fn chord(self, stop: &Hotkey) -> Hotkey {
        let (first, spare) = self.letters();
        let mods = Hotkey::default().mods;
        let with = |c| MainKey::letter(c).map(|key| Hotkey { mods, key });
        match (with(first), with(spare)) {
            (Some(chord), _) if chord != *stop => chord,
            (_, Some(chord)) => chord,
            // Both are ASCII letters, so neither arm is reached.
            _ => Hotkey::default(),
        }
    }

    /// The control called `name` ([`Control::name`]).
    pub fn from_name(name: &str) -> Option<Control> {
        Control::ALL.into_iter().find(|c| c.name() == name)
    }

    /// What the audit and the log call it.
    pub fn name(self) -> &'static str {
        match self {
            Control::Rearm => "re-arm",
            Control::Allow => "allow",
            Control::OptIn => "opt-in",
            Control::End => "end",
            Control::Reveal => "reveal",
        }
    }
}

impl fmt::Display for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the core does with a press of a control's chord (called on the source's thread).
pub type PressHook = Arc<dyn Fn(Control, Activation) + Send + Sync>;

/// What the guard does with its source's announcement of what it binds now.
pub type AnnounceHook = Arc<dyn Fn(&Vouches) + Send + Sync>;

/// One control's prompt as the source should bind for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Showing {
    /// When the prompt appeared on screen; `None` while it is not shown.
    pub shown_at: Option<Instant>,
    /// Changes whenever the source must bind afresh: the prompt opened or closed, or a press
    /// spent the binding's nonce.
    pub generation: u64,
}

#[derive(Default)]
struct State {
    offered: [Option<Hotkey>; CONTROLS],
    showing: [Showing; CONTROLS],
    /// Bumped on every change of `showing`.
    changes: u64,
    hook: Option<PressHook>,
    /// The identity of the next press (never 0).
    next_time: u32,
    /// Another process's bindings, and this one's told to others.
    relayed: Relayed,
    announce_hook: Option<AnnounceHook>,
}

/// Shared between the core and the provenance source; cheap to clone.
#[derive(Clone, Default)]
pub struct ChordControls(Arc<(Mutex<State>, Condvar)>);

impl fmt::Debug for ChordControls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.lock();
        f.debug_struct("ChordControls").field("offered", &s.offered).field("showing", &s.showing).finish()
    }
}

impl ChordControls {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn changed(&self, state: &mut State) {
        state.changes += 1;
        self.0.1.notify_all();
    }

    /// Source side: this source binds `chord` for `control` while its prompt is shown.
    pub fn offer(&self, control: Control, chord: Hotkey) {
        self.lock().offered[control.index()] = Some(chord);
    }

    /// Core side: the chord that presses `control`, when a source binds one.
    pub fn offered(&self, control: Control) -> Option<Hotkey> {
        self.lock().offered[control.index()]
    }

    /// Core side: what a press does.
    pub fn on_press(&self, hook: impl Fn(Control, Activation) + Send + Sync + 'static) {
        self.lock().hook = Some(Arc::new(hook));
    }

    /// Core side: `control`'s prompt is on screen since `at` (`None`: it closed). A prompt
    /// shown again (a new time) gets a new binding.
    pub fn shown(&self, control: Control, at: Option<Instant>) {
        let mut s = self.lock();
        let showing = &mut s.showing[control.index()];
        if showing.shown_at == at {
            return;
        }
        showing.shown_at = at;
        showing.generation += 1;
        self.changed(&mut s);
    }

    /// Source side: every control's prompt now.
    pub fn showing(&self) -> [Showing; CONTROLS] {
        self.lock().showing
    }

    /// Source side: waits until a prompt changes after `seen` (a value this returned before;
    /// 0 at first) or `timeout` passes; returns the latest change count.
    pub fn wait_change(&self, seen: u64, timeout: Duration) -> u64 {
        let (lock, cvar) = &*self.0;
        let state = lock.lock().unwrap_or_else(PoisonError::into_inner);
        let (state, _) = cvar
            .wait_timeout_while(state, timeout, |s| s.changes == seen)
            .unwrap_or_else(PoisonError::into_inner);
        state.changes
    }

    /// Source side: wakes [`ChordControls::wait_change`] without a change (the source stops).
    pub fn wake(&self) {
        let mut s = self.lock();
        self.changed(&mut s);
    }

    /// Source side: `control`'s chord was pressed, on a physical keyboard or not
    /// (`provenance`), with the platform's key `code`, the binding being the one made for
    /// `generation`. The press goes into `ledger`; the core's hook gets the activation naming
    /// it. The binding's nonce is spent either way (its generation moves on), so the source
    /// binds a fresh one. `false` (and nothing recorded) when the prompt closed or was bound
    /// afresh since: the binding was not this showing's. `marker` is the binding's, which
    /// [`ChordControls::marker_of`] gives back for the press (the guard's claim names it).
    pub fn pressed(
        &self,
        control: Control,
        generation: u64,
        marker: &str,
        code: u32,
        provenance: Provenance,
        ledger: &LastPhysicalInput,
    ) -> bool {
        let (hook, activation) = {
            let mut s = self.lock();
            let showing = s.showing[control.index()];
            if showing.generation != generation || showing.shown_at.is_none() {
                return false;
            }
            let press = Self::record(&mut s, code, provenance, ledger);
            s.relayed.pressed_own(press.time, marker);
            s.showing[control.index()].generation += 1;
            self.changed(&mut s);
            let activation =
                Activation { events: Some(ActivationEvents::Key { press }), shown_at: showing.shown_at };
            (s.hook.clone(), activation)
        };
        if let Some(hook) = hook {
            hook(control, activation);
        }
        true
    }

    /// A press with the next identity of this process, recorded in `ledger`.
    fn record(s: &mut State, code: u32, provenance: Provenance, ledger: &LastPhysicalInput) -> InputEventId {
        s.next_time = s.next_time.wrapping_add(1).max(1);
        let press = InputEventId { time: s.next_time, what: Pressed::Key(code), down: true };
        let at = Instant::now();
        ledger.record(RawInput { time: press.time, what: press.what, down: true, provenance, at });
        press
    }

    /// Source side, as the guard: the commitments to the bindings made for the prompts shown
    /// now, told to the members before sway can fire them.
    pub fn announce(&self, vouches: Vouches) {
        let hook = {
            let mut s = self.lock();
            s.relayed.announced = vouches.clone();
            s.announce_hook.clone()
        };
        if let Some(hook) = hook {
            hook(&vouches);
        }
    }

    /// Core side, as the guard: who is told each announcement (`None`: nobody).
    pub fn on_announce(&self, hook: Option<AnnounceHook>) {
        self.lock().announce_hook = hook;
    }

    /// Core side, as the guard: the last announcement, for a member that joins later.
    pub fn announced(&self) -> Vouches {
        self.lock().relayed.announced.clone()
    }

    /// Core side, as the guard: the marker of the binding whose press has identity `time`.
    pub fn marker_of(&self, time: u32) -> Option<String> {
        self.lock().relayed.marker_of(time)
    }

    /// Core side, as a member: the guard's bindings now (only from the guard lock's holder).
    pub fn adopt(&self, vouches: Vouches) {
        self.lock().relayed.adopted = vouches;
    }

    /// Source side, as a member: a binding of another process fired, `marker` being its
    /// command's marker and `commitment` the digest of it. When the guard announced it, the
    /// press goes into `ledger` with the provenance the announcement names (`true`); the
    /// binding is spent either way.
    pub fn pressed_vouched(
        &self,
        commitment: &str,
        marker: &str,
        code: u32,
        ledger: &LastPhysicalInput,
    ) -> bool {
        let mut s = self.lock();
        let Some((control, provenance)) = s.relayed.take_adopted(commitment) else { return false };
        let event = Self::record(&mut s, code, provenance, ledger);
        s.relayed.saw(SeenPress { marker: marker.to_owned(), control, event });
        true
    }

    /// Core side, as a member: this process's own record of the press of `marker`, if its
    /// source saw one.
    pub fn witnessed(&self, marker: &str) -> Option<SeenPress> {
        self.lock().relayed.witnessed(marker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcec_rules::activation::{ActivationRefusal, SHOW_SETTLE, activation_verdict};

    type Presses = Arc<Mutex<Vec<(Control, Activation)>>>;

    fn hooked() -> (ChordControls, Presses) {
        let controls = ChordControls::default();
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        controls.on_press(move |c, a| sink.lock().expect("presses").push((c, a)));
        (controls, got)
    }

    #[test]
    fn the_chords_never_take_the_stops() {
        let stop = Hotkey::default();
        assert_eq!(Control::Rearm.chord(&stop).to_string(), "Ctrl+Alt+Shift+R");
        assert_eq!(Control::Allow.chord(&stop).to_string(), "Ctrl+Alt+Shift+A");
        let r = Hotkey::parse("Ctrl+Alt+Shift+R").expect("chord");
        assert_eq!(Control::Rearm.chord(&r).to_string(), "Ctrl+Alt+Shift+E");
        let a = Hotkey::parse("Ctrl+Alt+Shift+A").expect("chord");
        assert_eq!(Control::Allow.chord(&a).to_string(), "Ctrl+Alt+Shift+Y");
    }

    #[test]
    fn no_two_controls_share_a_chord_and_none_takes_the_stop_whatever_the_stop() {
        let mut stops: Vec<Hotkey> = ('a'..='z')
            .filter_map(|c| Hotkey::parse(&format!("Ctrl+Alt+Shift+{}", c.to_ascii_uppercase())).ok())
            .collect();
        stops.push(Hotkey::default());
        for stop in stops {
            let chords: Vec<Hotkey> = Control::ALL.iter().map(|c| c.chord(&stop)).collect();
            for (i, chord) in chords.iter().enumerate() {
                assert_ne!(*chord, stop, "{} takes the stop {stop}", Control::ALL[i]);
                assert!(!chords[..i].contains(chord), "{chord} presses two controls (stop {stop})");
            }
        }
        let names: Vec<String> =
            Control::ALL.iter().map(|c| c.chord(&Hotkey::default()).to_string()).collect();
        assert_eq!(names, ["R", "A", "P", "N", "T"].map(|k| format!("Ctrl+Alt+Shift+{k}")));
    }

    #[test]
    fn a_physical_press_of_a_shown_prompt_is_judged_like_a_click() {
        let (controls, got) = hooked();
        let ledger = LastPhysicalInput::new();
        let shown = Instant::now().checked_sub(SHOW_SETTLE * 2).expect("a past instant");
        controls.shown(Control::Rearm, Some(shown));
        let generation = controls.showing()[0].generation;
        assert!(controls.pressed(Control::Rearm, generation, "m", 27, Provenance::Physical, &ledger));
        let (control, act) = got.lock().expect("presses")[0];
        assert_eq!(control, Control::Rearm);
        assert_eq!(act.shown_at, Some(shown));
        let verdict = activation_verdict(&act, |e| ledger.witness(e), None, Instant::now());
        assert!(verdict.is_ok(), "{verdict:?}");
        assert_ne!(controls.showing()[0].generation, generation, "the nonce is spent");
        assert!(
            !controls.pressed(Control::Rearm, generation, "m", 27, Provenance::Physical, &ledger),
            "a spent binding presses nothing"
        );
        assert_eq!(got.lock().expect("presses").len(), 1);
    }

    #[test]
    fn an_injected_press_is_reported_and_refused_and_a_closed_prompt_takes_none() {
        let (controls, got) = hooked();
        let ledger = LastPhysicalInput::new();
        let shown = Instant::now().checked_sub(SHOW_SETTLE * 2).expect("a past instant");
        controls.shown(Control::Allow, Some(shown));
        let generation = controls.showing()[1].generation;
        assert!(controls.pressed(Control::Allow, generation, "m", 38, Provenance::Injected, &ledger));
        let (_, act) = got.lock().expect("presses")[0];
        let verdict = activation_verdict(&act, |e| ledger.witness(e), None, Instant::now());
        assert!(matches!(verdict, Err(ActivationRefusal::Synthetic { .. })), "{verdict:?}");
        controls.shown(Control::Allow, None);
        let closed = controls.showing()[1].generation;
        assert!(!controls.pressed(Control::Allow, closed, "m", 38, Provenance::Physical, &ledger));
        assert_eq!(got.lock().expect("presses").len(), 1);
    }

    #[test]
    fn a_member_records_only_announced_presses_with_the_announced_provenance() {
        use crate::monitor::{Vouch, Vouches};
        let guard = ChordControls::default();
        let told = Arc::new(Mutex::new(Vec::new()));
        let sink = told.clone();
        guard.on_announce(Some(Arc::new(move |v: &Vouches| sink.lock().expect("told").push(v.clone()))));
        let mut vouches: Vouches = Default::default();
        vouches[Control::Rearm.index()] = Some(Vouch { physical: "hp".into(), injected: "hi".into() });
        guard.announce(vouches.clone());
        assert_eq!(*told.lock().expect("told"), vec![vouches.clone()]);
        guard.on_announce(None);
        assert_eq!(guard.announced(), vouches, "a member joining later is told the current one");
        let ledger = LastPhysicalInput::new();
        guard.shown(Control::Rearm, Some(Instant::now()));
        let generation = guard.showing()[0].generation;
        assert!(guard.pressed(
            Control::Rearm,
            generation,
            "mcec-re-arm-p1",
            27,
            Provenance::Physical,
            &ledger
        ));
        assert_eq!(guard.marker_of(1).as_deref(), Some("mcec-re-arm-p1"));
        assert_eq!(guard.marker_of(2), None);

        let member = ChordControls::default();
        let ledger = LastPhysicalInput::new();
        assert!(!member.pressed_vouched("hp", "mcec-re-arm-p1", 27, &ledger), "nothing adopted yet");
        member.adopt(vouches.clone());
        assert!(!member.pressed_vouched("other", "mcec-stop-x", 27, &ledger), "not announced");
        assert!(member.pressed_vouched("hp", "mcec-re-arm-p1", 27, &ledger));
        assert!(!member.pressed_vouched("hp", "mcec-re-arm-p1", 27, &ledger), "a binding serves one press");
        let seen = member.witnessed("mcec-re-arm-p1").expect("seen");
        assert_eq!(seen.control, Control::Rearm);
        assert!(ledger.witness(&seen.event).physical.is_some());
        assert_eq!(member.witnessed("mcec-re-arm-forged"), None, "a marker only claimed was never seen");

        member.adopt(vouches);
        assert!(member.pressed_vouched("hi", "mcec-re-arm-i1", 27, &ledger));
        let injected = member.witnessed("mcec-re-arm-i1").expect("seen");
        assert_ne!(injected.event, seen.event);
        let witness = ledger.witness(&injected.event);
        assert!(witness.physical.is_none() && witness.synthetic.is_some(), "{witness:?}");
    }

    #[test]
    fn a_change_wakes_the_waiting_source() {
        let controls = ChordControls::default();
        let seen = controls.wait_change(0, Duration::ZERO);
        let other = controls.clone();
        let t = std::thread::spawn(move || other.wait_change(seen, Duration::from_secs(20)));
        controls.shown(Control::Rearm, Some(Instant::now()));
        assert!(t.join().expect("waiter") > seen);
    }
}
