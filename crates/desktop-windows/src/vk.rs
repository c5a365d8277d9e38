//! Windows virtual-key codes to the chord's logical keys, and back for the injector; and the
//! tool layer's [`DesktopKey`]s (the `key` tool's grammar) to virtual keys.
//!
//! A low-level hook reports side-specific modifier codes (`VK_LCONTROL`, `VK_RMENU` ...); the
//! generic ones (`VK_CONTROL` ...) are mapped to the left side in case a sender uses them.
//! Letters and top-row digits are their ASCII codes, `F1`-`F24` are `0x70`-`0x87`.

use mcec_desktop::keys::{Key as DesktopKey, Modifier as DesktopModifier, NamedKey as DesktopNamed};
use mcec_rules::chord::{Key, Side};
use mcec_rules::hotkey::{Hotkey, MainKey, MainKeyKind, Modifier, NamedKey};

const VK_SHIFT: u16 = 0x10;
const VK_CONTROL: u16 = 0x11;
const VK_MENU: u16 = 0x12;
const VK_LSHIFT: u16 = 0xA0;
const VK_RSHIFT: u16 = 0xA1;
const VK_LCONTROL: u16 = 0xA2;
const VK_RCONTROL: u16 = 0xA3;
const VK_LMENU: u16 = 0xA4;
const VK_RMENU: u16 = 0xA5;
const VK_LWIN: u16 = 0x5B;
const VK_RWIN: u16 = 0x5C;
const VK_F1: u16 = 0x70;

const NAMED: [(NamedKey, u16); 13] = [
    (NamedKey::Esc, 0x1B),
    (NamedKey::Pause, 0x13),
    (NamedKey::Space, 0x20),
    (NamedKey::Enter, 0x0D),
    (NamedKey::Tab, 0x09),
    (NamedKey::Delete, 0x2E),
    (NamedKey::Insert, 0x2D),
    (NamedKey::Home, 0x24),
    (NamedKey::End, 0x23),
    (NamedKey::PageUp, 0x21),
    (NamedKey::PageDown, 0x22),
    (NamedKey::ScrollLock, 0x91),
    (NamedKey::PrintScreen, 0x2C),
];

/// The logical key a hook's `vkCode` stands for.
pub fn key_of(vk: u32) -> Key {
    let Ok(vk) = u16::try_from(vk) else { return Key::Other };
    let modifier = |m, side| Key::Modifier(m, side);
    match vk {
        VK_LCONTROL | VK_CONTROL => modifier(Modifier::Ctrl, Side::Left),
        VK_RCONTROL => modifier(Modifier::Ctrl, Side::Right),
        VK_LMENU | VK_MENU => modifier(Modifier::Alt, Side::Left),
        VK_RMENU => modifier(Modifier::Alt, Side::Right),
        VK_LSHIFT | VK_SHIFT => modifier(Modifier::Shift, Side::Left),
        VK_RSHIFT => modifier(Modifier::Shift, Side::Right),
        VK_LWIN => modifier(Modifier::Win, Side::Left),
        VK_RWIN => modifier(Modifier::Win, Side::Right),
        0x41..=0x5A => main(MainKey::letter(char::from(vk as u8))),
        0x30..=0x39 => main(MainKey::digit(vk as u8 - 0x30)),
        0x70..=0x87 => main(MainKey::function((vk - VK_F1 + 1) as u8)),
        _ => NAMED.iter().find(|(_, v)| *v == vk).map_or(Key::Other, |(k, _)| Key::Main(MainKey::named(*k))),
    }
}

fn main(k: Option<MainKey>) -> Key {
    k.map_or(Key::Other, Key::Main)
}

/// The left-hand virtual key of a modifier.
pub fn modifier_vk(m: Modifier) -> u16 {
    match m {
        Modifier::Ctrl => VK_LCONTROL,
        Modifier::Alt => VK_LMENU,
        Modifier::Shift => VK_LSHIFT,
        Modifier::Win => VK_LWIN,
    }
}

/// Every modifier virtual key, both sides: what a stop releases.
pub const MODIFIER_VKS: [u16; 8] =
    [VK_LCONTROL, VK_RCONTROL, VK_LMENU, VK_RMENU, VK_LSHIFT, VK_RSHIFT, VK_LWIN, VK_RWIN];

/// The virtual key of a chord's main key.
pub fn main_vk(k: MainKey) -> u16 {
    match k.kind() {
        MainKeyKind::Letter(c) => c as u16,
        MainKeyKind::Digit(d) => 0x30 + u16::from(d),
        MainKeyKind::Function(n) => VK_F1 + u16::from(n) - 1,
        MainKeyKind::Named(n) => NAMED.iter().find(|(k, _)| *k == n).map_or(0, |(_, v)| *v),
    }
}

/// The key strokes (virtual key, down) that press a chord and release it, modifiers first.
pub fn chord_strokes(hotkey: Hotkey) -> Vec<(u16, bool)> {
    let mods: Vec<u16> = hotkey.mods.iter().map(modifier_vk).collect();
    let main = main_vk(hotkey.key);
    let mut strokes: Vec<(u16, bool)> = mods.iter().map(|v| (*v, true)).collect();
    strokes.push((main, true));
    strokes.push((main, false));
    strokes.extend(mods.iter().rev().map(|v| (*v, false)));
    strokes
}

/// The virtual key of a tool-layer key that is not a character (characters depend on the
/// keyboard layout: the backend asks Windows with `VkKeyScanW`).
pub fn desktop_vk(key: DesktopKey) -> Option<u16> {
    Some(match key {
        DesktopKey::Modifier(m) => modifier_vk(match m {
            DesktopModifier::Ctrl => Modifier::Ctrl,
            DesktopModifier::Shift => Modifier::Shift,
            DesktopModifier::Alt => Modifier::Alt,
            DesktopModifier::Super => Modifier::Win,
        }),
        DesktopKey::Named(DesktopNamed::Common(n)) => main_vk(MainKey::named(n)),
        DesktopKey::Named(DesktopNamed::BackSpace) => 0x08,
        DesktopKey::Named(DesktopNamed::Left) => 0x25,
        DesktopKey::Named(DesktopNamed::Up) => 0x26,
        DesktopKey::Named(DesktopNamed::Right) => 0x27,
        DesktopKey::Named(DesktopNamed::Down) => 0x28,
        DesktopKey::Named(DesktopNamed::Menu) => 0x5D,
        DesktopKey::Named(DesktopNamed::CapsLock) => 0x14,
        DesktopKey::Named(DesktopNamed::NumLock) => 0x90,
        DesktopKey::Named(DesktopNamed::F(n @ 1..=24)) => VK_F1 + u16::from(n) - 1,
        DesktopKey::Named(DesktopNamed::F(_)) | DesktopKey::Char(_) => return None,
    })
}

/// Keys that sit outside the numeric keypad on a real keyboard and so carry
/// `KEYEVENTF_EXTENDEDKEY` (without it, Windows reads an arrow as a keypad digit under NumLock).
pub fn is_extended(vk: u16) -> bool {
    matches!(vk, VK_RCONTROL | VK_RMENU | VK_LWIN | VK_RWIN | 0x21..=0x28 | 0x2C..=0x2E | 0x5D | 0x90)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcec_desktop::keys::parse_keys;

    #[test]
    fn desktop_keys_map_to_their_virtual_keys() {
        let vk = |spec: &str| parse_keys(spec).ok().and_then(|c| desktop_vk(c[0].key));
        assert_eq!(vk("Enter"), Some(0x0D));
        assert_eq!(vk("Left"), Some(0x25));
        assert_eq!(vk("F24"), Some(0x87));
        assert_eq!(vk("ctrl"), Some(VK_LCONTROL));
        assert_eq!(vk("super"), Some(VK_LWIN));
        assert_eq!(vk("BackSpace"), Some(0x08));
        assert_eq!(vk("PageDown"), Some(0x22));
        assert_eq!(vk("a"), None, "characters go through the layout");
        assert!(
            is_extended(0x25) && is_extended(VK_RCONTROL) && !is_extended(0x0D) && !is_extended(VK_LCONTROL)
        );
    }

    #[test]
    fn every_main_key_round_trips() {
        let mut keys: Vec<MainKey> = ('a'..='z').filter_map(MainKey::letter).collect();
        keys.extend((0..=9).filter_map(MainKey::digit));
        keys.extend((1..=24).filter_map(MainKey::function));
        keys.extend(NamedKey::ALL.map(MainKey::named));
        for k in keys {
            assert_eq!(key_of(u32::from(main_vk(k))), Key::Main(k), "{k}");
        }
    }

    #[test]
    fn modifiers_by_side() {
        for m in Modifier::ALL {
            assert_eq!(key_of(u32::from(modifier_vk(m))), Key::Modifier(m, Side::Left));
        }
        assert_eq!(key_of(0xA3), Key::Modifier(Modifier::Ctrl, Side::Right));
        assert_eq!(key_of(0xA5), Key::Modifier(Modifier::Alt, Side::Right));
        assert_eq!(key_of(0x11), Key::Modifier(Modifier::Ctrl, Side::Left));
        assert!(MODIFIER_VKS.iter().all(|v| matches!(key_of(u32::from(*v)), Key::Modifier(..))));
    }

    #[test]
    fn unknown_codes_are_other() {
        for vk in [0u32, 0x01, 0x5D, 0x60, 0xBA, 0xFF, 0x1_0041] {
            assert_eq!(key_of(vk), Key::Other, "{vk:#x}");
        }
    }

    #[test]
    fn default_chord_strokes() {
        let s = chord_strokes(Hotkey::default());
        let downs: Vec<u16> = s.iter().filter(|(_, d)| *d).map(|(v, _)| *v).collect();
        assert_eq!(downs, vec![VK_LCONTROL, VK_LMENU, VK_LSHIFT, u16::from(b'S')]);
        assert_eq!(s.len(), 8);
        assert!(!s[4].1 && s[4].0 == u16::from(b'S'), "main key released before the modifiers");
    }
}
