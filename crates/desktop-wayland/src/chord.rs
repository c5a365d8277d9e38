//! mcec's chords in sway's `bindsym` syntax, and the binding commands mcec adds and checks.
//!
//! The stop chord is the operator's `EmergencyStopHotkey` (`mcec_rules::hotkey`); the chords
//! of the operator's prompts (`mcec_desktop::monitor::Control`) are bound only while their
//! prompt is shown. sway names modifiers `Ctrl`, `Mod1` (Alt), `Shift`, `Mod4` (the logo key)
//! and keys by their xkb keysym (`s`, `5`, `F12`, `Return`). Every binding is restricted to
//! one input device and marked `--inhibited` (a client holding the keyboard shortcuts
//! inhibitor, such as a VM viewer, does not swallow it); the stop's is `--locked` too (it
//! works on a locked screen; a prompt's does not, its prompt being hidden there). Its command
//! is `nop` with a nonce, so pressing it runs nothing and sway's `binding` event names whose
//! it was.

use mcec_rules::hotkey::{Hotkey, MainKeyKind, NamedKey};

/// The flags of the stop's bindings; `unbindsym` must name the same ones to match it.
const STOP_FLAGS: &str = "--locked --inhibited --no-warn";
/// The flags of a prompt's bindings.
const PROMPT_FLAGS: &str = "--inhibited --no-warn";

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

/// One of mcec's bindings: a chord, its flags and the marker its `nop` carries. The stop's
/// lives as long as the process; a prompt's for one nonce only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    chord: String,
    flags: &'static str,
    marker: String,
    /// What the log and a tampering stop call it.
    what: &'static str,
}

impl Binding {
    /// The stop chord `hotkey`, with this process's `nonce`.
    pub fn stop(hotkey: &Hotkey, nonce: &str) -> Binding {
        Binding {
            chord: sway_chord(hotkey),
            flags: STOP_FLAGS,
            marker: format!("mcec-stop-{nonce}"),
            what: "stop",
        }
    }

    /// A prompt's chord `hotkey` for the control `name` (`re-arm`, `allow`), with a nonce for
    /// this binding only.
    pub fn prompt(name: &'static str, hotkey: &Hotkey, nonce: &str) -> Binding {
        Binding {
            chord: sway_chord(hotkey),
            flags: PROMPT_FLAGS,
            marker: format!("mcec-{name}-{nonce}"),
            what: name,
        }
    }

    /// The `nop` argument sway's `binding` event reports back.
    pub fn marker(&self) -> &str {
        &self.marker
    }

    /// What it is for (`stop`, `re-arm`, `allow`).
    pub fn what(&self) -> &'static str {
        self.what
    }

    /// Adds the binding for one device.
    pub fn bind(&self, device: &str) -> String {
        format!(
            "bindsym {} --input-device={} {} nop {}",
            self.flags,
            one_word(device),
            self.chord,
            self.marker
        )
    }

    /// Removes the binding for one device; sway answers an error when there is none.
    pub fn unbind(&self, device: &str) -> String {
        format!("unbindsym {} --input-device={} {}", self.flags, one_word(device), self.chord)
    }

    /// Whether a fired binding's command is this one's.
    pub fn is_ours(&self, command: &str) -> bool {
        command.trim() == format!("nop {}", self.marker)
    }

    /// The commitment to its marker that the guard tells its members ([`commitment`]).
    pub fn commitment(&self) -> String {
        commitment(&self.marker)
    }
}

/// The marker of an mcec binding a fired binding's `command` carries (anyone's), if it is one.
pub fn marker_of(command: &str) -> Option<&str> {
    command.trim().strip_prefix("nop ").filter(|m| m.starts_with("mcec-") && !m.contains(char::is_whitespace))
}

/// A one-way digest of a binding's marker (SHA-256, hex): what a guard tells its members of a
/// binding before it is pressed, so that the socket, which anyone of the user can connect to,
/// reveals no nonce; the press reveals the marker, which then matches its commitment.
pub fn commitment(marker: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(marker.as_bytes()))
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
    fn a_marker_is_read_from_any_mcec_binding_and_committed_to_one_way() {
        assert_eq!(marker_of(" nop mcec-re-arm-00ff "), Some("mcec-re-arm-00ff"));
        assert_eq!(marker_of("nop other"), None);
        assert_eq!(marker_of("exec mcec-re-arm-00ff"), None);
        assert_eq!(marker_of("nop mcec-a; exec x"), None);
        let b = Binding::prompt("re-arm", &Hotkey::default(), "00ff");
        assert_eq!(b.commitment(), commitment("mcec-re-arm-00ff"));
        assert_eq!(b.commitment().len(), 64);
        assert!(!b.commitment().contains("00ff"));
        assert_ne!(commitment("mcec-re-arm-00fe"), b.commitment());
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
        let b = Binding::stop(&Hotkey::default(), "ab12");
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
    fn a_prompts_binding_is_not_locked_and_not_the_stops() {
        let r = Hotkey::parse("Ctrl+Alt+Shift+R").expect("chord");
        let b = Binding::prompt("re-arm", &r, "cd34");
        assert_eq!(
            b.bind("0:0:X11_keyboard"),
            "bindsym --inhibited --no-warn --input-device=0:0:X11_keyboard Ctrl+Mod1+Shift+r nop mcec-re-arm-cd34"
        );
        assert!(b.is_ours("nop mcec-re-arm-cd34"));
        assert!(!b.is_ours("nop mcec-stop-cd34"));
        assert!(!Binding::stop(&Hotkey::default(), "cd34").is_ours("nop mcec-re-arm-cd34"));
    }

    #[test]
    fn a_hostile_device_name_cannot_add_a_command() {
        let b = Binding::stop(&Hotkey::default(), "n");
        let cmd = b.bind("1:2:evil\"; exec rm -rf ~; \"");
        assert_eq!(cmd.matches(';').count(), 0, "{cmd}");
        assert_eq!(cmd.split(' ').count(), 8, "{cmd}");
    }
}
