//! mcec-desktop's integration tests: the tool layer against a real Xvfb (each test starts
//! its own), and its abort/release rules and the "nothing after the stop" rule for calls
//! queued on the input lock against a scripted backend.

#[path = "../common/mod.rs"]
mod common;
#[path = "../xserver/mod.rs"]
mod xserver;

mod input;
mod keymap_wait;
mod observe;
mod pointer;
mod queued;
mod rules;
mod wm;
