//! The xkb keysym each platform-neutral key stands for: the vocabulary X11 and Wayland share
//! (the X11 backend's keymap and the Wayland backend's virtual keyboard both type keysyms),
//! kept once here because the backends may not depend on each other.

use mcec_rules::hotkey::NamedKey as HotkeyName;

use crate::keys::{Key, Modifier, NamedKey};

/// The keysym that stands for a platform-neutral key.
pub fn keysym_of(key: Key) -> u32 {
    use xkeysym::{Keysym, key as k};
    match key {
        Key::Modifier(Modifier::Ctrl) => k::Control_L,
        Key::Modifier(Modifier::Shift) => k::Shift_L,
        Key::Modifier(Modifier::Alt) => k::Alt_L,
        Key::Modifier(Modifier::Super) => k::Super_L,
        Key::Named(n) => match n {
            NamedKey::Common(common) => match common {
                HotkeyName::Enter => k::Return,
                HotkeyName::Tab => k::Tab,
                HotkeyName::Esc => k::Escape,
                HotkeyName::Delete => k::Delete,
                HotkeyName::Insert => k::Insert,
                HotkeyName::Home => k::Home,
                HotkeyName::End => k::End,
                HotkeyName::PageUp => k::Prior,
                HotkeyName::PageDown => k::Next,
                HotkeyName::Space => k::space,
                HotkeyName::PrintScreen => k::Print,
                HotkeyName::Pause => k::Pause,
                HotkeyName::ScrollLock => k::Scroll_Lock,
            },
            NamedKey::BackSpace => k::BackSpace,
            NamedKey::Up => k::Up,
            NamedKey::Down => k::Down,
            NamedKey::Left => k::Left,
            NamedKey::Right => k::Right,
            NamedKey::Menu => k::Menu,
            NamedKey::CapsLock => k::Caps_Lock,
            NamedKey::NumLock => k::Num_Lock,
            NamedKey::F(n) => k::F1 + u32::from(n.saturating_sub(1)),
        },
        Key::Char('\n') => k::Return,
        Key::Char('\t') => k::Tab,
        Key::Char(c) => Keysym::from_char(c).raw(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_characters_have_their_keysyms() {
        assert_eq!(keysym_of(Key::Named(NamedKey::F(5))), xkeysym::key::F5);
        assert_eq!(keysym_of(Key::Char('é')), 0xe9);
        assert_eq!(keysym_of(Key::Char('✓')), 0x0af3);
        assert_eq!(keysym_of(Key::Char('🙂')), 0x0101_f642);
        assert_eq!(keysym_of(Key::Char('\n')), xkeysym::key::Return);
        assert_eq!(keysym_of(Key::Modifier(Modifier::Ctrl)), xkeysym::key::Control_L);
    }
}
