//! The `keys` grammar of the `key` tool, parsed once into platform-neutral [`Chord`]s.
//!
//! A spec is one or more chords separated by spaces, pressed one after another:
//! `ctrl+shift+t`, `Enter`, `F5`, `super+l`, `ctrl+a Delete`. A chord is `+`-separated
//! tokens, case-insensitive: any number of modifiers and exactly one main key (or a lone
//! modifier such as `shift`). Letters name the key, not the character: `ctrl+T` presses the
//! `t` key without shift; write `shift+t` for a capital. `+` itself is `plus` (or a trailing
//! `++`, as in `ctrl++`).

use std::fmt;

use mcec_rules::hotkey::NamedKey as HotkeyName;

/// Longest accepted spec, in chords; more is almost certainly a mistake for `type`.
pub const MAX_CHORDS: usize = 32;

/// A modifier key; also what pointer tools take in `modifiers` (`ctrl`, `shift`, `alt`,
/// `super`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Modifier {
    Ctrl,
    Shift,
    Alt,
    Super,
}

/// Keys that are not characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamedKey {
    /// A key the emergency-stop chord can name too, under the same name and spellings
    /// (`Enter`/`Return`, `Esc`/`Escape`, `Tab`, `Delete`, `PageUp`, `PrintScreen`, …).
    Common(HotkeyName),
    BackSpace,
    Up,
    Down,
    Left,
    Right,
    Menu,
    CapsLock,
    NumLock,
    /// `F1`..`F24`.
    F(u8),
}

/// One key on a platform-neutral keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Modifier(Modifier),
    Named(NamedKey),
    /// The key that produces this character without modifiers (letters lower-cased).
    Char(char),
}

/// Modifiers held (pressed in this order) around one main key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chord {
    pub modifiers: Vec<Modifier>,
    pub key: Key,
}

/// Why a spec did not parse; shown to the agent after the field name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySpecError {
    Empty,
    TooManyChords,
    EmptyToken(String),
    UnknownKey(String),
    TwoMainKeys(String),
}

impl fmt::Display for KeySpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySpecError::Empty => f.write_str("is empty; give keys such as `ctrl+s` or `Enter`"),
            KeySpecError::TooManyChords => {
                write!(f, "holds more than {MAX_CHORDS} chords; use `type` for text")
            }
            KeySpecError::EmptyToken(c) => write!(f, "chord `{c}` has an empty part"),
            KeySpecError::UnknownKey(k) => write!(
                f,
                "unknown key name `{k}` (try e.g. `Enter`, `Tab`, `Esc`, `F5`, `Left`, `a`, `ctrl`)"
            ),
            KeySpecError::TwoMainKeys(c) => {
                write!(f, "chord `{c}` has more than one non-modifier key; separate chords with spaces")
            }
        }
    }
}

/// Parse a whole `keys` spec.
pub fn parse_keys(spec: &str) -> Result<Vec<Chord>, KeySpecError> {
    let chords: Vec<&str> = spec.split_whitespace().collect();
    if chords.is_empty() {
        return Err(KeySpecError::Empty);
    }
    if chords.len() > MAX_CHORDS {
        return Err(KeySpecError::TooManyChords);
    }
    chords.into_iter().map(parse_chord).collect()
}

fn parse_chord(chord: &str) -> Result<Chord, KeySpecError> {
    let (head, plus_key) = if chord == "+" {
        ("", true)
    } else if let Some(head) = chord.strip_suffix("++") {
        (head, true)
    } else {
        (chord, false)
    };
    let mut keys = Vec::new();
    if !head.is_empty() {
        for token in head.split('+') {
            if token.trim().is_empty() {
                return Err(KeySpecError::EmptyToken(chord.to_string()));
            }
            keys.push(parse_token(token.trim())?);
        }
    }
    if plus_key {
        keys.push(Key::Char('+'));
    }
    let mut modifiers = Vec::new();
    let mut main = None;
    for key in keys {
        match key {
            Key::Modifier(m) => {
                if !modifiers.contains(&m) {
                    modifiers.push(m);
                }
            }
            other => {
                if main.replace(other).is_some() {
                    return Err(KeySpecError::TwoMainKeys(chord.to_string()));
                }
            }
        }
    }
    let key = match main {
        Some(k) => k,
        // A chord of modifiers only: the last one is the key pressed.
        None => match modifiers.pop() {
            Some(m) => Key::Modifier(m),
            None => return Err(KeySpecError::EmptyToken(chord.to_string())),
        },
    };
    Ok(Chord { modifiers, key })
}

fn parse_token(token: &str) -> Result<Key, KeySpecError> {
    let mut chars = token.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Ok(Key::Char(c.to_lowercase().next().unwrap_or(c)));
    }
    let lower = token.to_ascii_lowercase();
    let named = |k| Ok(Key::Named(k));
    let modifier = |m| Ok(Key::Modifier(m));
    if let Some(shared) = HotkeyName::from_token(&lower) {
        return named(NamedKey::Common(shared));
    }
    match lower.as_str() {
        "ctrl" | "control" | "ctl" | "ctrl_l" | "control_l" | "ctrl_r" | "control_r" => {
            modifier(Modifier::Ctrl)
        }
        "shift" | "shft" | "shift_l" | "shift_r" => modifier(Modifier::Shift),
        "alt" | "option" | "alt_l" | "alt_r" => modifier(Modifier::Alt),
        "super" | "win" | "windows" | "meta" | "cmd" | "lwin" | "rwin" | "super_l" | "super_r" => {
            modifier(Modifier::Super)
        }
        "backspace" | "back" => named(NamedKey::BackSpace),
        "page_up" | "prior" | "pgup" => named(NamedKey::Common(HotkeyName::PageUp)),
        "page_down" | "next" | "pgdn" => named(NamedKey::Common(HotkeyName::PageDown)),
        "up" => named(NamedKey::Up),
        "down" => named(NamedKey::Down),
        "left" => named(NamedKey::Left),
        "right" => named(NamedKey::Right),
        "menu" | "apps" => named(NamedKey::Menu),
        "print" | "prtsc" => named(NamedKey::Common(HotkeyName::PrintScreen)),
        "scroll_lock" => named(NamedKey::Common(HotkeyName::ScrollLock)),
        "capslock" | "caps_lock" => named(NamedKey::CapsLock),
        "numlock" | "num_lock" => named(NamedKey::NumLock),
        "plus" => Ok(Key::Char('+')),
        "minus" => Ok(Key::Char('-')),
        "equal" | "equals" => Ok(Key::Char('=')),
        "comma" => Ok(Key::Char(',')),
        "period" | "dot" => Ok(Key::Char('.')),
        "slash" => Ok(Key::Char('/')),
        "backslash" => Ok(Key::Char('\\')),
        "semicolon" => Ok(Key::Char(';')),
        "apostrophe" | "quote" => Ok(Key::Char('\'')),
        "grave" | "backtick" => Ok(Key::Char('`')),
        "bracketleft" => Ok(Key::Char('[')),
        "bracketright" => Ok(Key::Char(']')),
        _ => match lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
            Some(n @ 1..=24) if !lower[1..].starts_with('0') => named(NamedKey::F(n)),
            _ => Err(KeySpecError::UnknownKey(token.to_string())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(spec: &str) -> Chord {
        let mut v = parse_keys(spec).expect(spec);
        assert_eq!(v.len(), 1, "{spec}");
        v.remove(0)
    }

    #[test]
    fn chords_and_names() {
        assert_eq!(
            one("ctrl+shift+t"),
            Chord { modifiers: vec![Modifier::Ctrl, Modifier::Shift], key: Key::Char('t') }
        );
        assert_eq!(one("Return").key, Key::Named(NamedKey::Common(HotkeyName::Enter)));
        assert_eq!(one("enter").key, one("Return").key);
        assert_eq!(one("Escape").key, one("esc").key);
        assert_eq!(one("prtsc").key, Key::Named(NamedKey::Common(HotkeyName::PrintScreen)));
        assert_eq!(one("F5").key, Key::Named(NamedKey::F(5)));
        assert_eq!(one("f24").key, Key::Named(NamedKey::F(24)));
        assert_eq!(one("super+l"), Chord { modifiers: vec![Modifier::Super], key: Key::Char('l') });
        assert_eq!(one("ctrl+T").key, Key::Char('t'));
        assert_eq!(one(" Ctrl + Alt + Delete ".replace(' ', "").as_str()).modifiers.len(), 2);
        assert_eq!(one("shift"), Chord { modifiers: vec![], key: Key::Modifier(Modifier::Shift) });
        assert_eq!(
            one("ctrl+shift"),
            Chord { modifiers: vec![Modifier::Ctrl], key: Key::Modifier(Modifier::Shift) }
        );
        assert_eq!(one("ctrl++").key, Key::Char('+'));
        assert_eq!(one("+").key, Key::Char('+'));
        assert_eq!(one("ctrl+plus").key, Key::Char('+'));
        assert_eq!(one("é").key, Key::Char('é'));
        assert_eq!(parse_keys("ctrl+a Delete").map(|v| v.len()), Ok(2));
    }

    #[test]
    fn bad_specs() {
        assert_eq!(parse_keys("  "), Err(KeySpecError::Empty));
        assert_eq!(parse_keys("ctrl+nosuchkey"), Err(KeySpecError::UnknownKey("nosuchkey".into())));
        assert_eq!(parse_keys("F25"), Err(KeySpecError::UnknownKey("F25".into())));
        assert_eq!(parse_keys("F05"), Err(KeySpecError::UnknownKey("F05".into())));
        assert_eq!(parse_keys("F0"), Err(KeySpecError::UnknownKey("F0".into())));
        assert_eq!(parse_keys("ctrl++a"), Err(KeySpecError::EmptyToken("ctrl++a".into())));
        assert_eq!(parse_keys("a+b"), Err(KeySpecError::TwoMainKeys("a+b".into())));
        let long = vec!["a"; MAX_CHORDS + 1].join(" ");
        assert_eq!(parse_keys(&long), Err(KeySpecError::TooManyChords));
        assert!(KeySpecError::UnknownKey("x".into()).to_string().contains("`x`"));
    }
}
