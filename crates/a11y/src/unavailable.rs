//! The accessibility backend for a platform without one (Linux and Windows have theirs:
//! AT-SPI2 and MSAA). Every call answers `unavailable`, so `query`, `find`, `invoke`, `wait-for` and
//! `get-text`'s element reads refuse honestly instead of pretending an empty tree. It is pure
//! and builds everywhere; the binary chooses it where the platform has no other.

use mcec_desktop::WindowInfo;
use mcec_rules::{ErrorCode, ToolError};

use crate::model::{Operation, RawElement};
use crate::seam::{AccessibilityBackend, NodeRef, Want};

fn unavailable() -> ToolError {
    ToolError::new(
        ErrorCode::Unavailable,
        "This build reads no accessibility tree on this platform. Use capture and the window tools \
         instead.",
    )
}

/// A backend that reads no tree.
#[derive(Debug, Default)]
pub struct Unavailable;

impl AccessibilityBackend for Unavailable {
    fn window_root(&self, _window: &WindowInfo) -> Result<NodeRef, ToolError> {
        Err(unavailable())
    }

    fn children(&self, _node: &NodeRef) -> Result<Vec<NodeRef>, ToolError> {
        Err(unavailable())
    }

    fn describe(&self, _node: &NodeRef, _want: Want) -> Result<RawElement, ToolError> {
        Err(unavailable())
    }

    fn text(&self, _node: &NodeRef, _max_chars: usize) -> Result<Option<String>, ToolError> {
        Err(unavailable())
    }

    fn attached(&self, _node: &NodeRef) -> Result<bool, ToolError> {
        Err(unavailable())
    }

    fn perform(&self, _node: &NodeRef, _op: &Operation) -> Result<(), ToolError> {
        Err(unavailable())
    }
}
