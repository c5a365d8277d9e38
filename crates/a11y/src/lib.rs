//! The accessibility tools: an agent finds things by name, role and state instead of by
//! pixels, and acts on them without the mouse.
//!
//! Every toolkit that matters on the Linux desktop (GTK, Qt, Firefox, Chromium, LibreOffice,
//! Electron) publishes a tree of its widgets over AT-SPI2, on the accessibility D-Bus bus.
//! This crate reads that tree and offers `query`, `find`, `invoke` and `wait-for` on it.
//!
//! - [`seam`]: the one trait a platform implements ([`seam::AccessibilityBackend`]): the root
//!   of a top-level window, children, one element's description, one operation. The AT-SPI2
//!   backend is `atspi` (Unix); [`msaa`] is Windows' (MSAA's `IAccessible`, what Wine serves
//!   too); [`unavailable`] answers `unavailable` to everything; a UI Automation backend would
//!   be one more implementation and nothing above it changes.
//! - `x11_clipboard` (Unix): the X11 selections, the X11 implementation of `mcec-desktop`'s
//!   clipboard seam ([`mcec_desktop::clipboard::Clipboard`]).
//! - [`model`]: the platform-neutral element, roles and states the agent sees.
//! - [`walk`]: the one bounded tree walk (nodes, depth, time, stop flag, cycles).
//! - [`selector`]: the `{by, value}` selector and its filters, pure.
//! - [`ids`]: element ids, stable for an element's life.
//! - [`tools`]: the policy: windows are resolved through `mcec-desktop` (so mcec's own windows,
//!   which `windows` never lists, cannot be targeted), matches are never "the first",
//!   `invoke` is actuation under the desktop's input lock and stop gate. [`A11yTools`] is
//!   built by the binary over the backend and the clipboard it chose for the platform.
//!
//! What it does not do: choose its platform (the binary does), or turn accessibility on in an
//! application: the errors say how the operator does that.

// The platform halves: AT-SPI2 and the X11 selections, built where their D-Bus and X11
// libraries are. Which backend and clipboard a process uses is the binary's choice.
#[cfg(unix)]
pub mod atspi;
pub mod ids;
pub mod model;
pub mod msaa;
pub mod ocr;
pub mod requests;
pub mod seam;
pub mod selector;
pub mod tools;
pub mod unavailable;
pub mod walk;
#[cfg(unix)]
pub mod x11_clipboard;

pub use tools::A11yTools;

/// `emergency-stopped` for a wait the stop (or the client's cancel) ended, saying how long it had waited.
pub(crate) fn stopped_waiting(started: std::time::Instant) -> mcec_rules::ToolError {
    let base = mcec_rules::ToolError::emergency_stopped();
    mcec_rules::ToolError::new(
        base.code,
        format!("{} The wait ended after {} ms.", base.detail, started.elapsed().as_millis()),
    )
}
