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
//! On a wlroots compositor without sway's IPC (labwc, river, Hyprland, wayfire, or sway with
//! `SWAYSOCK` unset) the same backend reads the layout from `wl_output` and the windows from
//! `wlr-foreign-toplevel-management` (`toplevel.rs`; no window positions or sizes there), and
//! there is no stop: the binary refuses actuation there (`emergency-stop-unavailable` naming
//! the compositor) unless the operator's unsafe key allows it. `choice.rs` decides, once,
//! which of these a process runs. Compositors offering neither protocol (GNOME, KDE) are not
//! served by this crate. Unix only; the binary names it in `platform.rs` alone.

pub mod choice;
pub mod chord;
mod desktop;
pub mod ipc;
mod keysyms;
pub mod monitor;
pub mod toplevel;
pub mod wl;

pub use desktop::WlrDesktop;
pub use monitor::SwayMonitor;
pub use toplevel::ForeignToplevels;

/// True when this process runs inside a sway session: a Wayland display and sway's IPC socket
/// are both named in the environment.
pub fn in_sway_session() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    set("WAYLAND_DISPLAY") && set("SWAYSOCK")
}
