//! The Wayland backend for sway: the desktop seams and the emergency stop where the
//! compositor, not an X server, owns the keyboard.
//!
//! sway is reached two ways. Its IPC (`ipc.rs`, the i3 protocol over `$SWAYSOCK`) lists
//! outputs and windows, focuses and moves windows, and carries the stop: `monitor.rs` binds
//! the stop chord on every physical keyboard (`chord.rs`) and learns of a press from sway's
//! `binding` event, never from the keys themselves; the operator's prompts are answered the
//! same way, by a chord bound only while the prompt is shown (`monitor/prompts.rs`). The
//! Wayland connection (`wl/`) holds one
//! long-lived virtual keyboard (with a keymap of its own, so any character can be typed) and
//! one virtual pointer, the only way a client can inject, and reads pixels with
//! `wlr-screencopy`. sway tells those devices apart from the operator's, which is what makes
//! the stop physical-only here.
//!
//! `toplevel.rs` lists and activates windows through `wlr-foreign-toplevel-management`, the
//! window list of wlroots compositors without sway's IPC; it is tested on sway, which offers
//! it too, and not chosen by the binary yet (its windows have no position or size).
//!
//! Other Wayland compositors are not served by this crate: the binary refuses actuation there
//! (`emergency-stop-unavailable`). Unix only; the binary names it in `platform.rs` alone.

pub mod chord;
mod desktop;
pub mod ipc;
mod keysyms;
pub mod monitor;
pub mod toplevel;
pub mod wl;

pub use desktop::SwayDesktop;
pub use monitor::SwayMonitor;
pub use toplevel::ForeignToplevels;

/// True when this process runs inside a sway session: a Wayland display and sway's IPC socket
/// are both named in the environment.
pub fn in_sway_session() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    set("WAYLAND_DISPLAY") && set("SWAYSOCK")
}
