//! The stop chord in sway's `bindsym` syntax, and the binding commands mcec adds and checks.
//!
//! The chord is the operator's `EmergencyStopHotkey` (`mcec_rules::hotkey`); sway names
//! modifiers `Ctrl`, `Mod1` (Alt), `Shift`, `Mod4` (the logo key) and keys by their xkb keysym
//! (`s`, `5`, `F12`, `Return`). Every binding is restricted to one input device, and marked
//! `--locked` (it works on a locked screen) and `--inhibited` (a client holding the keyboard
//! shortcuts inhibitor, such as a VM viewer, does not swallow it). Its command is `nop` with
//! mcec's nonce, so pressing it runs nothing and sway's `binding` event names whose it was.

use mcec_rules::hotkey::{Hotkey, MainKeyKind, NamedKey};

/// The flags every mcec binding carries; `unbindsym` must name the same ones to match it.
const FLAGS: &str = "--locked --inhibited --no-warn";

/// `Ctrl+Alt+Shift+S` → `Ctrl+Mod1+Shift+s`.
pub fn sway_chord(hotkey: &Hotkey) -> String {
    let mut parts: Vec<String> = Vec::new();
    if hotkey.mods.ctrl {
        parts.push("Ctrl".into());
    }
    if hotkey.mods.alt {
        parts.push("Mod1".into());
    }
    if hotkey.mods.shift {
        parts.push("Shift".into());
    }
    if hotkey.mods.win {
        parts.push("Mod4".into());
    }
    parts.push(match hotkey.key.kind() {
        MainKeyKind::Letter(c) => c.to_ascii_lowercase().to_string(),
        MainKeyKind::Digit(d) => d.to_string(),
        MainKeyKind::Function(n) => format!("F{n}"),
        MainKeyKind::Named(k) => keysym_name(k).to_string(),
    });
    parts.join("+")
}

/// The xkb keysym name of a named chord key.
fn keysym_name(k: NamedKey) -> &'static str {
    match k {
        NamedKey::Esc => "Escape",
        NamedKey::Pause => "Pause",
        NamedKey::Space => "space",
        NamedKey::Enter => "Return",
        NamedKey::Tab => "Tab",
        NamedKey::Delete => "Delete",
        NamedKey::Insert => "Insert",
        NamedKey::Home => "Home",
        NamedKey::End => "End",
        NamedKey::PageUp => "Prior",
        NamedKey::PageDown => "Next",
        NamedKey::ScrollLock => "Scroll_Lock",
        NamedKey::PrintScreen => "Print",
    }
}

/// mcec's bindings for one process: the chord and the nonce its `nop` carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopBinding {
    chord: String,
    nonce: String,
}

impl StopBinding {
    pub fn new(hotkey: &Hotkey, nonce: &str) -> StopBinding {
        StopBinding { chord: sway_chord(hotkey), nonce: nonce.to_string() }
    }

    /// The `nop` argument sway's `binding` event reports back.
    pub fn marker(&self) -> String {
        format!("mcec-stop-{}", self.nonce)
    }

    /// Adds the binding for one device.
    pub fn bind(&self, device: &str) -> String {
        format!("bindsym {FLAGS} --input-device={} {} nop {}", one_word(device), self.chord, self.marker())
    }

    /// Removes the binding for one device; sway answers an error when there is none.
    pub fn unbind(&self, device: &str) -> String {
        format!("unbindsym {FLAGS} --input-device={} {}", one_word(device), self.chord)
    }

    /// Whether a fired binding's command is this process's.
    pub fn is_ours(&self, command: &str) -> bool {
        command.trim() == format!("nop {}", self.marker())
    }
}

/// A device identifier as one sway argument. sway writes spaces in identifiers as `_`, so a
/// real one loses nothing here; one from a hostile device name cannot split the command.
fn one_word(device: &str) -> String {
    device
        .chars()
        .filter(|c| !matches!(c, '"' | '\'' | ';' | ',' | '\\') && !c.is_control() && !c.is_whitespace())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chord(spec: &str) -> String {
        sway_chord(&Hotkey::parse(spec).expect(spec))
    }

    #[test]
    fn chords_translate_to_sway_names() {
        assert_eq!(chord("Ctrl+Alt+Shift+S"), "Ctrl+Mod1+Shift+s");
        assert_eq!(chord("Win+F12"), "Mod4+F12");
        assert_eq!(chord("Ctrl+Alt+Pause"), "Ctrl+Mod1+Pause");
        assert_eq!(chord("Ctrl+Shift+PageDown"), "Ctrl+Shift+Next");
        assert_eq!(chord("Ctrl+Alt+5"), "Ctrl+Mod1+5");
    }

    #[test]
    fn bind_and_unbind_name_the_same_flags_device_and_chord() {
        let b = StopBinding::new(&Hotkey::default(), "ab12");
        let bind = b.bind("0:0:X11_keyboard");
        let unbind = b.unbind("0:0:X11_keyboard");
        assert_eq!(
            bind,
            "bindsym --locked --inhibited --no-warn --input-device=0:0:X11_keyboard Ctrl+Mod1+Shift+s nop mcec-stop-ab12"
        );
        assert!(bind.starts_with(&unbind.replacen("unbindsym", "bindsym", 1)));
        assert!(b.is_ours("nop mcec-stop-ab12"));
        assert!(!b.is_ours("nop mcec-stop-ab13"));
    }

    #[test]
    fn a_hostile_device_name_cannot_add_a_command() {
        let b = StopBinding::new(&Hotkey::default(), "n");
        let cmd = b.bind("1:2:evil\"; exec rm -rf ~; \"");
        assert_eq!(cmd.matches(';').count(), 0, "{cmd}");
        assert_eq!(cmd.split(' ').count(), 8, "{cmd}");
    }
}
