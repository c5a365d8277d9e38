//! mcec-desktop's integration tests: the tool layer's abort and release rules, its pointer
//! tools, and the "nothing after the stop" rule for calls queued on the input lock, all
//! against a scripted backend (no display). The same tools against a real Xvfb are
//! `mcec-desktop-x11`'s tests.

#[path = "../common/mod.rs"]
mod common;

mod pointer;
mod queued;
mod rules;
