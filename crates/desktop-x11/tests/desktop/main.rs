//! mcec-desktop-x11's integration tests: the tool layer over the X11 backend against a real
//! Xvfb (each test starts its own), with and without a window manager, and a stop that lands
//! while the backend waits to change the keymap.

#[path = "../common/mod.rs"]
mod common;
#[path = "../xserver/mod.rs"]
mod xserver;

mod input;
mod keymap_wait;
mod observe;
mod wallpaper;
mod wm;
