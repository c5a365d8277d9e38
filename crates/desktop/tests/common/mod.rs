//! Test fixtures for the tool layer without a display: the scripted backend of `mock`.
//! (The X11 fixtures, a private Xvfb and the `mcec-testwin` window, are `mcec-desktop-x11`'s.)

pub mod mock;
