//! Key chords in plain words without the text they might type: `ctrl+s` is shown as `Ctrl+S`
//! and `Enter` as `Enter`, but a chord that types a character (`h`, `shift+h`, `minus`) is
//! only counted, since a run of them can spell a password.
//!
//! This reads the `key` tool's spelling only as far as the words need; the tool's own parser
//! (`mcec_desktop::keys`) decides what is pressed. Whatever this does not recognise as a
//! modifier or a non-character key counts as a character key, so a spelling added to the
//! grammar later is hidden, never shown.

use crate::hotkey::NamedKey;
use crate::text::ellipsize;

/// `Ctrl+S`, `Ctrl+A, Delete`, `3 character keys, Enter`.
pub(super) fn chords(spec: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut typed = 0usize;
    for chord in spec.split_whitespace() {
        match shown(chord) {
            Some(words) => {
                flush(&mut parts, &mut typed);
                parts.push(words);
            }
            None => typed += 1,
        }
    }
    flush(&mut parts, &mut typed);
    if parts.is_empty() { "keys".into() } else { parts.join(", ") }
}

/// A run of character keys, as a count.
fn flush(parts: &mut Vec<String>, typed: &mut usize) {
    if *typed > 0 {
        parts.push(super::count(*typed, "character key"));
    }
    *typed = 0;
}

/// The chord in words, or `None` when it may type a character: a character key (or one
/// this does not know) with no Ctrl, Alt or Super held.
fn shown(chord: &str) -> Option<String> {
    let (head, plus) = match chord.strip_suffix("++") {
        Some(head) => (head, true),
        None if chord == "+" => ("", true),
        None => (chord, false),
    };
    let mut modifiers: Vec<&'static str> = Vec::new();
    let mut main: Option<&str> = plus.then_some("plus");
    for token in head.split('+').map(str::trim).filter(|t| !t.is_empty()) {
        match modifier(token) {
            Some(m) => modifiers.push(m),
            None => main = Some(token),
        }
    }
    let commanding = modifiers.iter().any(|m| *m != "Shift");
    let key = match main {
        Some(token) => match non_character_key(token) {
            Some(named) => named,
            None if commanding => character_name(token),
            None => return None,
        },
        // A chord of modifiers alone presses its last one.
        None if !modifiers.is_empty() => return Some(modifiers.join("+")),
        None => return None,
    };
    modifiers.iter().map(|m| format!("{m}+")).chain([key]).collect::<String>().into()
}

/// A character key held with Ctrl, Alt or Super: `S` for `s`, `Minus` for `minus`.
fn character_name(token: &str) -> String {
    let mut chars = token.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => c.to_uppercase().collect(),
        _ => ellipsize(&capitalised(token), 12),
    }
}

/// A modifier's display name, for the pointer tools' `modifiers` too (`ctrl` → `Ctrl`); an
/// unknown spelling is shown capitalised.
pub(super) fn modifier_name(token: &str) -> String {
    modifier(token).map_or_else(|| capitalised(token), str::to_string)
}

fn modifier(token: &str) -> Option<&'static str> {
    Some(match token.to_ascii_lowercase().as_str() {
        "ctrl" | "control" | "ctl" | "ctrl_l" | "control_l" | "ctrl_r" | "control_r" => "Ctrl",
        "shift" | "shft" | "shift_l" | "shift_r" => "Shift",
        "alt" | "option" | "alt_l" | "alt_r" => "Alt",
        "super" | "win" | "windows" | "meta" | "cmd" | "lwin" | "rwin" | "super_l" | "super_r" => "Super",
        _ => return None,
    })
}

/// The key's name when it types nothing (Enter, Tab, F5, Left, Delete); `None` for a
/// character key (a letter, a digit, `minus`, `Space`) and for anything unknown.
fn non_character_key(token: &str) -> Option<String> {
    let lower = token.to_ascii_lowercase();
    if let Some(named) = NamedKey::from_token(&lower).filter(|k| *k != NamedKey::Space) {
        return Some(named.name().to_string());
    }
    let name = match lower.as_str() {
        "backspace" | "back" => "BackSpace",
        "page_up" | "prior" | "pgup" => "PageUp",
        "page_down" | "next" | "pgdn" => "PageDown",
        "up" => "Up",
        "down" => "Down",
        "left" => "Left",
        "right" => "Right",
        "menu" | "apps" => "Menu",
        "print" | "prtsc" => "PrintScreen",
        "scroll_lock" => "ScrollLock",
        "capslock" | "caps_lock" => "CapsLock",
        "numlock" | "num_lock" => "NumLock",
        _ => {
            let n: u8 = lower.strip_prefix('f').filter(|n| !n.starts_with('0'))?.parse().ok()?;
            return (1..=24).contains(&n).then(|| format!("F{n}"));
        }
    };
    Some(name.to_string())
}

fn capitalised(token: &str) -> String {
    let mut chars = token.chars().filter(|c| c.is_ascii_alphanumeric());
    chars.next().map(|c| c.to_ascii_uppercase().to_string() + &chars.collect::<String>()).unwrap_or_default()
}
