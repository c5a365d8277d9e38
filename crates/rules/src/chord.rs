//! The chord detector: a pure state machine that decides, from classified key events, when
//! the operator has pressed the emergency-stop chord with their own hands.
//!
//! Rules (contract, "Emergency stop"):
//! - Only physical events change state. An injected key-down never holds a key and an
//!   injected key-up never releases one, so an agent can neither press the chord nor defeat
//!   it by "releasing" the operator's modifiers.
//! - Modifiers are tracked per key and per source device: left and right Ctrl are separate
//!   keys, so releasing one while the other is held keeps Ctrl held. A modifier counts when
//!   any device holds it on either side.
//! - The chord fires when the main key goes down physically while every required modifier is
//!   physically held; extra modifiers are fine.
//! - A release of a key that is not down (Xephyr sometimes sends one twice) is ignored.
//! - Auto-repeat: a second key-down of the main key from the same device while it is still
//!   held is a repeat and does not fire. A fresh press after a release fires again, every
//!   time: the latch turns a press while stopped into "reopen the re-arm prompt".
//! - [`ChordDetector::forget_device`] drops what a removed device held, so an unplugged
//!   keyboard cannot leave a modifier stuck down.
//!
//! The detector knows nothing of X11; a platform backend maps its key codes to [`Key`].

use crate::hotkey::{Hotkey, MainKey, Modifier};

/// Which side of the keyboard a modifier key is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Left,
    Right,
}

/// A logical key, as far as the chord cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Modifier(Modifier, Side),
    Main(MainKey),
    /// Any key the chord grammar cannot name.
    Other,
}

/// One key event, already classified by a provenance source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyEvent {
    pub key: Key,
    pub down: bool,
    /// True only when the provenance source attributes the event to a physical device.
    pub physical: bool,
    /// The source device (X11: the slave device id). Keys are tracked per device.
    pub device: u16,
}

/// What one event did to the detector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum ChordStep {
    /// The chord was pressed, physically, just now.
    Fired,
    /// Nothing to do.
    Quiet,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Modifier(Modifier, Side),
    Main,
}

/// The state machine. Cheap to feed: no allocation once a few keys have been held.
#[derive(Debug, Clone)]
pub struct ChordDetector {
    hotkey: Hotkey,
    held: Vec<(u16, Held)>,
}

impl ChordDetector {
    pub fn new(hotkey: Hotkey) -> Self {
        ChordDetector { hotkey, held: Vec::with_capacity(16) }
    }

    pub fn hotkey(&self) -> Hotkey {
        self.hotkey
    }

    /// Feeds one event and says whether the chord fired.
    pub fn feed(&mut self, ev: &KeyEvent) -> ChordStep {
        if !ev.physical {
            return ChordStep::Quiet;
        }
        let held = match ev.key {
            Key::Modifier(m, side) => Held::Modifier(m, side),
            Key::Main(k) if k == self.hotkey.key => Held::Main,
            Key::Main(_) | Key::Other => return ChordStep::Quiet,
        };
        let entry = (ev.device, held);
        let was_down = self.held.contains(&entry);
        match (ev.down, was_down) {
            (true, true) => ChordStep::Quiet,
            (true, false) => {
                self.held.push(entry);
                if held == Held::Main && self.modifiers_held() { ChordStep::Fired } else { ChordStep::Quiet }
            }
            (false, true) => {
                self.held.retain(|e| *e != entry);
                ChordStep::Quiet
            }
            (false, false) => ChordStep::Quiet,
        }
    }

    fn modifiers_held(&self) -> bool {
        self.hotkey
            .mods
            .iter()
            .all(|m| self.held.iter().any(|(_, h)| matches!(h, Held::Modifier(x, _) if *x == m)))
    }

    /// Forgets every key held, as after a re-arm: the operator starts from a clean slate.
    pub fn reset(&mut self) {
        self.held.clear();
    }

    /// Forgets what one source device held, when the device goes away.
    pub fn forget_device(&mut self, device: u16) {
        self.held.retain(|(d, _)| *d != device);
    }

    /// True while any physical key the chord tracks is held (for tests and diagnostics).
    pub fn anything_held(&self) -> bool {
        !self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hotkey::NamedKey;
    use proptest::prelude::*;

    const KBD: u16 = 10;
    const KBD2: u16 = 11;

    fn s() -> Key {
        Key::Main(MainKey::letter('s').unwrap_or(MainKey::named(NamedKey::Pause)))
    }
    fn m(x: Modifier) -> Key {
        Key::Modifier(x, Side::Left)
    }
    fn r(x: Modifier) -> Key {
        Key::Modifier(x, Side::Right)
    }

    /// `P`hysical or `I`njected, `+` down or `-` up.
    fn ev(kind: &str, key: Key) -> KeyEvent {
        KeyEvent { key, down: kind.ends_with('+'), physical: kind.starts_with('P'), device: KBD }
    }

    /// Feeds `events` to a fresh default-chord detector and compares the indices that fired.
    fn check(events: &[KeyEvent], expected_fires: &[usize]) {
        let mut d = ChordDetector::new(Hotkey::default());
        let fired: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| d.feed(e) == ChordStep::Fired)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(fired, expected_fires, "events: {events:?}");
    }

    use Modifier::{Alt, Ctrl, Shift, Win};

    #[test]
    fn table() {
        let chord = |k: &str| vec![ev(k, m(Ctrl)), ev(k, m(Alt)), ev(k, m(Shift)), ev(k, s())];
        let cases: Vec<(&str, Vec<KeyEvent>, Vec<usize>)> = vec![
            ("physical chord fires", chord("P+"), vec![3]),
            ("injected chord never fires", chord("I+"), vec![]),
            (
                "main key first does not fire",
                vec![ev("P+", s()), ev("P+", m(Ctrl)), ev("P+", m(Alt)), ev("P+", m(Shift))],
                vec![],
            ),
            ("missing modifier", vec![ev("P+", m(Ctrl)), ev("P+", m(Alt)), ev("P+", s())], vec![]),
            (
                "extra modifier is fine",
                vec![
                    ev("P+", m(Win)),
                    ev("P+", m(Ctrl)),
                    ev("P+", m(Alt)),
                    ev("P+", m(Shift)),
                    ev("P+", s()),
                ],
                vec![4],
            ),
            (
                "right-hand modifiers",
                vec![ev("P+", r(Ctrl)), ev("P+", r(Alt)), ev("P+", r(Shift)), ev("P+", s())],
                vec![3],
            ),
            (
                "injected modifier completes nothing",
                vec![ev("P+", m(Ctrl)), ev("P+", m(Alt)), ev("I+", m(Shift)), ev("P+", s())],
                vec![],
            ),
            (
                "injected main key does not fire",
                vec![ev("P+", m(Ctrl)), ev("P+", m(Alt)), ev("P+", m(Shift)), ev("I+", s())],
                vec![],
            ),
            (
                "injected release keeps physical modifier held",
                vec![
                    ev("P+", m(Ctrl)),
                    ev("P+", m(Alt)),
                    ev("P+", m(Shift)),
                    ev("I-", m(Ctrl)),
                    ev("P+", s()),
                ],
                vec![4],
            ),
            (
                "releasing one side keeps the other held",
                vec![
                    ev("P+", m(Ctrl)),
                    ev("P+", r(Ctrl)),
                    ev("P-", m(Ctrl)),
                    ev("P+", m(Alt)),
                    ev("P+", m(Shift)),
                    ev("P+", s()),
                ],
                vec![5],
            ),
            (
                "physical release drops the modifier",
                vec![
                    ev("P+", m(Ctrl)),
                    ev("P+", m(Alt)),
                    ev("P+", m(Shift)),
                    ev("P-", m(Ctrl)),
                    ev("P+", s()),
                ],
                vec![],
            ),
            (
                "duplicate release is ignored",
                vec![
                    ev("P+", m(Ctrl)),
                    ev("P-", m(Ctrl)),
                    ev("P-", m(Ctrl)),
                    ev("P+", m(Ctrl)),
                    ev("P+", m(Alt)),
                    ev("P+", m(Shift)),
                    ev("P+", s()),
                ],
                vec![6],
            ),
            (
                "auto-repeat of the main key fires once",
                vec![
                    ev("P+", m(Ctrl)),
                    ev("P+", m(Alt)),
                    ev("P+", m(Shift)),
                    ev("P+", s()),
                    ev("P+", s()),
                    ev("P+", s()),
                ],
                vec![3],
            ),
            (
                "fresh press after release fires again",
                vec![
                    ev("P+", m(Ctrl)),
                    ev("P+", m(Alt)),
                    ev("P+", m(Shift)),
                    ev("P+", s()),
                    ev("P-", s()),
                    ev("P+", s()),
                ],
                vec![3, 5],
            ),
            (
                "injected release of main key does not re-arm repeat",
                vec![
                    ev("P+", m(Ctrl)),
                    ev("P+", m(Alt)),
                    ev("P+", m(Shift)),
                    ev("P+", s()),
                    ev("I-", s()),
                    ev("P+", s()),
                ],
                vec![3],
            ),
            (
                "other keys are ignored",
                vec![
                    ev("P+", m(Ctrl)),
                    ev("P+", Key::Other),
                    ev("P+", m(Alt)),
                    ev("P+", m(Shift)),
                    ev("P+", Key::Main(MainKey::named(NamedKey::Tab))),
                    ev("P+", s()),
                ],
                vec![5],
            ),
        ];
        for (name, events, fires) in cases {
            eprintln!("case: {name}");
            check(&events, &fires);
        }
    }

    #[test]
    fn modifiers_from_two_keyboards_combine_and_forget_device_drops_them() {
        let mut d = ChordDetector::new(Hotkey::default());
        let on = |dev, key, down| KeyEvent { key, down, physical: true, device: dev };
        assert_eq!(d.feed(&on(KBD, m(Ctrl), true)), ChordStep::Quiet);
        assert_eq!(d.feed(&on(KBD2, m(Alt), true)), ChordStep::Quiet);
        assert_eq!(d.feed(&on(KBD2, m(Shift), true)), ChordStep::Quiet);
        d.forget_device(KBD);
        assert_eq!(d.feed(&on(KBD2, s(), true)), ChordStep::Quiet, "Ctrl left with the unplugged keyboard");
        assert_eq!(d.feed(&on(KBD2, s(), false)), ChordStep::Quiet);
        assert_eq!(d.feed(&on(KBD2, m(Ctrl), true)), ChordStep::Quiet);
        assert_eq!(d.feed(&on(KBD2, s(), true)), ChordStep::Fired);
    }

    #[test]
    fn reset_forgets_held_keys() {
        let mut d = ChordDetector::new(Hotkey::default());
        for e in [ev("P+", m(Ctrl)), ev("P+", m(Alt)), ev("P+", m(Shift))] {
            assert_eq!(d.feed(&e), ChordStep::Quiet);
        }
        assert!(d.anything_held());
        d.reset();
        assert!(!d.anything_held());
        assert_eq!(d.feed(&ev("P+", s())), ChordStep::Quiet);
    }

    #[test]
    fn chord_without_modifiers() {
        let mut d = ChordDetector::new(Hotkey {
            mods: crate::hotkey::Modifiers::NONE,
            key: MainKey::named(NamedKey::Pause),
        });
        let pause = Key::Main(MainKey::named(NamedKey::Pause));
        assert_eq!(d.feed(&ev("I+", pause)), ChordStep::Quiet);
        assert_eq!(d.feed(&ev("P+", pause)), ChordStep::Fired);
    }

    fn arb_key() -> impl Strategy<Value = Key> {
        prop_oneof![
            (0..4usize, any::<bool>()).prop_map(|(i, left)| Key::Modifier(
                Modifier::ALL[i],
                if left { Side::Left } else { Side::Right }
            )),
            (0..3u8).prop_map(|i| Key::Main(
                MainKey::letter((b'r' + i) as char).unwrap_or(MainKey::named(NamedKey::Tab))
            )),
            Just(Key::Other),
        ]
    }

    fn arb_event(physical: bool) -> impl Strategy<Value = KeyEvent> {
        (arb_key(), any::<bool>(), 10..13u16).prop_map(move |(key, down, device)| KeyEvent {
            key,
            down,
            physical,
            device,
        })
    }

    fn fires(events: &[KeyEvent]) -> Vec<KeyEvent> {
        let mut d = ChordDetector::new(Hotkey::default());
        events.iter().filter(|e| d.feed(e) == ChordStep::Fired).copied().collect()
    }

    proptest! {
        #[test]
        fn all_injected_never_fires(events in prop::collection::vec(arb_event(false), 0..300)) {
            prop_assert!(fires(&events).is_empty());
        }

        #[test]
        fn injected_events_never_change_the_outcome(
            physical in prop::collection::vec(arb_event(true), 0..200),
            injected in prop::collection::vec((any::<prop::sample::Index>(), arb_event(false)), 0..200),
        ) {
            let mut mixed = physical.clone();
            for (at, e) in injected {
                let i = at.index(mixed.len() + 1);
                mixed.insert(i, e);
            }
            prop_assert_eq!(fires(&physical), fires(&mixed));
        }

        /// The detector against a model of which keys each device physically holds: it fires
        /// exactly when the main key goes down on a device that was not already holding it,
        /// while every required modifier is physically held, on some device and either side.
        /// Injected events change nothing in the model.
        #[test]
        fn fires_exactly_when_the_modifiers_are_physically_held(
            events in prop::collection::vec((arb_event(true), any::<bool>()), 0..300),
        ) {
            let mut d = ChordDetector::new(Hotkey::default());
            let mut held: Vec<(u16, Key)> = Vec::new();
            for (mut e, physical) in events {
                e.physical = physical;
                let tracked = matches!(e.key, Key::Modifier(..)) || e.key == s();
                let mut want = false;
                if e.physical && tracked {
                    let fresh = !held.contains(&(e.device, e.key));
                    if e.down && fresh {
                        let mods_held = Hotkey::default().mods.iter().all(|m| {
                            held.iter().any(|(_, k)| matches!(k, Key::Modifier(x, _) if *x == m))
                        });
                        want = e.key == s() && mods_held;
                        held.push((e.device, e.key));
                    } else if !e.down {
                        held.retain(|h| *h != (e.device, e.key));
                    }
                }
                let fired = d.feed(&e) == ChordStep::Fired;
                prop_assert_eq!(fired, want, "{:?} with {:?} held", e, held);
            }
        }
    }
}
