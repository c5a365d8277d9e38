//! mcec's Windows desktop backend, first slice: the emergency stop's provenance monitor.
//!
//! On Windows a low-level keyboard hook (`WH_KEYBOARD_LL`) sees, on every key event, whether
//! software sent it (`LLKHF_INJECTED`, set by `SendInput`) or a keyboard did. That flag is the
//! Windows answer to "who pressed that key", which the X11 backend answers with XInput2 device
//! ids. [`hook`] owns the hooks on a dedicated thread and feeds the platform-neutral chord
//! detector and latch from `mcec-rules`; [`inject`] sends input with `SendInput` and marks
//! mcec's own events in `dwExtraInfo`.
//!
//! [`provenance`] and [`vk`] are pure (flag classification, virtual-key mapping) and build and
//! test on every target; everything that calls Win32 is `cfg(windows)`.

pub mod attest;
pub mod provenance;
pub mod vk;

#[cfg(windows)]
pub mod hook;
#[cfg(windows)]
pub mod inject;
