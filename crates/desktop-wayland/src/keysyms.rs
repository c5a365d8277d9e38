//! The keysym each platform-neutral key stands for on the virtual keyboard.
//!
//! The same table as the X11 backend's (`desktop-x11/src/desktop/keymap.rs`, `keysym_of`):
//! both speak xkb keysyms. Kept here because the backends may not depend on each other.

use mcec_desktop::keys::{Key, Modifier, NamedKey};
use mcec_rules::hotkey::NamedKey as HotkeyName;
use xkeysym::{Keysym, key as k};

/// The keysym that stands for a platform-neutral key.
pub fn keysym_of(key: Key) -> u32 {
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

/// The modifier a key is, as an index into `wl::keymap::MOD_MASKS`.
pub fn modifier_index(key: Key) -> Option<usize> {
    match key {
        Key::Modifier(Modifier::Shift) => Some(0),
        Key::Modifier(Modifier::Ctrl) => Some(1),
        Key::Modifier(Modifier::Alt) => Some(2),
        Key::Modifier(Modifier::Super) => Some(3),
        _ => None,
    }
}
