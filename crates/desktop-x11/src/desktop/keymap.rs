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
//! every column is `NoSymbol`) with `ChangeKeyboardMapping`. Two rules keep applications
//! reading those keycodes right:
//!
//! - **Map before the first key of a call, and never soon after a key.** Xlib loads its XKB
//!   keymap lazily, on the first key event it looks up: it reads the map (`XkbGetMap`) and
//!   only then selects `XkbMapNotify`. The X server tells an XKB-aware client of a keymap
//!   change only if it selected that notify (no core `MappingNotify` either), so a change
//!   landing between those two requests is never seen and the client keeps `NoSymbol` for
//!   that keycode (xev did, about one run in five, when the spare keycode for `é` was mapped
//!   right after the `h` of `hé`). So every character of a text that needs a spare keycode is
//!   mapped before the text's first key event, and no keymap change follows one of mcec's
//!   key events by less than [`QUIET_BEFORE_REMAP`]. The same pause keeps a client from
//!   reading a key press against a newer meaning of its keycode (xdotool's known bug) when
//!   a text needs more spare keycodes than the keymap has.
//! - **Restore late.** A slow client may read its key events well after we sent them, so
//!   spare keycodes go back to `NoSymbol` only once idle for [`RESTORE_AFTER`] (a
//!   short-lived thread), and at once when the backend is dropped.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use mcec_rules::StopFlag;
use x11rb::connection::Connection;
use x11rb::cookie::VoidCookie;
use x11rb::errors::{ConnectionError, ReplyError};
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use super::lock;

/// The least time between one of mcec's key events and a change to the keymap: long enough
/// for a client to look that key up (and, for Xlib, to finish loading its keymap).
pub(crate) const QUIET_BEFORE_REMAP: Duration = Duration::from_millis(100);

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

    /// Whether a spare keycode holds `keysym` now.
    pub(crate) fn is_temporary(&self, keysym: u32) -> bool {
        self.temps.iter().any(|t| t.keysym == keysym)
    }

    /// The spare keycode that holds `keysym` now, if any (marked as just used).
    pub(crate) fn temporary(&mut self, keysym: u32) -> Option<u8> {
        let t = self.temps.iter_mut().find(|t| t.keysym == keysym)?;
        t.last_used = Instant::now();
        Some(t.keycode)
    }

    /// Map the keysyms of `wanted` (in the order they will be typed) onto spare keycodes, as
    /// many as there are spare keycodes, keeping the ones already mapped. `last_key` is when
    /// mcec last sent a key event: the change waits until [`QUIET_BEFORE_REMAP`] has passed,
    /// unless `stop` is set meanwhile; then nothing changes and the answer is false.
    pub(crate) fn map_ahead(
        &mut self,
        conn: &RustConnection,
        wanted: &[u32],
        last_key: Option<Instant>,
        stop: &StopFlag,
    ) -> Result<bool, ReplyError> {
        let free: Vec<u8> = self.keycodes().filter(|kc| *kc > 8 && self.is_spare(*kc)).collect();
        let changes = assign(&self.temps, &free, wanted);
        if changes.is_empty() {
            return Ok(true);
        }
        if !stop.sleep(quiet_wait(last_key, Instant::now())) {
            return Ok(false);
        }
        let mut cookies = Vec::with_capacity(changes.len());
        for &(keycode, keysym) in &changes {
            cookies.push(self.set(conn, keycode, keysym)?);
        }
        for cookie in cookies {
            cookie.check()?;
        }
        let now = Instant::now();
        self.temps.retain(|t| changes.iter().all(|(kc, _)| *kc != t.keycode));
        self.temps.extend(changes.iter().map(|&(keycode, keysym)| Temp { keycode, keysym, last_used: now }));
        Ok(true)
    }

    /// Send the change of `keycode` to `keysym` (every column) and note it in the cache.
    fn set<'c>(
        &mut self,
        conn: &'c RustConnection,
        keycode: u8,
        keysym: u32,
    ) -> Result<VoidCookie<'c, RustConnection>, ConnectionError> {
        let row = vec![keysym; usize::from(self.per)];
        let cookie = conn.change_keyboard_mapping(1, keycode, self.per, &row)?;
        let start = usize::from(keycode - self.min_keycode) * usize::from(self.per);
        if let Some(slot) = self.syms.get_mut(start..start + usize::from(self.per)) {
            slot.copy_from_slice(&row);
        }
        Ok(cookie)
    }

    /// Put every temporary keycode back to `NoSymbol`.
    fn restore_all(&mut self, conn: &RustConnection) {
        for t in std::mem::take(&mut self.temps) {
            let restored = self.set(conn, t.keycode, 0).map_err(ReplyError::from).and_then(|c| c.check());
            if let Err(e) = restored {
                tracing::warn!("restoring keycode {}: {e}", t.keycode);
            }
        }
    }

    pub(crate) fn has_temps(&self) -> bool {
        !self.temps.is_empty()
    }
}

/// Ask the server to tell this connection when the keymap changes (XKB map and new-keyboard
/// notifies). An XKB-aware client gets no core `MappingNotify` for changes it did not
/// select, so without this an operator's layout switch (`setxkbmap de`) went unnoticed and
/// mcec typed `y` for `z`.
pub(crate) fn watch_changes(conn: &RustConnection) {
    use x11rb::protocol::xkb::{self, ConnectionExt as _, EventType, MapPart, SelectEventsAux};
    let events = EventType::NEW_KEYBOARD_NOTIFY | EventType::MAP_NOTIFY;
    let parts = MapPart::KEY_TYPES | MapPart::KEY_SYMS | MapPart::MODIFIER_MAP;
    let selected = conn
        .xkb_select_events(
            xkb::ID::USE_CORE_KBD.into(),
            EventType::from(0u16),
            events,
            parts,
            parts,
            &SelectEventsAux::new(),
        )
        .map_err(ReplyError::from)
        .and_then(|c| c.check());
    if let Err(e) = selected {
        tracing::warn!("watching the keymap for changes: {e}");
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

/// The keymap changes that put `wanted` (keysyms in the order they will be typed) onto spare
/// keycodes: the first as many distinct keysyms as there are spare keycodes (`free` ones
/// plus those holding `temps`) are the target; a target keysym already mapped stays where it
/// is, the others go onto free keycodes first, then onto temporaries holding no target
/// keysym, least recently used first.
fn assign(temps: &[Temp], free: &[u8], wanted: &[u32]) -> Vec<(u8, u32)> {
    let capacity = free.len() + temps.len();
    let mut target: Vec<u32> = Vec::new();
    for &k in wanted {
        if target.len() == capacity {
            break;
        }
        if !target.contains(&k) {
            target.push(k);
        }
    }
    let mut evictable: Vec<&Temp> = temps.iter().filter(|t| !target.contains(&t.keysym)).collect();
    evictable.sort_by_key(|t| t.last_used);
    let mut slots = free.iter().copied().chain(evictable.iter().map(|t| t.keycode));
    target
        .into_iter()
        .filter(|k| temps.iter().all(|t| t.keysym != *k))
        .map_while(|k| slots.next().map(|kc| (kc, k)))
        .collect()
}

/// How long to wait before changing the keymap when mcec sent a key event at `last_key`.
fn quiet_wait(last_key: Option<Instant>, now: Instant) -> Duration {
    last_key.map_or(Duration::ZERO, |t| QUIET_BEFORE_REMAP.saturating_sub(now.saturating_duration_since(t)))
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

    fn temp(keycode: u8, keysym: u32, age_ms: u64, now: Instant) -> Temp {
        Temp { keycode, keysym, last_used: now - Duration::from_millis(age_ms) }
    }

    #[test]
    fn assign_maps_every_wanted_keysym_up_front_and_keeps_what_is_mapped() {
        let now = Instant::now();
        let (e_acute, euro) = (0xe9, 0x20ac);
        // Nothing mapped yet: each wanted keysym once, on free keycodes in order.
        assert_eq!(assign(&[], &[93, 97, 103], &[e_acute, euro, e_acute]), vec![(93, e_acute), (97, euro)]);
        // Already on a spare keycode: no change for it.
        let temps = [temp(93, e_acute, 5, now)];
        assert_eq!(assign(&temps, &[97], &[e_acute, euro]), vec![(97, euro)]);
        assert_eq!(assign(&temps, &[97], &[e_acute]), vec![]);
        assert_eq!(assign(&temps, &[97], &[]), vec![]);
    }

    #[test]
    fn assign_reuses_the_least_recently_used_keycode_not_wanted_soon() {
        let now = Instant::now();
        let temps = [temp(93, 0x100, 50, now), temp(97, 0x101, 500, now), temp(103, 0x102, 5, now)];
        // No free keycode: 0x200 takes the oldest keycode whose keysym is not wanted (97),
        // 0x201 the next oldest (93); 0x102 is wanted and stays.
        assert_eq!(assign(&temps, &[], &[0x102, 0x200, 0x201]), vec![(97, 0x200), (93, 0x201)]);
        // A free keycode goes first.
        assert_eq!(assign(&temps, &[120], &[0x200]), vec![(120, 0x200)]);
    }

    #[test]
    fn assign_maps_the_characters_typed_first_when_keycodes_run_out() {
        let now = Instant::now();
        // Two keycodes, four wanted keysyms: the first two now, the rest later.
        assert_eq!(assign(&[], &[93, 97], &[1, 2, 3, 4]), vec![(93, 1), (97, 2)]);
        // Later (typing reached keysym 3): 1 and 2 are done, 3 and 4 take their keycodes; a
        // keysym typed first is never left out for one typed later.
        let temps = [temp(93, 1, 10, now), temp(97, 2, 5, now)];
        assert_eq!(assign(&temps, &[], &[3, 4, 2]), vec![(93, 3), (97, 4)]);
        assert_eq!(assign(&temps, &[], &[3, 2, 4]), vec![(93, 3)]);
    }

    #[test]
    fn the_keymap_changes_only_after_a_quiet_time_since_the_last_key() {
        let now = Instant::now();
        assert_eq!(quiet_wait(None, now), Duration::ZERO);
        assert_eq!(quiet_wait(Some(now), now), QUIET_BEFORE_REMAP);
        assert_eq!(
            quiet_wait(Some(now - Duration::from_millis(30)), now),
            QUIET_BEFORE_REMAP - Duration::from_millis(30)
        );
        assert_eq!(quiet_wait(Some(now - QUIET_BEFORE_REMAP * 3), now), Duration::ZERO);
    }
}
