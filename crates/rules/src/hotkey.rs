//! The emergency-stop hotkey: the settings string (`EmergencyStopHotkey`) parsed once, at
//! the edge, into a [`Hotkey`] that cannot be invalid.
//!
//! Grammar (contract, "Emergency stop"): `+`-separated tokens, each trimmed and read
//! case-insensitively; empty tokens are dropped. Modifiers:
//!
//! | modifier | accepted spellings |
//! |---|---|
//! | Ctrl  | `ctrl`, `control`, `ctl` |
//! | Alt   | `alt`, `menu` |
//! | Shift | `shift`, `shft` |
//! | Win   | `win`, `windows`, `super`, `meta` |
//!
//! Each modifier spelling may carry a side prefix `l`, `r`, `left` or `right` (`lctrl`,
//! `rightshift`, `lwin`, `rmenu`, ...); the side is dropped, because the chord accepts
//! either side of a modifier. `altgr` is not accepted: on X11 it is not Alt.
//!
//! Exactly one main key: a letter `a`-`z`, a top-row digit `0`-`9` (one character), `F1`-`F24`
//! (no leading zero), or `esc|escape`, `pause|break`, `space`, `enter|return`, `tab`,
//! `del|delete`, `ins|insert`, `home`, `end`, `pageup`, `pagedown`, `scrolllock`,
//! `printscreen`. A main key without modifiers (`Pause`) is allowed; one that ordinary typing
//! would press (`a`, `space`) is allowed too, with a warning from [`Hotkey::from_settings`].
//!
//! Rejected: raw key codes (a token of two or more digits such as `65`, or a `0x` hex
//! number), a chord of modifiers only (a modifier cannot be the main key), a second main key,
//! an empty spec, and any unknown token. Repeating a modifier (`ctrl+lctrl`) is harmless and
//! accepted.

use std::fmt;

/// One of the four chord modifiers, side collapsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Modifier {
    Ctrl,
    Alt,
    Shift,
    Win,
}

impl Modifier {
    pub const ALL: [Modifier; 4] = [Modifier::Ctrl, Modifier::Alt, Modifier::Shift, Modifier::Win];

    pub fn name(self) -> &'static str {
        match self {
            Modifier::Ctrl => "Ctrl",
            Modifier::Alt => "Alt",
            Modifier::Shift => "Shift",
            Modifier::Win => "Win",
        }
    }
}

/// The set of modifiers a chord requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Modifiers {
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
    pub win: bool,
}

impl Modifiers {
    pub const NONE: Modifiers = Modifiers { ctrl: false, alt: false, shift: false, win: false };

    pub fn contains(self, m: Modifier) -> bool {
        match m {
            Modifier::Ctrl => self.ctrl,
            Modifier::Alt => self.alt,
            Modifier::Shift => self.shift,
            Modifier::Win => self.win,
        }
    }

    pub fn with(mut self, m: Modifier) -> Self {
        match m {
            Modifier::Ctrl => self.ctrl = true,
            Modifier::Alt => self.alt = true,
            Modifier::Shift => self.shift = true,
            Modifier::Win => self.win = true,
        }
        self
    }

    /// The required modifiers in display order.
    pub fn iter(self) -> impl Iterator<Item = Modifier> {
        Modifier::ALL.into_iter().filter(move |m| self.contains(*m))
    }
}

/// A named (non-letter, non-digit, non-F) main key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamedKey {
    Esc,
    Pause,
    Space,
    Enter,
    Tab,
    Delete,
    Insert,
    Home,
    End,
    PageUp,
    PageDown,
    ScrollLock,
    PrintScreen,
}

impl NamedKey {
    pub const ALL: [NamedKey; 13] = [
        NamedKey::Esc,
        NamedKey::Pause,
        NamedKey::Space,
        NamedKey::Enter,
        NamedKey::Tab,
        NamedKey::Delete,
        NamedKey::Insert,
        NamedKey::Home,
        NamedKey::End,
        NamedKey::PageUp,
        NamedKey::PageDown,
        NamedKey::ScrollLock,
        NamedKey::PrintScreen,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NamedKey::Esc => "Esc",
            NamedKey::Pause => "Pause",
            NamedKey::Space => "Space",
            NamedKey::Enter => "Enter",
            NamedKey::Tab => "Tab",
            NamedKey::Delete => "Delete",
            NamedKey::Insert => "Insert",
            NamedKey::Home => "Home",
            NamedKey::End => "End",
            NamedKey::PageUp => "PageUp",
            NamedKey::PageDown => "PageDown",
            NamedKey::ScrollLock => "ScrollLock",
            NamedKey::PrintScreen => "PrintScreen",
        }
    }

    /// The named key a lower-case token spells (`esc`/`escape`, `enter`/`return`, …): the one
    /// vocabulary of key names, shared with the `key` tool's grammar.
    pub fn from_token(t: &str) -> Option<NamedKey> {
        Some(match t {
            "esc" | "escape" => NamedKey::Esc,
            "pause" | "break" => NamedKey::Pause,
            "space" => NamedKey::Space,
            "enter" | "return" => NamedKey::Enter,
            "tab" => NamedKey::Tab,
            "del" | "delete" => NamedKey::Delete,
            "ins" | "insert" => NamedKey::Insert,
            "home" => NamedKey::Home,
            "end" => NamedKey::End,
            "pageup" => NamedKey::PageUp,
            "pagedown" => NamedKey::PageDown,
            "scrolllock" => NamedKey::ScrollLock,
            "printscreen" => NamedKey::PrintScreen,
            _ => return None,
        })
    }
}

/// The one non-modifier key of a chord. Only the constructors below make one, so a
/// `MainKey` is always a key the grammar allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MainKey(KeyRepr);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum KeyRepr {
    /// Uppercase ASCII letter.
    Letter(u8),
    /// 0..=9
    Digit(u8),
    /// 1..=24
    F(u8),
    Named(NamedKey),
}

/// What kind of main key this is, for callers that map it to a platform key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MainKeyKind {
    /// An uppercase ASCII letter `A`-`Z`.
    Letter(char),
    /// A top-row digit 0-9.
    Digit(u8),
    /// A function key F1-F24.
    Function(u8),
    Named(NamedKey),
}

impl MainKey {
    /// A letter key, either case. `None` for anything but ASCII letters.
    pub fn letter(c: char) -> Option<MainKey> {
        c.is_ascii_alphabetic().then(|| MainKey(KeyRepr::Letter(c.to_ascii_uppercase() as u8)))
    }

    /// A top-row digit key. `None` above 9.
    pub fn digit(d: u8) -> Option<MainKey> {
        (d <= 9).then_some(MainKey(KeyRepr::Digit(d)))
    }

    /// A function key `F1`-`F24`. `None` outside that range.
    pub fn function(n: u8) -> Option<MainKey> {
        (1..=24).contains(&n).then_some(MainKey(KeyRepr::F(n)))
    }

    pub fn named(k: NamedKey) -> MainKey {
        MainKey(KeyRepr::Named(k))
    }

    pub fn kind(self) -> MainKeyKind {
        match self.0 {
            KeyRepr::Letter(b) => MainKeyKind::Letter(b as char),
            KeyRepr::Digit(d) => MainKeyKind::Digit(d),
            KeyRepr::F(n) => MainKeyKind::Function(n),
            KeyRepr::Named(k) => MainKeyKind::Named(k),
        }
    }
}

impl fmt::Display for MainKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            KeyRepr::Letter(b) => write!(f, "{}", b as char),
            KeyRepr::Digit(d) => write!(f, "{d}"),
            KeyRepr::F(n) => write!(f, "F{n}"),
            KeyRepr::Named(k) => f.write_str(k.name()),
        }
    }
}

/// A parsed emergency-stop chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hotkey {
    pub mods: Modifiers,
    pub key: MainKey,
}

/// Why a hotkey spec was rejected. `Display` gives a sentence a user can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HotkeyError {
    /// The spec had no tokens at all (empty, blank, or only `+`).
    Empty,
    /// Every token was a modifier: a modifier cannot be the main key.
    NoMainKey,
    /// A second main key after the first one.
    TwoMainKeys { first: String, second: String },
    /// A raw key code such as `65` or `0x41`.
    RawKeyCode(String),
    /// A token that is neither a modifier nor an allowed main key.
    UnknownKey(String),
}

impl fmt::Display for HotkeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HotkeyError::Empty => f.write_str("the hotkey is empty; give a chord such as Ctrl+Alt+Shift+S"),
            HotkeyError::NoMainKey => f.write_str(
                "the hotkey has only modifiers; add one main key (a modifier cannot be the main key), e.g. Ctrl+Alt+Shift+S",
            ),
            HotkeyError::TwoMainKeys { first, second } => {
                write!(f, "the hotkey names two main keys (`{first}` and `{second}`); use exactly one")
            }
            HotkeyError::RawKeyCode(t) => {
                write!(f, "`{t}` is a raw key code; name the key instead (a letter, a digit 0-9, F1-F24 or a key name)")
            }
            HotkeyError::UnknownKey(t) => write!(
                f,
                "`{t}` is not a known key; use ctrl, alt, shift, win and one of a-z, 0-9, F1-F24, esc, pause, space, enter, tab, delete, insert, home, end, pageup, pagedown, scrolllock, printscreen"
            ),
        }
    }
}

impl std::error::Error for HotkeyError {}

impl Default for Hotkey {
    /// `Ctrl+Alt+Shift+S`.
    fn default() -> Self {
        Hotkey {
            mods: Modifiers { ctrl: true, alt: true, shift: true, win: false },
            key: MainKey(KeyRepr::Letter(b'S')),
        }
    }
}

impl fmt::Display for Hotkey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in self.mods.iter() {
            write!(f, "{}+", m.name())?;
        }
        write!(f, "{}", self.key)
    }
}

enum Token {
    Modifier(Modifier),
    Main(MainKey),
}

fn modifier_base(t: &str) -> Option<Modifier> {
    Some(match t {
        "ctrl" | "control" | "ctl" => Modifier::Ctrl,
        "alt" | "menu" => Modifier::Alt,
        "shift" | "shft" => Modifier::Shift,
        "win" | "windows" | "super" | "meta" => Modifier::Win,
        _ => return None,
    })
}

fn modifier(t: &str) -> Option<Modifier> {
    modifier_base(t).or_else(|| {
        ["left", "right", "l", "r"].iter().find_map(|p| t.strip_prefix(p).and_then(modifier_base))
    })
}

fn main_key(t: &str) -> Result<MainKey, HotkeyError> {
    let bytes = t.as_bytes();
    if bytes.len() == 1 {
        let c = bytes[0];
        if c.is_ascii_alphabetic() {
            return Ok(MainKey(KeyRepr::Letter(c.to_ascii_uppercase())));
        }
        if c.is_ascii_digit() {
            return Ok(MainKey(KeyRepr::Digit(c - b'0')));
        }
    }
    if bytes.len() > 1 && bytes.iter().all(u8::is_ascii_digit) {
        return Err(HotkeyError::RawKeyCode(t.to_owned()));
    }
    if let Some(hex) = t.strip_prefix("0x")
        && !hex.is_empty()
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Err(HotkeyError::RawKeyCode(t.to_owned()));
    }
    if let Some(n) = t.strip_prefix('f')
        && !n.is_empty()
        && !n.starts_with('0')
        && n.bytes().all(|b| b.is_ascii_digit())
        && let Ok(v) = n.parse::<u8>()
        && let Some(k) = MainKey::function(v)
    {
        return Ok(k);
    }
    NamedKey::from_token(t).map(MainKey::named).ok_or_else(|| HotkeyError::UnknownKey(t.to_owned()))
}

fn token(raw: &str) -> Result<Token, HotkeyError> {
    let t = raw.to_ascii_lowercase();
    if let Some(m) = modifier(&t) {
        return Ok(Token::Modifier(m));
    }
    main_key(&t).map(Token::Main).map_err(|e| match e {
        // Report the user's own spelling, not the lowercased one.
        HotkeyError::RawKeyCode(_) => HotkeyError::RawKeyCode(raw.to_owned()),
        HotkeyError::UnknownKey(_) => HotkeyError::UnknownKey(raw.to_owned()),
        other => other,
    })
}

impl Hotkey {
    /// Parses a chord spec per the grammar in the module docs.
    pub fn parse(spec: &str) -> Result<Hotkey, HotkeyError> {
        let mut mods = Modifiers::NONE;
        let mut key: Option<(MainKey, &str)> = None;
        let mut any = false;
        for raw in spec.split('+').map(str::trim).filter(|t| !t.is_empty()) {
            any = true;
            match token(raw)? {
                Token::Modifier(m) => mods = mods.with(m),
                Token::Main(k) => match key {
                    None => key = Some((k, raw)),
                    Some((_, first)) => {
                        return Err(HotkeyError::TwoMainKeys {
                            first: first.to_owned(),
                            second: raw.to_owned(),
                        });
                    }
                },
            }
        }
        match (any, key) {
            (false, _) => Err(HotkeyError::Empty),
            (true, None) => Err(HotkeyError::NoMainKey),
            (true, Some((key, _))) => Ok(Hotkey { mods, key }),
        }
    }

    /// True for a chord without modifiers on a key used in ordinary typing or navigation:
    /// valid, but the operator will trip it by accident.
    pub fn trips_while_typing(&self) -> bool {
        if self.mods != Modifiers::NONE {
            return false;
        }
        match self.key.kind() {
            MainKeyKind::Letter(_) | MainKeyKind::Digit(_) => true,
            MainKeyKind::Function(_) => false,
            MainKeyKind::Named(n) => match n {
                NamedKey::Pause | NamedKey::ScrollLock | NamedKey::PrintScreen => false,
                NamedKey::Esc
                | NamedKey::Space
                | NamedKey::Enter
                | NamedKey::Tab
                | NamedKey::Delete
                | NamedKey::Insert
                | NamedKey::Home
                | NamedKey::End
                | NamedKey::PageUp
                | NamedKey::PageDown => true,
            },
        }
    }

    /// The settings path: an invalid spec arms the default chord, with a warning line for
    /// the log that names the bad spec, the reason and the chord actually armed. A valid
    /// chord that ordinary typing would trip is armed as given, with a warning.
    pub fn from_settings(spec: &str) -> (Hotkey, Option<String>) {
        match Hotkey::parse(spec) {
            Ok(h) if h.trips_while_typing() => (
                h,
                Some(format!(
                    "EmergencyStopHotkey `{h}` has no modifier; ordinary typing will trigger the stop"
                )),
            ),
            Ok(h) => (h, None),
            Err(e) => {
                let d = Hotkey::default();
                (d, Some(format!("EmergencyStopHotkey `{spec}` is invalid: {e}; arming the default {d}")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(spec: &str, want: &str) {
        match Hotkey::parse(spec) {
            Ok(h) => assert_eq!(h.to_string(), want, "spec {spec:?}"),
            Err(e) => panic!("spec {spec:?} rejected: {e}"),
        }
    }

    #[test]
    fn accepted_specs_normalise() {
        let table = [
            ("Ctrl+Alt+Shift+S", "Ctrl+Alt+Shift+S"),
            ("ctrl+alt+shift+s", "Ctrl+Alt+Shift+S"),
            ("  shift + ALT +ctrl+ s ", "Ctrl+Alt+Shift+S"),
            ("s+ctrl", "Ctrl+S"),
            ("control+q", "Ctrl+Q"),
            ("ctl+q", "Ctrl+Q"),
            ("menu+q", "Alt+Q"),
            ("shft+q", "Shift+Q"),
            ("win+q", "Win+Q"),
            ("windows+q", "Win+Q"),
            ("super+q", "Win+Q"),
            ("meta+q", "Win+Q"),
            ("lwin+q", "Win+Q"),
            ("rwin+q", "Win+Q"),
            ("lctrl+q", "Ctrl+Q"),
            ("RCtrl+q", "Ctrl+Q"),
            ("leftctrl+q", "Ctrl+Q"),
            ("rightcontrol+q", "Ctrl+Q"),
            ("lalt+q", "Alt+Q"),
            ("rmenu+q", "Alt+Q"),
            ("lshift+rshift+q", "Shift+Q"),
            ("leftsuper+q", "Win+Q"),
            ("ctrl+lctrl+rctrl+q", "Ctrl+Q"),
            ("++ctrl++alt+q++", "Ctrl+Alt+Q"),
            ("win+shift+alt+ctrl+z", "Ctrl+Alt+Shift+Win+Z"),
            ("Pause", "Pause"),
            ("break", "Pause"),
            ("ctrl+0", "Ctrl+0"),
            ("ctrl+9", "Ctrl+9"),
            ("ctrl+f1", "Ctrl+F1"),
            ("F12", "F12"),
            ("ctrl+F24", "Ctrl+F24"),
            ("ctrl+esc", "Ctrl+Esc"),
            ("ctrl+Escape", "Ctrl+Esc"),
            ("ctrl+space", "Ctrl+Space"),
            ("ctrl+enter", "Ctrl+Enter"),
            ("ctrl+return", "Ctrl+Enter"),
            ("ctrl+tab", "Ctrl+Tab"),
            ("ctrl+del", "Ctrl+Delete"),
            ("ctrl+delete", "Ctrl+Delete"),
            ("ctrl+ins", "Ctrl+Insert"),
            ("ctrl+insert", "Ctrl+Insert"),
            ("ctrl+home", "Ctrl+Home"),
            ("ctrl+end", "Ctrl+End"),
            ("ctrl+pageup", "Ctrl+PageUp"),
            ("ctrl+PAGEDOWN", "Ctrl+PageDown"),
            ("scrolllock", "ScrollLock"),
            ("alt+printscreen", "Alt+PrintScreen"),
            ("a", "A"),
        ];
        for (spec, want) in table {
            ok(spec, want);
        }
    }

    #[test]
    fn rejected_specs_say_why() {
        use HotkeyError as E;
        let table: [(&str, E); 24] = [
            ("", E::Empty),
            ("   ", E::Empty),
            ("+", E::Empty),
            (" + + ", E::Empty),
            ("ctrl", E::NoMainKey),
            ("ctrl+alt+shift", E::NoMainKey),
            ("lctrl+rwin", E::NoMainKey),
            ("ctrl+a+b", E::TwoMainKeys { first: "a".into(), second: "b".into() }),
            ("s+F1", E::TwoMainKeys { first: "s".into(), second: "F1".into() }),
            ("pause+pause", E::TwoMainKeys { first: "pause".into(), second: "pause".into() }),
            ("ctrl+65", E::RawKeyCode("65".into())),
            ("ctrl+0x41", E::RawKeyCode("0x41".into())),
            ("0X1B", E::RawKeyCode("0X1B".into())),
            ("ctrl+00", E::RawKeyCode("00".into())),
            ("ctrl+f0", E::UnknownKey("f0".into())),
            ("ctrl+F25", E::UnknownKey("F25".into())),
            ("ctrl+F01", E::UnknownKey("F01".into())),
            ("ctrl+altgr+s", E::UnknownKey("altgr".into())),
            ("ctrl+left ctrl+s", E::UnknownKey("left ctrl".into())),
            ("ctrl+é", E::UnknownKey("é".into())),
            ("ctrl+-", E::UnknownKey("-".into())),
            ("ctrl+0x", E::UnknownKey("0x".into())),
            ("ctrl+lx", E::UnknownKey("lx".into())),
            ("hyper+s", E::UnknownKey("hyper".into())),
        ];
        for (spec, want) in table {
            assert_eq!(Hotkey::parse(spec), Err(want), "spec {spec:?}");
        }
    }

    #[test]
    fn errors_read_as_sentences() {
        for spec in ["", "ctrl", "a+b", "65", "bogus"] {
            let e = Hotkey::parse(spec).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.len() > 20, "{spec:?} -> {e:?}");
        }
    }

    #[test]
    fn default_is_ctrl_alt_shift_s() {
        assert_eq!(Hotkey::default().to_string(), "Ctrl+Alt+Shift+S");
        assert_eq!(Hotkey::parse("Ctrl+Alt+Shift+S"), Ok(Hotkey::default()));
    }

    #[test]
    fn settings_fall_back_to_default_with_a_warning() {
        let (h, w) = Hotkey::from_settings("ctrl+alt+q");
        assert_eq!((h.to_string(), w), ("Ctrl+Alt+Q".to_owned(), None));
        for bad in ["garbage!!", "ctrl+alt", "", "ctrl+65"] {
            let (h, w) = Hotkey::from_settings(bad);
            assert_eq!(h, Hotkey::default());
            let w = w.unwrap_or_default();
            assert!(w.contains("Ctrl+Alt+Shift+S") && w.contains("invalid"), "{bad:?}: {w}");
        }
    }

    #[test]
    fn bare_typing_keys_are_armed_with_a_warning() {
        for (spec, warns) in
            [("a", true), ("space", true), ("7", true), ("Pause", false), ("F12", false), ("ctrl+a", false)]
        {
            let (h, w) = Hotkey::from_settings(spec);
            assert_eq!(Ok(h), Hotkey::parse(spec), "{spec}");
            assert_eq!(w.is_some(), warns, "{spec}: {w:?}");
        }
    }

    #[test]
    fn every_main_key_round_trips_through_display() {
        let mut keys: Vec<MainKey> = ('a'..='z').filter_map(MainKey::letter).collect();
        keys.extend((0..=9).filter_map(MainKey::digit));
        keys.extend((1..=24).filter_map(MainKey::function));
        keys.extend(NamedKey::ALL.map(MainKey::named));
        assert_eq!(keys.len(), 26 + 10 + 24 + 13);
        for key in keys {
            for bits in 0..16u8 {
                let mods = Modifier::ALL
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| bits & (1 << i) != 0)
                    .fold(Modifiers::NONE, |m, (_, x)| m.with(*x));
                let h = Hotkey { mods, key };
                assert_eq!(Hotkey::parse(&h.to_string()), Ok(h), "{h}");
            }
        }
    }

    #[test]
    fn constructors_refuse_out_of_range() {
        assert_eq!(MainKey::letter('1'), None);
        assert_eq!(MainKey::digit(10), None);
        assert_eq!(MainKey::function(0), None);
        assert_eq!(MainKey::function(25), None);
        assert_eq!(MainKey::letter('q').map(MainKey::kind), Some(MainKeyKind::Letter('Q')));
    }
}
