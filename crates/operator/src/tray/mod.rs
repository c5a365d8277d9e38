//! The host's tray icon: where the desktop has a tray, a small icon whose colour says armed,
//! acting or stopped, with a menu of **Stop**, **Open console** and **Re-arm…**.
//!
//! This file is the platform-neutral part: what the icon looks like for a state ([`Look`],
//! [`icon`]), which items the menu offers and when ([`items`]), and what choosing one does
//! ([`choose`]), which is exactly what the host window does: Stop sends the same
//! [`OperatorEvent::StopPressed`] as its Stop button (stopping is always allowed, so nothing
//! about the click is judged), Open console brings the host window up, and Re-arm… opens the
//! attested re-arm prompt as the host menu's item does: a tray's menu, drawn by another
//! program, can never say whose hand chose it, so it never re-arms by itself. The tray is
//! never the only way to see or clear the stop: the banner and the host window show it too.
//!
//! On Unix the icon is a StatusNotifierItem over D-Bus (`sni.rs`, with `ksni`), registered
//! with the desktop's `org.kde.StatusNotifierWatcher`; with no watcher there is no tray and
//! one info line says so. On Windows it is an icon in the notification area
//! (`notify_area.rs`, `Shell_NotifyIconW`, its pixels made by `bits.rs`), added again when
//! Explorer restarts and deleted when the host's windows end; where no taskbar takes it, one
//! info line says so. Both surfaces offer this file's look, items and choices, and nothing
//! else.

#[cfg(any(windows, test))]
mod bits;
#[cfg(windows)]
mod notify_area;
#[cfg(unix)]
mod sni;

use std::sync::mpsc::Sender;

use crate::host::offers_stop;
use crate::state::{Mode, OperatorEvent, OperatorState, Snapshot, send};

/// The tray's menu items, in order.
pub const TRAY_STOP_LABEL: &str = "Stop";
pub const TRAY_OPEN_CONSOLE_LABEL: &str = "Open console";
pub const TRAY_REARM_LABEL: &str = "Re-arm…";

/// What the icon shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Look {
    Armed,
    Acting,
    Stopped,
    /// No armed stop on this display (turned off, nothing served, a Wayland session).
    NotArmed,
}

impl Look {
    pub(crate) fn of(snap: &Snapshot) -> Look {
        match snap.mode {
            Mode::Stopped { .. } => Look::Stopped,
            Mode::Acting => Look::Acting,
            Mode::Idle | Mode::Rearmed { .. } if !snap.stop_armed => Look::NotArmed,
            Mode::Idle | Mode::Rearmed { .. } => Look::Armed,
        }
    }

    /// The icon's colour: the host window's status colours.
    pub(crate) fn rgb(self) -> [u8; 3] {
        match self {
            Look::Armed => [0x43, 0xA0, 0x47],
            Look::Acting => [0x1E, 0x88, 0xE5],
            Look::Stopped => [0xE5, 0x39, 0x35],
            Look::NotArmed => [0xFF, 0xB3, 0x00],
        }
    }

    /// The tooltip's words.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Look::Armed => "armed",
            Look::Acting => "an agent is acting",
            Look::Stopped => "STOPPED",
            Look::NotArmed => "the stop is not armed",
        }
    }
}

/// Side of the square icon, in pixels.
pub(crate) const ICON_SIZE: usize = 32;

/// The icon for `look`: a disc of its colour (with a white bar, like the stop sign, when
/// stopped) on a transparent square, as ARGB32 in network byte order, row by row.
pub(crate) fn icon(look: Look) -> Vec<u8> {
    let [r, g, b] = look.rgb();
    let centre = (ICON_SIZE as f32 - 1.0) / 2.0;
    let radius = ICON_SIZE as f32 / 2.0 - 1.0;
    let mut out = Vec::with_capacity(ICON_SIZE * ICON_SIZE * 4);
    for y in 0..ICON_SIZE {
        for x in 0..ICON_SIZE {
            let (dx, dy) = (x as f32 - centre, y as f32 - centre);
            let inside = dx * dx + dy * dy <= radius * radius;
            let bar = look == Look::Stopped && dy.abs() <= 2.5 && dx.abs() <= radius * 0.6;
            let pixel = match (inside, bar) {
                (false, _) => [0, 0, 0, 0],
                (true, true) => [0xFF, 0xFF, 0xFF, 0xFF],
                (true, false) => [0xFF, r, g, b],
            };
            out.extend_from_slice(&pixel);
        }
    }
    out
}

/// One item of the tray's menu.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    Stop,
    OpenConsole,
    Rearm,
}

impl Item {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Item::Stop => TRAY_STOP_LABEL,
            Item::OpenConsole => TRAY_OPEN_CONSOLE_LABEL,
            Item::Rearm => TRAY_REARM_LABEL,
        }
    }
}

/// The menu's items for `snap`, each with whether it is enabled: Stop while the host window
/// offers it (a stop armed and not latched), Re-arm… while stopped, Open console always.
pub(crate) fn items(snap: &Snapshot) -> [(Item, bool); 3] {
    [(Item::Stop, offers_stop(snap)), (Item::OpenConsole, true), (Item::Rearm, snap.is_stopped())]
}

/// Do what choosing `item` asks.
pub(crate) fn choose(item: Item, state: &OperatorState, events: &Sender<OperatorEvent>) {
    match item {
        Item::Stop => {
            tracing::info!("Stop was chosen in the tray's menu");
            send(events, OperatorEvent::StopPressed);
        }
        Item::OpenConsole => state.raise_console(),
        // Only opens the attested prompt; `open_prompt` does nothing unless stopped.
        Item::Rearm => {
            state.open_prompt();
        }
    }
}

/// The tray icon while the host's windows run: on Windows, dropping it deletes the icon (on
/// Unix the item goes with the process's bus connection).
pub(crate) struct Shown {
    #[cfg(windows)]
    _icon: Option<notify_area::Shown>,
}

/// Show the tray icon for the host, where the desktop has a tray, on a thread of its own.
/// Keep what it returns until the host's windows end.
pub(crate) fn start(state: OperatorState, events: Sender<OperatorEvent>) -> Shown {
    #[cfg(unix)]
    {
        sni::start(state, events);
        Shown {}
    }
    #[cfg(windows)]
    Shown { _icon: notify_area::start(state, events) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_look_follows_the_state_and_the_menu_offers_only_what_applies() {
        let (tx, rx) = std::sync::mpsc::channel();
        let st = OperatorState::new();
        let enabled = |st: &OperatorState| items(&st.snapshot()).map(|(_, on)| on);
        assert_eq!(Look::of(&st.snapshot()), Look::Armed);
        assert_eq!(enabled(&st), [true, true, false], "armed: Stop and Open console");
        st.set_acting(true);
        assert_eq!(Look::of(&st.snapshot()), Look::Acting);

        choose(Item::Rearm, &st, &tx);
        assert!(!st.snapshot().prompt_open, "nothing to re-arm while armed");
        choose(Item::Stop, &st, &tx);
        assert_eq!(rx.try_recv().ok(), Some(OperatorEvent::StopPressed), "the host's Stop event");

        st.set_stopped("the operator pressed Stop");
        st.close_prompt();
        assert_eq!(Look::of(&st.snapshot()), Look::Stopped);
        assert_eq!(enabled(&st), [false, true, true], "stopped: Re-arm… and Open console");
        choose(Item::Rearm, &st, &tx);
        let snap = st.snapshot();
        assert!(snap.prompt_open && snap.is_stopped(), "Re-arm… opens the prompt and re-arms nothing");
        assert!(rx.try_recv().is_err(), "and sends the core nothing");

        let before = st.snapshot().console_raise;
        choose(Item::OpenConsole, &st, &tx);
        assert_eq!(st.snapshot().console_raise, before + 1);

        st.set_rearmed();
        st.set_stop_unarmed();
        assert_eq!(Look::of(&st.snapshot()), Look::NotArmed);
        assert_eq!(enabled(&st), [false, true, false]);
    }

    #[test]
    fn the_icon_is_a_disc_of_the_looks_colour() {
        let px = |icon: &[u8], x: usize, y: usize| {
            let at = (y * ICON_SIZE + x) * 4;
            [icon[at], icon[at + 1], icon[at + 2], icon[at + 3]]
        };
        for look in [Look::Armed, Look::Acting, Look::Stopped, Look::NotArmed] {
            let icon = icon(look);
            assert_eq!(icon.len(), ICON_SIZE * ICON_SIZE * 4);
            assert_eq!(px(&icon, 0, 0), [0, 0, 0, 0], "{look:?}: transparent corner");
            let [r, g, b] = look.rgb();
            assert_eq!(px(&icon, 16, 6), [0xFF, r, g, b], "{look:?}: opaque disc");
        }
        assert_eq!(px(&icon(Look::Stopped), 16, 16), [0xFF; 4], "the stop sign's white bar");
        assert_ne!(px(&icon(Look::Armed), 16, 16), [0xFF; 4]);
    }
}
