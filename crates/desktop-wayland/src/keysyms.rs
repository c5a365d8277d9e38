//! Which of the virtual keyboard's modifier masks a key is (its keysym is
//! `mcec_desktop::keysyms::keysym_of`, shared with the X11 backend).

use mcec_desktop::keys::{Key, Modifier};

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
