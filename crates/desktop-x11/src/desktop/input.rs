//! Synthetic input on X11 through XTEST `FakeInput`, core event types only.
//!
//! Core types (KeyPress, KeyRelease, ButtonPress, ButtonRelease, MotionNotify) make the
//! server route our events through its XTEST slave devices, so the provenance monitor can
//! always attribute them. The backend remembers what it pressed so [`Injector::release_all`]
//! can undo it, and also releases buttons 1-3 and modifiers the server still reports down.

use std::sync::atomic::Ordering;
use std::time::Instant;

use mcec_rules::{ErrorCode, StopFlag, ToolError, progress};
use x11rb::protocol::xkb::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    BUTTON_PRESS_EVENT, BUTTON_RELEASE_EVENT, ConnectionExt as _, KEY_PRESS_EVENT, KEY_RELEASE_EVENT,
    KeyButMask, MOTION_NOTIFY_EVENT,
};
use x11rb::protocol::xtest::ConnectionExt as _;

use mcec_desktop::keysyms::keysym_of;

use super::keymap::{self, KeyState, alternative_keysym};
use super::{X11Desktop, conn_err, lock, reply_err, round_trip};
use mcec_desktop::keys::Key;
use mcec_desktop::seams::Injector;
use mcec_desktop::types::{MouseButton, Point, ScrollDirection};

/// What the backend holds down right now (keycodes and button numbers, in press order).
#[derive(Debug, Default)]
pub(crate) struct InputState {
    keys: Vec<u8>,
    buttons: Vec<u8>,
    /// For a key pressed with an added Shift: the key and the Shift keycode.
    shifted: Vec<(u8, u8)>,
    /// When mcec last sent a key event (the keymap stays unchanged for a while after it).
    last_key_event: Option<Instant>,
}

/// Where a key's keysym is on the keyboard right now.
enum Place {
    /// On a keycode, at level 0 (plain) or 1 (shifted).
    Key(u8, u8),
    /// Nowhere in the active group: it needs a spare keycode.
    Spare(u32),
}

fn button_number(b: MouseButton) -> u8 {
    match b {
        MouseButton::Left => 1,
        MouseButton::Middle => 2,
        MouseButton::Right => 3,
    }
}

impl X11Desktop {
    fn require_xtest(&self) -> Result<(), ToolError> {
        if self.has_xtest {
            Ok(())
        } else {
            Err(ToolError::new(
                ErrorCode::Unavailable,
                format!(
                    "The X display `{}` has no XTEST extension, so mcec cannot send input there.",
                    self.display
                ),
            ))
        }
    }

    fn fake(&self, ty: u8, detail: u8, x: i16, y: i16) -> Result<(), ToolError> {
        self.conn.xtest_fake_input(ty, detail, x11rb::CURRENT_TIME, self.root, x, y, 0).map_err(conn_err)?;
        Ok(())
    }

    fn key_event(&self, keycode: u8, down: bool) -> Result<(), ToolError> {
        let ty = if down { KEY_PRESS_EVENT } else { KEY_RELEASE_EVENT };
        self.fake(ty, keycode, 0, 0)?;
        let mut st = lock(&self.input);
        st.last_key_event = Some(Instant::now());
        if down {
            st.keys.push(keycode);
        } else {
            st.keys.retain(|k| *k != keycode);
        }
        Ok(())
    }

    fn last_key_event(&self) -> Option<Instant> {
        lock(&self.input).last_key_event
    }

    /// Handle queued events; a keymap change by anyone (mcec's own spare keycodes, or the
    /// operator switching layouts) means re-reading the keymap.
    fn drain_events(&self, keys: &mut KeyState) -> Result<(), ToolError> {
        self.pump_events()?;
        if self.keymap_stale.swap(false, Ordering::SeqCst) {
            keys.reload(&self.conn).map_err(reply_err)?;
        }
        keys.set_group(self.active_group()?);
        Ok(())
    }

    /// The keyboard's effective XKB group (which layout is active), 0 without XKB.
    fn active_group(&self) -> Result<u8, ToolError> {
        if !self.has_xkb {
            return Ok(0);
        }
        let state = self
            .conn
            .xkb_get_state(xkb::ID::USE_CORE_KBD.into())
            .map_err(conn_err)?
            .reply()
            .map_err(reply_err)?;
        Ok(u8::from(state.group))
    }

    /// Where `key`'s keysym is in the active group.
    fn place(&self, keys: &KeyState, key: Key, field: &str) -> Result<Place, ToolError> {
        let keysym = keysym_of(key);
        if keysym == 0 {
            return Err(ToolError::bad_argument(field, "holds a character no keyboard can type"));
        }
        if keys.is_temporary(keysym) {
            // Also once the keymap was re-read and shows it like any key: it stays ours.
            return Ok(Place::Spare(keysym));
        }
        if let Some((kc, level)) = keys.lookup(keysym) {
            return Ok(Place::Key(kc, level));
        }
        if let Some((kc, level)) = alternative_keysym(keysym).and_then(|alt| keys.lookup(alt)) {
            return Ok(Place::Key(kc, level));
        }
        // Keys that are not characters are the same in every group.
        let character = matches!(key, Key::Char(c) if !matches!(c, '\n' | '\t'));
        if !character
            && let Some((kc, level)) = keys
                .lookup_first_group(keysym)
                .or_else(|| alternative_keysym(keysym).and_then(|alt| keys.lookup_first_group(alt)))
        {
            return Ok(Place::Key(kc, level));
        }
        if xkeysym::Keysym::new(keysym).is_modifier_key() {
            // A modifier keysym on a spare keycode would not act as a modifier.
            return Err(ToolError::new(
                ErrorCode::Unavailable,
                format!("`{field}`: the keyboard of this display has no such modifier key."),
            ));
        }
        Ok(Place::Spare(keysym))
    }

    /// The keysyms of `text` that need spare keycodes, each once, in the order typed.
    fn spare_keysyms(&self, keys: &KeyState, text: &str) -> Result<Vec<u32>, ToolError> {
        let mut out = Vec::new();
        for c in text.chars() {
            if let Place::Spare(keysym) = self.place(keys, Key::Char(c), "text")?
                && !out.contains(&keysym)
            {
                out.push(keysym);
            }
        }
        Ok(out)
    }

    /// Map `wanted` onto spare keycodes (see [`KeyState::map_ahead`]); `emergency-stopped`
    /// when `stop` was set while it waited for the keymap to be quiet.
    fn map_ahead(&self, keys: &mut KeyState, wanted: &[u32], stop: &StopFlag) -> Result<(), ToolError> {
        match keys.map_ahead(&self.conn, wanted, self.last_key_event(), stop) {
            Ok(true) => Ok(()),
            Ok(false) => Err(ToolError::emergency_stopped()),
            Err(e) => Err(reply_err(e)),
        }
    }

    /// Keycode and level (0 plain, 1 shifted) for `key`'s keysym in the active group, or the
    /// spare keycode that holds it (mapped here when no earlier step did, unless `stop` is set
    /// during the wait that mapping needs).
    fn resolve(
        &self,
        keys: &mut KeyState,
        key: Key,
        field: &str,
        stop: &StopFlag,
    ) -> Result<(u8, u8), ToolError> {
        let keysym = match self.place(keys, key, field)? {
            Place::Key(kc, level) => return Ok((kc, level)),
            Place::Spare(keysym) => keysym,
        };
        if keys.temporary(keysym).is_none() {
            self.map_ahead(keys, &[keysym], stop)?;
        }
        match keys.temporary(keysym) {
            Some(kc) => Ok((kc, 0)),
            None => Err(ToolError::new(
                ErrorCode::Unavailable,
                "No spare keycode is left to map this character onto.",
            )),
        }
    }

    fn shift_keycode(&self, keys: &KeyState) -> Result<u8, ToolError> {
        keys.lookup(xkeysym::key::Shift_L)
            .or_else(|| keys.lookup(xkeysym::key::Shift_R))
            .or_else(|| keys.lookup_first_group(xkeysym::key::Shift_L))
            .map(|(kc, _)| kc)
            .ok_or_else(|| ToolError::new(ErrorCode::Unavailable, "The keyboard has no Shift key."))
    }

    /// Press and release one character's key (with Shift when it is in the shifted column),
    /// unless `stop` is set before the press.
    fn tap_char(&self, keys: &mut KeyState, c: char, stop: &StopFlag) -> Result<(), ToolError> {
        let (kc, col) = self.resolve(keys, Key::Char(c), "text", stop)?;
        if stop.is_set() {
            return Err(ToolError::emergency_stopped());
        }
        let shift = if col == 1 { Some(self.shift_keycode(keys)?) } else { None };
        if let Some(s) = shift {
            self.key_event(s, true)?;
        }
        let result = self.key_event(kc, true).and_then(|_| self.key_event(kc, false));
        if let Some(s) = shift {
            self.key_event(s, false)?;
        }
        result
    }

    fn type_inner(&self, text: &str, stop: &StopFlag) -> Result<(), ToolError> {
        let mut keys = lock(&self.keys);
        self.drain_events(&mut keys)?;
        // Every character that needs a spare keycode is mapped before the first key event.
        let wanted = self.spare_keysyms(&keys, text)?;
        self.map_ahead(&mut keys, &wanted, stop)?;
        let total = text.chars().count();
        let stopped_at = |done: usize| {
            let base = ToolError::emergency_stopped();
            ToolError::new(
                base.code,
                format!("{} Typed {done} of {total} characters before the stop.", base.detail),
            )
        };
        for (done, (at, c)) in text.char_indices().enumerate() {
            if stop.is_set() {
                return Err(stopped_at(done));
            }
            let typed = self.type_char(&mut keys, text, at, c, stop);
            if typed.is_err() && stop.is_set() {
                return Err(stopped_at(done));
            }
            typed?;
            progress::report(done as u64 + 1, total as u64, "characters");
        }
        Ok(())
    }

    /// Type the character `c` at byte `at` of `text`, first mapping the next spare keycodes
    /// when `c` has none (a wait that `stop` cuts short: then nothing is typed).
    fn type_char(
        &self,
        keys: &mut KeyState,
        text: &str,
        at: usize,
        c: char,
        stop: &StopFlag,
    ) -> Result<(), ToolError> {
        if let Place::Spare(keysym) = self.place(keys, Key::Char(c), "text")?
            && keys.temporary(keysym).is_none()
        {
            // More characters than spare keycodes: map the next ones, reusing keycodes
            // whose characters are done.
            let wanted = self.spare_keysyms(keys, &text[at..])?;
            self.map_ahead(keys, &wanted, stop)?;
        }
        self.tap_char(keys, c, stop)?;
        // Wait for the server to take this character before asking the flag again, so a
        // stop leaves no typed backlog in flight (without it, thousands of characters
        // queued ahead of the server went on arriving after a cancel).
        round_trip(&self.conn)
    }
}

impl Injector for X11Desktop {
    fn pointer_move(&self, to: Point) -> Result<(), ToolError> {
        self.require_xtest()?;
        let (x, y) = (
            i16::try_from(to.x).map_err(|_| ToolError::bad_argument("x", "is out of range"))?,
            i16::try_from(to.y).map_err(|_| ToolError::bad_argument("y", "is out of range"))?,
        );
        self.fake(MOTION_NOTIFY_EVENT, 0, x, y)
    }

    fn pointer_position(&self) -> Result<Point, ToolError> {
        let p = self.conn.query_pointer(self.root).map_err(conn_err)?.reply().map_err(reply_err)?;
        Ok(Point::new(i32::from(p.root_x), i32::from(p.root_y)))
    }

    fn button(&self, button: MouseButton, down: bool) -> Result<(), ToolError> {
        self.require_xtest()?;
        let n = button_number(button);
        let ty = if down { BUTTON_PRESS_EVENT } else { BUTTON_RELEASE_EVENT };
        self.fake(ty, n, 0, 0)?;
        let mut st = lock(&self.input);
        if down {
            st.buttons.push(n);
        } else {
            st.buttons.retain(|b| *b != n);
        }
        Ok(())
    }

    fn scroll(&self, direction: ScrollDirection) -> Result<(), ToolError> {
        self.require_xtest()?;
        let n = match direction {
            ScrollDirection::Up => 4,
            ScrollDirection::Down => 5,
            ScrollDirection::Left => 6,
            ScrollDirection::Right => 7,
        };
        self.fake(BUTTON_PRESS_EVENT, n, 0, 0)?;
        self.fake(BUTTON_RELEASE_EVENT, n, 0, 0)
    }

    fn key(&self, key: Key, down: bool, stop: &StopFlag) -> Result<(), ToolError> {
        self.require_xtest()?;
        let mut keys = lock(&self.keys);
        self.drain_events(&mut keys)?;
        // A release is never held back: letting go is what a stop wants.
        let never = StopFlag::new();
        let (kc, col) = self.resolve(&mut keys, key, "keys", if down { stop } else { &never })?;
        let add_shift = col == 1 && matches!(key, Key::Char(_));
        if down {
            if stop.is_set() {
                return Err(ToolError::emergency_stopped());
            }
            if add_shift {
                let s = self.shift_keycode(&keys)?;
                self.key_event(s, true)?;
                lock(&self.input).shifted.push((kc, s));
            }
            self.key_event(kc, true)?;
        } else {
            self.key_event(kc, false)?;
            let shifted = {
                let mut st = lock(&self.input);
                let pos = st.shifted.iter().position(|(k, _)| *k == kc);
                pos.map(|i| st.shifted.remove(i).1)
            };
            if let Some(s) = shifted {
                self.key_event(s, false)?;
            }
        }
        drop(keys);
        keymap::schedule_restore(&self.conn, &self.keys);
        Ok(())
    }

    fn type_text(&self, text: &str, stop: &StopFlag) -> Result<(), ToolError> {
        self.require_xtest()?;
        let result = self.type_inner(text, stop);
        let released = if result.is_err() { self.release_all() } else { self.settle() };
        keymap::schedule_restore(&self.conn, &self.keys);
        result.and(released)
    }

    fn settle(&self) -> Result<(), ToolError> {
        round_trip(&self.conn)
    }

    fn release_all(&self) -> Result<(), ToolError> {
        if !self.has_xtest {
            return Ok(());
        }
        let (keys, buttons) = {
            let mut st = lock(&self.input);
            st.shifted.clear();
            (std::mem::take(&mut st.keys), std::mem::take(&mut st.buttons))
        };
        for kc in keys.iter().rev() {
            self.fake(KEY_RELEASE_EVENT, *kc, 0, 0)?;
        }
        for b in buttons {
            self.fake(BUTTON_RELEASE_EVENT, b, 0, 0)?;
        }
        let pointer = self.conn.query_pointer(self.root).map_err(conn_err)?;
        let keymap = self.conn.query_keymap().map_err(conn_err)?;
        let mods = self.conn.get_modifier_mapping().map_err(conn_err)?;
        let mask = pointer.reply().map_err(reply_err)?.mask;
        for (n, bit) in [(1, KeyButMask::BUTTON1), (2, KeyButMask::BUTTON2), (3, KeyButMask::BUTTON3)] {
            if mask.contains(bit) {
                self.fake(BUTTON_RELEASE_EVENT, n, 0, 0)?;
            }
        }
        let down = keymap.reply().map_err(reply_err)?.keys;
        for kc in mods.reply().map_err(reply_err)?.keycodes {
            if kc != 0 && down[usize::from(kc / 8)] & (1 << (kc % 8)) != 0 {
                self.fake(KEY_RELEASE_EVENT, kc, 0, 0)?;
            }
        }
        round_trip(&self.conn)
    }
}
