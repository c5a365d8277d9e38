//! Keycodes to the chord's logical keys, from the server's core keyboard mapping.
//!
//! Raw events carry a keycode and nothing else, so the monitor keeps its own copy of the
//! mapping (reloaded on `MappingNotify`) and reads each keycode's unshifted keysym. The
//! second column is consulted only for digits, so an AZERTY top row still maps to 0-9.

use mcec_rules::chord::{Key, Side};
use mcec_rules::hotkey::{MainKey, Modifier, NamedKey};
use xkeysym::key as k;

/// The logical key one keysym stands for.
pub fn keysym_to_key(sym: u32) -> Key {
    let m = |m, s| Key::Modifier(m, s);
    let named = |n| Key::Main(MainKey::named(n));
    match sym {
        k::Control_L => m(Modifier::Ctrl, Side::Left),
        k::Control_R => m(Modifier::Ctrl, Side::Right),
        k::Alt_L | k::Meta_L => m(Modifier::Alt, Side::Left),
        k::Alt_R | k::Meta_R => m(Modifier::Alt, Side::Right),
        k::Shift_L => m(Modifier::Shift, Side::Left),
        k::Shift_R => m(Modifier::Shift, Side::Right),
        k::Super_L => m(Modifier::Win, Side::Left),
        k::Super_R => m(Modifier::Win, Side::Right),
        k::a..=k::z | k::A..=k::Z => MainKey::letter(char::from(sym as u8)).map_or(Key::Other, Key::Main),
        k::_0..=k::_9 => MainKey::digit((sym - k::_0) as u8).map_or(Key::Other, Key::Main),
        k::F1..=k::F24 => MainKey::function((sym - k::F1 + 1) as u8).map_or(Key::Other, Key::Main),
        k::Escape => named(NamedKey::Esc),
        k::Pause | k::Break => named(NamedKey::Pause),
        k::space => named(NamedKey::Space),
        k::Return => named(NamedKey::Enter),
        k::Tab => named(NamedKey::Tab),
        k::Delete => named(NamedKey::Delete),
        k::Insert => named(NamedKey::Insert),
        k::Home => named(NamedKey::Home),
        k::End => named(NamedKey::End),
        k::Prior => named(NamedKey::PageUp),
        k::Next => named(NamedKey::PageDown),
        k::Scroll_Lock => named(NamedKey::ScrollLock),
        k::Print => named(NamedKey::PrintScreen),
        _ => Key::Other,
    }
}

/// A keycode -> key table built from a `GetKeyboardMapping` reply.
#[derive(Debug, Clone)]
pub struct KeyTable {
    keys: Vec<Key>,
}

impl KeyTable {
    /// `syms` holds `per` keysyms for each keycode from `min_keycode` on.
    pub fn new(min_keycode: u8, per: u8, syms: &[u32]) -> KeyTable {
        let mut keys = vec![Key::Other; 256];
        let per = usize::from(per.max(1));
        for (i, row) in syms.chunks(per).enumerate() {
            let code = usize::from(min_keycode) + i;
            let Some(slot) = keys.get_mut(code) else { break };
            let first = row.first().copied().map_or(Key::Other, keysym_to_key);
            *slot = match (first, row.get(1).copied().map(keysym_to_key)) {
                (Key::Other, Some(second @ Key::Main(mk)))
                    if matches!(mk.kind(), mcec_rules::hotkey::MainKeyKind::Digit(_)) =>
                {
                    second
                }
                (first, _) => first,
            };
        }
        KeyTable { keys }
    }

    pub fn key(&self, keycode: u32) -> Key {
        usize::try_from(keycode).ok().and_then(|c| self.keys.get(c)).copied().unwrap_or(Key::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keysyms_map_to_chord_keys() {
        let table = [
            (k::Control_R, Key::Modifier(Modifier::Ctrl, Side::Right)),
            (k::Meta_L, Key::Modifier(Modifier::Alt, Side::Left)),
            (k::Super_L, Key::Modifier(Modifier::Win, Side::Left)),
            (k::s, Key::Main(MainKey::letter('s').unwrap_or(MainKey::named(NamedKey::Tab)))),
            (k::S, Key::Main(MainKey::letter('s').unwrap_or(MainKey::named(NamedKey::Tab)))),
            (k::_7, Key::Main(MainKey::digit(7).unwrap_or(MainKey::named(NamedKey::Tab)))),
            (k::F24, Key::Main(MainKey::function(24).unwrap_or(MainKey::named(NamedKey::Tab)))),
            (k::Next, Key::Main(MainKey::named(NamedKey::PageDown))),
            (k::ISO_Level3_Shift, Key::Other),
            (k::KP_Enter, Key::Other),
        ];
        for (sym, want) in table {
            assert_eq!(keysym_to_key(sym), want, "keysym {sym:#x}");
        }
    }

    #[test]
    fn table_reads_first_column_and_digits_from_the_second() {
        let t = KeyTable::new(8, 2, &[k::Control_L, 0, k::ampersand, k::_1, k::s, k::S]);
        assert_eq!(t.key(8), Key::Modifier(Modifier::Ctrl, Side::Left));
        assert_eq!(t.key(9), Key::Main(MainKey::digit(1).unwrap_or(MainKey::named(NamedKey::Tab))));
        assert_eq!(t.key(10), Key::Main(MainKey::letter('s').unwrap_or(MainKey::named(NamedKey::Tab))));
        assert_eq!(t.key(300), Key::Other);
    }
}
