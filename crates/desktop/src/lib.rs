//! # mcec-desktop: the agent's eyes and hands on a desktop
//!
//! Three small seams ([`seams::Screens`], [`seams::WindowManager`], [`seams::Injector`])
//! describe what a desktop backend must do, with no platform type in any signature; the
//! backends live in crates of their own (`mcec-desktop-x11`, `mcec-desktop-windows`). On top of them the tool
//! layer ([`api::DesktopTools`]) turns typed requests ([`requests`]) into JSON-able results
//! and [`mcec_rules::ToolError`]s, and owns the policy: window selectors, capture caps,
//! drag densification, the one input lock, stop-flag checks between steps, artefact paths.
//!
//! [`clipboard::Clipboard`] is the seam of a platform's clipboard (for the `clipboard` tool and
//! the Agent tab's Copy); the binary hands an implementation to the tools that use it.
//!
//! It also holds the provenance monitor ([`monitor`]), which tells a physical key press from an
//! injected one for the emergency stop and feeds the pure chord detector.
//!
//! What this crate does not do: speak MCP or JSON-RPC, decide gates or read settings (the
//! caller does), or talk to any display server: it has no platform code, and the binary
//! picks the backend that implements its seams.

pub mod api;
pub mod clipboard;
pub mod geometry;
pub mod image;
pub mod keys;
pub mod keysyms;
pub mod monitor;
pub mod proc_stat;
pub mod requests;
mod scale;
pub mod seams;
pub mod select;
pub mod types;

pub use api::{CaptureDefaults, DesktopConfig, DesktopTools};
pub use types::{
    CaptureVia, Captured, DisplayInfo, DisplaysResult, Dpi, DpiSource, LeftOut, LeftOutHow, MouseButton,
    Point, Rect, RgbImage, ScrollDirection, WindowInfo,
};
