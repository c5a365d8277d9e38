//! The clipboard seam: what a platform's clipboard must do for the `clipboard` tool and the
//! Agent tab's Copy, with no platform type in it.
//!
//! The policy (which text may be set, who may read, what the audit line says) lives above it,
//! in `mcec-a11y`'s tool and in the MCP layer; an implementation only moves text. X11 has two
//! selections an agent may name (CLIPBOARD and PRIMARY); a platform with one clipboard refuses
//! PRIMARY as `unavailable` rather than writing the one clipboard silently.

use mcec_rules::{StopFlag, ToolError};

/// Which clipboard: what Ctrl+C and Ctrl+V use, or X11's PRIMARY (the last selected text,
/// pasted with the middle button).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    Clipboard,
    Primary,
}

/// A platform's clipboard, bound to the desktop it serves.
pub trait Clipboard: Send + Sync {
    /// Puts `text` on `which`; it stays there until another program replaces it.
    fn set(&self, which: Selection, text: String) -> Result<(), ToolError>;

    /// The text on `which`; `None` when no program offers text there. Waits for the owner
    /// only for a bounded time, asking `stop` while it waits.
    fn get(&self, which: Selection, stop: &StopFlag) -> Result<Option<String>, ToolError>;
}
