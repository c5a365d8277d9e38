//! The virtual keyboard's own keymap: one key per keysym mcec has needed so far.
//!
//! A Wayland client that injects keys sends key codes with a keymap it uploads itself, so
//! mcec never depends on the operator's layout: any character is typed by giving its keysym a
//! key of its own (the X11 backend does the same with a spare keycode). The four modifiers
//! sit on the first keys, mapped to the real modifiers the `modifiers` request names.

use xkeysym::key;

/// The modifier keysyms, always on the first keys, in the order of [`MOD_MASKS`].
pub const MODIFIERS: [u32; 4] = [key::Shift_L, key::Control_L, key::Alt_L, key::Super_L];
/// Shift, Control, Mod1 (Alt), Mod4 (Super) as bits of xkb's real modifier mask.
pub const MOD_MASKS: [u32; 4] = [1, 4, 8, 64];
/// The modifier map entries of [`MODIFIERS`].
const MOD_NAMES: [&str; 4] = ["Shift", "Control", "Mod1", "Mod4"];
/// xkb key codes are evdev codes plus 8, at most 255: this many keys fit after code 1.
pub const CAPACITY: usize = 247;

/// The keysyms on the keyboard, key `i` (evdev code `i + 1`) producing `syms[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    syms: Vec<u32>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap { syms: MODIFIERS.to_vec() }
    }
}

impl Keymap {
    /// The evdev code that produces `keysym`, adding a key when there is none: `(code, added)`.
    /// When every key is taken, the keymap starts again from the modifiers (the caller holds
    /// nothing but modifiers then). `None` only for keysym 0.
    pub fn code_of(&mut self, keysym: u32) -> Option<(u32, bool)> {
        if keysym == 0 {
            return None;
        }
        if let Some(i) = self.syms.iter().position(|s| *s == keysym) {
            return Some((index_code(i), false));
        }
        if self.syms.len() >= CAPACITY {
            self.syms.truncate(MODIFIERS.len());
        }
        self.syms.push(keysym);
        Some((index_code(self.syms.len() - 1), true))
    }

    /// The keymap in xkb's text format, for the `keymap` request.
    pub fn text(&self) -> String {
        let mut codes = String::new();
        let mut symbols = String::new();
        for (i, sym) in self.syms.iter().enumerate() {
            let xkb = index_code(i) + 8;
            codes.push_str(&format!("    <K{i}> = {xkb};\n"));
            symbols.push_str(&format!("    key <K{i}> {{ [ 0x{sym:08x} ] }};\n"));
        }
        for (i, name) in MOD_NAMES.iter().enumerate() {
            symbols.push_str(&format!("    modifier_map {name} {{ <K{i}> }};\n"));
        }
        format!(
            "xkb_keymap {{\n  xkb_keycodes \"mcec\" {{\n    minimum = 8;\n    maximum = 255;\n{codes}  }};\n  \
             xkb_types \"mcec\" {{ include \"complete\" }};\n  xkb_compatibility \"mcec\" {{ include \"complete\" }};\n  \
             xkb_symbols \"mcec\" {{\n{symbols}  }};\n}};\n"
        )
    }
}

fn index_code(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(0) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_added_once_and_modifiers_come_first() {
        let mut k = Keymap::default();
        assert_eq!(k.code_of(key::Control_L), Some((2, false)));
        assert_eq!(k.code_of(u32::from('é')), Some((5, true)));
        assert_eq!(k.code_of(u32::from('é')), Some((5, false)));
        assert_eq!(k.code_of(0), None);
        let text = k.text();
        assert!(text.contains("<K4> = 13;") && text.contains("key <K4> { [ 0x000000e9 ] };"), "{text}");
        assert!(text.contains("modifier_map Mod1 { <K2> };"), "{text}");
    }

    #[test]
    fn a_full_keymap_starts_again_from_the_modifiers() {
        let mut k = Keymap::default();
        for c in 0..(CAPACITY - MODIFIERS.len()) {
            k.code_of(0x0100_0000 + u32::try_from(c).unwrap_or(0));
        }
        assert_eq!(k.code_of(0x0200_0000), Some((5, true)));
        assert_eq!(k.code_of(key::Shift_L), Some((1, false)));
    }
}
