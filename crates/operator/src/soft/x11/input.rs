//! X11 key and pointer events as egui input, for the CPU-painted windows.
//!
//! The prompt needs only a few keys (Enter, Esc, Tab, Space, the arrows); every other key is
//! ignored. The keyboard mapping is read once from the server.

use egui::{Key, Modifiers, PointerButton, pos2};
use x11rb::protocol::xproto::{ConnectionExt as _, KeyButMask};
use x11rb::rust_connection::RustConnection;

use crate::soft::x11::window::XResult;

pub(crate) struct Keymap {
    min_keycode: u8,
    per_code: usize,
    keysyms: Vec<u32>,
}

impl Keymap {
    pub fn load(conn: &RustConnection) -> XResult<Self> {
        let setup = x11rb::connection::Connection::setup(conn);
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let reply = conn.get_keyboard_mapping(min, max - min + 1)?.reply()?;
        Ok(Self {
            min_keycode: min,
            per_code: usize::from(reply.keysyms_per_keycode).max(1),
            keysyms: reply.keysyms,
        })
    }

    fn key(&self, keycode: u8) -> Option<Key> {
        let index = usize::from(keycode.checked_sub(self.min_keycode)?) * self.per_code;
        let keysym = *self.keysyms.get(index)?;
        Some(match keysym {
            0xff0d | 0xff8d => Key::Enter,
            0xff1b => Key::Escape,
            0xff09 | 0xfe20 => Key::Tab,
            0x20 => Key::Space,
            0xff51 => Key::ArrowLeft,
            0xff52 => Key::ArrowUp,
            0xff53 => Key::ArrowRight,
            0xff54 => Key::ArrowDown,
            _ => return None,
        })
    }

    pub fn key_event(&self, keycode: u8, state: KeyButMask, pressed: bool) -> Option<egui::Event> {
        let key = self.key(keycode)?;
        Some(egui::Event::Key {
            key,
            physical_key: None,
            pressed,
            repeat: false,
            modifiers: modifiers(state),
        })
    }
}

pub(crate) fn modifiers(state: KeyButMask) -> Modifiers {
    let ctrl = state.contains(KeyButMask::CONTROL);
    Modifiers {
        alt: state.contains(KeyButMask::MOD1),
        ctrl,
        shift: state.contains(KeyButMask::SHIFT),
        mac_cmd: false,
        command: ctrl,
    }
}

pub(crate) fn pointer_button(
    detail: u8,
    x: i16,
    y: i16,
    state: KeyButMask,
    pressed: bool,
) -> Option<egui::Event> {
    let button = match detail {
        1 => PointerButton::Primary,
        2 => PointerButton::Middle,
        3 => PointerButton::Secondary,
        _ => return None,
    };
    Some(egui::Event::PointerButton {
        pos: pos2(f32::from(x), f32::from(y)),
        button,
        pressed,
        modifiers: modifiers(state),
    })
}
