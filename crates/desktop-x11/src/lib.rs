//! # mcec-desktop-x11: mcec's X11 backend
//!
//! [`X11Desktop`] implements mcec-desktop's `Backend` over one pure-Rust x11rb connection
//! (RandR monitors, EWMH windows, MIT-SHM or `GetImage` capture, XTEST input with core event
//! types only), so `DesktopTools::new(Arc::new(X11Desktop::connect(display)?), config)` serves
//! the tools on an X display. [`X11Monitor`] implements `ProvenanceMonitor`: XInput 2.2 raw
//! events classified by source device, plus a RECORD watch on XTEST for forged device events,
//! feeding mcec-desktop's platform-neutral `Dispatcher` (ledger, chord detector, latch), and it
//! refuses to arm on a Wayland session's X server. [`probe`] asks whether an X server lets
//! this user in, for the binary's display search; [`own_server`] lets this user into a
//! session's own X server.
//!
//! This crate and `mcec-desktop-windows` are twins: everything above them (the tool layer,
//! the gates, the stop worker) sees only the seams. It is built for unix targets only (the
//! binary depends on it there), so nothing in it is gated by `cfg`.

mod desktop;
pub mod monitor;
pub mod own_server;
pub mod probe;
pub mod session_window;

pub use desktop::{ProgramSetup, X11Desktop, own_window_rects, release_everything_down};
pub use monitor::X11Monitor;
pub use session_window::X11SessionWindow;
