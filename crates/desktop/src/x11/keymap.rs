//! The core keymap as mcec sees it, and the temporary keycodes that make any character
//! typeable.
//!
//! Under XKB the core keymap holds every layout (group) a keycode has: columns 0 and 1 are
//! group 1's plain and shifted symbols, columns 2 and 3 group 2's (a key with one group
//! repeats it there). The same keycode gives another character once the operator switched to
//! their second layout, so a character is looked up only in the columns of the group active
//! right now (read with XKB `GetState` before each call); a character the active group has no
//! plain or shifted key for (an AltGr level, or another layout's letter) goes onto a spare
//! keycode like any missing character. mcec never changes the operator's active group.
//!
//! A character with no key is typed by mapping its keysym onto a spare keycode (one whose
//! every column is `NoSymbol`) with `ChangeKeyboardMapping`. Clients re-read the keymap
//! when they handle the `MappingNotify` that precedes our key event, which may be well after
//! we sent it; restoring the keycode at once would make a slow client read the restored
//! (empty) mapping. So spare keycodes are restored by a short-lived thread once they have
//! been idle for [`RESTORE_AFTER`], and immediately when the backend is dropped.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use mcec_rules::hotkey::NamedKey as HotkeyName;
use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;
use xkeysym::Keysym;

use super::lock;
use crate::keys::{Key, Modifier, NamedKey};

/// Pause between mapping a spare keycode and its first press. Without it an Xlib client
/// (xev, under `de` and `us,ru`) looked about one fresh key in ten up in the old mapping and
/// got `NoSymbol`: the press arrived before the client had re-read the keymap.
const FRESH_KEYCODE_PAUSE: Duration = Duration::from_millis(20);

/// How long a temporary keycode stays mapped after its last use.
pub(crate) const RESTORE_AFTER: Duration = Duration::from_millis(1_000);

/// A spare keycode currently mapped to `keysym` by us.
#[derive(Debug, Clone, Copy)]
struct Temp {
    keycode: u8,
    keysym: u32,
    last_used: Instant,
}

/// The keymap cache plus our temporary mappings.
#[derive(Debug)]
pub(crate) struct KeyState {
    min_keycode: u8,
    per: u8,
    syms: Vec<u32>,
    temps: Vec<Temp>,
    restorer_running: bool,
    /// The effective XKB group (0-based) when last read; 0 without XKB.
    group: u8,
}

impl KeyState {
    pub(crate) fn load(conn: &RustConnection) -> Result<KeyState, ReplyError> {
        let setup = conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let map = conn.get_keyboard_mapping(min, max - min + 1)?.reply()?;
        Ok(KeyState {
            min_keycode: min,
            per: map.keysyms_per_keycode,
            syms: map.keysyms,
            temps: Vec::new(),
            restorer_running: false,
            group: 0,
        })
    }

    /// Re-read the keymap after someone changed it, keeping temporary mappings that are
    /// still in place.
    pub(crate) fn reload(&mut self, conn: &RustConnection) -> Result<(), ReplyError> {
        let fresh = KeyState::load(conn)?;
        let temps = std::mem::take(&mut self.temps);
        let running = self.restorer_running;
        let group = self.group;
        *self = fresh;
        self.group = group;
        self.restorer_running = running;
        self.temps = temps.into_iter().filter(|t| self.column(t.keycode, 0) == Some(t.keysym)).collect();
        Ok(())
    }

    fn column(&self, keycode: u8, col: u8) -> Option<u32> {
        let idx =
            usize::from(keycode.checked_sub(self.min_keycode)?) * usize::from(self.per) + usize::from(col);
        self.syms.get(idx).copied()
    }

    fn keycodes(&self) -> impl Iterator<Item = u8> + '_ {
        let count = self.syms.len() / usize::from(self.per.max(1));
        (0..count).map(move |i| self.min_keycode.saturating_add(i as u8))
    }

    pub(crate) fn set_group(&mut self, group: u8) {
        self.group = group;
    }

    /// The keycode and level (0 plain, 1 shifted) that produce `keysym` in the active group,
    /// plain preferred. Groups past the second have no fixed core columns: nothing is found
    /// there (characters then go onto a spare keycode).
    pub(crate) fn lookup(&self, keysym: u32) -> Option<(u8, u8)> {
        let first = match self.group {
            0 => 0,
            1 => 2,
            _ => return None,
        };
        self.lookup_in(keysym, first)
    }

    /// Like [`KeyState::lookup`] but in group 1's columns whatever group is active: for
    /// keys that are not characters (Return, F5, Control_L), which every group shares.
    pub(crate) fn lookup_first_group(&self, keysym: u32) -> Option<(u8, u8)> {
        self.lookup_in(keysym, 0)
    }

    fn lookup_in(&self, keysym: u32, first: u8) -> Option<(u8, u8)> {
        for level in 0..2 {
            let col = first + level;
            if col >= self.per {
                break;
            }
            if let Some(kc) = self.keycodes().find(|kc| self.column(*kc, col) == Some(keysym)) {
                return Some((kc, level));
            }
        }
        None
    }

    fn is_spare(&self, keycode: u8) -> bool {
        (0..self.per).all(|c| self.column(keycode, c).is_none_or(|s| s == 0))
    }

    /// A keycode that produces `keysym` in column 0, mapping a spare one if needed.
    /// `None` when the keymap has no spare keycode left.
    pub(crate) fn temporary(&mut self, conn: &RustConnection, keysym: u32) -> Option<u8> {
        let now = Instant::now();
        if let Some(t) = self.temps.iter_mut().find(|t| t.keysym == keysym) {
            t.last_used = now;
            return Some(t.keycode);
        }
        let spare = self.keycodes().filter(|kc| *kc > 8).find(|kc| self.is_spare(*kc));
        let keycode = match spare {
            Some(kc) => kc,
            None => {
                // Every spare keycode holds a temporary mapping: reuse the oldest, after
                // giving clients a moment to read its previous meaning.
                let oldest = self.temps.iter().min_by_key(|t| t.last_used)?.keycode;
                self.temps.retain(|t| t.keycode != oldest);
                thread::sleep(Duration::from_millis(30));
                oldest
            }
        };
        self.set(conn, keycode, keysym).ok()?;
        thread::sleep(FRESH_KEYCODE_PAUSE);
        self.temps.push(Temp { keycode, keysym, last_used: now });
        Some(keycode)
    }

    fn set(&mut self, conn: &RustConnection, keycode: u8, keysym: u32) -> Result<(), ReplyError> {
        let row = vec![keysym; usize::from(self.per)];
        conn.change_keyboard_mapping(1, keycode, self.per, &row)?.check()?;
        let start = usize::from(keycode - self.min_keycode) * usize::from(self.per);
        if let Some(slot) = self.syms.get_mut(start..start + usize::from(self.per)) {
            slot.copy_from_slice(&row);
        }
        Ok(())
    }

    /// Put every temporary keycode back to `NoSymbol`.
    fn restore_all(&mut self, conn: &RustConnection) {
        for t in std::mem::take(&mut self.temps) {
            if let Err(e) = self.set(conn, t.keycode, 0) {
                tracing::warn!("restoring keycode {}: {e}", t.keycode);
            }
        }
    }

    pub(crate) fn has_temps(&self) -> bool {
        !self.temps.is_empty()
    }
}

/// Start the restorer thread unless one is running already.
pub(crate) fn schedule_restore(conn: &Arc<RustConnection>, keys: &Arc<Mutex<KeyState>>) {
    {
        let mut st = lock(keys);
        if st.restorer_running || !st.has_temps() {
            return;
        }
        st.restorer_running = true;
    }
    let (conn2, keys2) = (Arc::clone(conn), Arc::clone(keys));
    let spawned = thread::Builder::new().name("mcec-keymap-restore".into()).spawn(move || {
        let (conn, keys) = (conn2, keys2);
        loop {
            thread::sleep(RESTORE_AFTER / 2);
            let mut st = lock(&keys);
            let idle =
                st.temps.iter().map(|t| t.last_used.elapsed()).min().is_none_or(|d| d >= RESTORE_AFTER);
            if idle {
                st.restore_all(&conn);
                st.restorer_running = false;
                let _ = conn.flush();
                return;
            }
        }
    });
    if spawned.is_err() {
        // No thread: restore now rather than never.
        restore_now(conn, keys);
    }
}

/// Restore every temporary keycode immediately.
pub(crate) fn restore_now(conn: &RustConnection, keys: &Mutex<KeyState>) {
    let mut st = lock(keys);
    st.restore_all(conn);
    st.restorer_running = false;
}

/// The keysym that stands for a platform-neutral key.
pub(crate) fn keysym_of(key: Key) -> u32 {
    use xkeysym::key as k;
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

/// Second choice for keys some keymaps spell differently.
pub(crate) fn alternative_keysym(keysym: u32) -> Option<u32> {
    use xkeysym::key as k;
    match keysym {
        k::Alt_L => Some(k::Meta_L),
        k::Super_L => Some(k::Hyper_L),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(per: u8, syms: Vec<u32>) -> KeyState {
        KeyState { min_keycode: 8, per, syms, temps: vec![], restorer_running: false, group: 0 }
    }

    #[test]
    fn lookup_prefers_plain_column() {
        // keycode 8: a/A, 9: NoSymbol, 10: 1/exclam, 11: A (plain, odd but possible)
        let st = state(2, vec![0x61, 0x41, 0, 0, 0x31, 0x21, 0x41, 0]);
        assert_eq!(st.lookup(0x61), Some((8, 0)));
        assert_eq!(st.lookup(0x21), Some((10, 1)));
        assert_eq!(st.lookup(0x41), Some((11, 0)));
        assert_eq!(st.lookup(0x7e), None);
        assert!(st.is_spare(9));
        assert!(!st.is_spare(8));
    }

    #[test]
    fn lookup_follows_the_active_group() {
        // us,ru: keycode 8 is h H Cyrillic_er Cyrillic_ER, 9 is 6 asciicircum 6 colon,
        // 10 is Return NoSymbol Return NoSymbol.
        let mut st = state(4, vec![0x68, 0x48, 0x6d2, 0x6f2, 0x36, 0x5e, 0x36, 0x3a, 0xff0d, 0, 0xff0d, 0]);
        assert_eq!(st.lookup(0x68), Some((8, 0)));
        assert_eq!(st.lookup(0x3a), None, "colon is only in the second group");
        st.set_group(1);
        assert_eq!(st.lookup(0x68), None, "h is not in the second group");
        assert_eq!(st.lookup(0x6d2), Some((8, 0)));
        assert_eq!(st.lookup(0x3a), Some((9, 1)));
        assert_eq!(st.lookup(0xff0d), Some((10, 0)));
        assert_eq!(st.lookup_first_group(0x68), Some((8, 0)));
        st.set_group(2);
        assert_eq!(st.lookup(0x68), None);
    }

    #[test]
    fn keysyms_for_keys() {
        assert_eq!(keysym_of(Key::Named(NamedKey::F(5))), xkeysym::key::F5);
        assert_eq!(keysym_of(Key::Char('é')), 0xe9);
        assert_eq!(keysym_of(Key::Char('✓')), 0x0af3);
        assert_eq!(keysym_of(Key::Char('🙂')), 0x0101_f642);
        assert_eq!(keysym_of(Key::Char('\n')), xkeysym::key::Return);
    }
}
