//! The accessibility tools: an agent finds things by name, role and state instead of by
//! pixels, and acts on them without the mouse.
//!
//! Every toolkit that matters on the Linux desktop (GTK, Qt, Firefox, Chromium, LibreOffice,
//! Electron) publishes a tree of its widgets over AT-SPI2, on the accessibility D-Bus bus.
//! This crate reads that tree and offers `query`, `find`, `invoke` and `wait-for` on it.
//!
//! - [`seam`]: the one trait a platform implements ([`seam::AccessibilityBackend`]): the root
//!   of a top-level window, children, one element's description, one operation. The AT-SPI2
//!   backend is [`atspi`]; a Windows UI Automation backend would be a second implementation and
//!   nothing above it changes.
//! - [`model`]: the platform-neutral element, roles and states the agent sees.
//! - [`walk`]: the one bounded tree walk (nodes, depth, time, stop flag, cycles).
//! - [`selector`]: the `{by, value}` selector and its filters, pure.
//! - [`ids`]: element ids, stable for an element's life.
//! - [`tools`]: the policy: windows are resolved through `mcec-desktop` (so mcec's own windows,
//!   which `windows` never lists, cannot be targeted), matches are never "the first",
//!   `invoke` is actuation under the desktop's input lock and stop gate.
//!
//! What it does not do: read text by OCR or touch the clipboard (those are separate tools), or
//! turn accessibility on in an application: the errors say how the operator does that.

// AT-SPI2 is Unix only (on Windows it answers `unavailable`); the clipboard is the X11
// selections on Unix and the Win32 clipboard on Windows.
#[cfg_attr(windows, path = "unavailable/atspi.rs")]
pub mod atspi;
#[cfg_attr(windows, path = "clipboard_win32.rs")]
pub mod clipboard;
pub mod ids;
pub mod model;
pub mod ocr;
pub mod requests;
pub mod seam;
pub mod selector;
pub mod tools;
pub mod walk;

pub use tools::A11yTools;

/// `emergency-stopped` for a wait the stop (or the client's cancel) ended, saying how long it had waited.
pub(crate) fn stopped_waiting(started: std::time::Instant) -> mcec_rules::ToolError {
    let base = mcec_rules::ToolError::emergency_stopped();
    mcec_rules::ToolError::new(
        base.code,
        format!("{} The wait ended after {} ms.", base.detail, started.elapsed().as_millis()),
    )
}
