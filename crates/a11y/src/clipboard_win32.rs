//! The clipboard on Windows: the Win32 clipboard of `mcec-desktop-windows`, behind the same
//! functions as the X11 selections (`clipboard.rs`), so the `clipboard` tool and the Agent
//! tab's Copy reach it without knowing the platform.
//!
//! Windows has one clipboard; PRIMARY (the X11 selection pasted with the middle button) has no
//! Windows counterpart, so asking for it is `unavailable` rather than a silent write to the
//! one clipboard. The display name is X11's and means nothing here.

use mcec_desktop_windows::clipboard::{get_text, set_text};
use mcec_rules::{ErrorCode, StopFlag, ToolError};

use crate::requests::SelectionName;

fn only_clipboard(which: SelectionName, outcome: &str) -> Result<(), ToolError> {
    match which {
        SelectionName::Clipboard => Ok(()),
        SelectionName::Primary => Err(ToolError::new(
            ErrorCode::Unavailable,
            format!("Windows has no PRIMARY selection (only X11 does; use `clipboard`); {outcome}."),
        )),
    }
}

/// Puts `text` on the Windows clipboard; it stays there until another program replaces it.
pub fn set(_display: &str, which: SelectionName, text: String) -> Result<(), ToolError> {
    only_clipboard(which, "nothing was set")?;
    set_text(&text)
}

/// The operator's Copy (the Agent tab): `text` on the Windows clipboard.
pub fn copy_for_operator(text: String) -> Result<(), ToolError> {
    set_text(&text)
}

/// The Windows clipboard's text; `None` when it holds none.
pub fn get(_display: &str, which: SelectionName, stop: &StopFlag) -> Result<Option<String>, ToolError> {
    only_clipboard(which, "nothing was read")?;
    get_text(stop)
}
