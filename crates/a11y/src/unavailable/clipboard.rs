//! The clipboard where no backend is built yet (Windows: the Win32 clipboard is not wired
//! in). `get` and `set` answer `unavailable`; nothing is read or written.

use mcec_rules::{ErrorCode, StopFlag, ToolError};

use crate::requests::SelectionName;

fn unavailable() -> ToolError {
    ToolError::new(
        ErrorCode::Unavailable,
        "This build has no clipboard backend on Windows yet; nothing was read or set.",
    )
}

/// Only that `set` has its text; the rest of the checks belong to a backend that can set it.
pub fn check_text(text: Option<&str>) -> Result<&str, ToolError> {
    text.ok_or_else(|| ToolError::bad_argument("text", "is required for `set`"))
}

pub fn set(_display: &str, _which: SelectionName, _text: String) -> Result<(), ToolError> {
    Err(unavailable())
}

pub fn get(_display: &str, _which: SelectionName, _stop: &StopFlag) -> Result<Option<String>, ToolError> {
    Err(unavailable())
}
