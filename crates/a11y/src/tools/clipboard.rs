//! `clipboard`: `get` and `set` of text on the CLIPBOARD or PRIMARY selection of the display
//! mcec drives (on Windows, the Win32 clipboard). The switch for reading (`[clipboard.read]`)
//! is checked by the MCP layer, which knows the agent's commands; this layer checks the text,
//! the same on every platform, and hands the platform work to the clipboard the binary chose
//! ([`mcec_desktop::clipboard::Clipboard`]).

use mcec_rules::{StopFlag, ToolError};
use serde::Serialize;

use mcec_desktop::clipboard::Selection;

use super::A11yTools;
use crate::requests::{ClipboardAction, ClipboardRequest, SelectionName};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClipboardResult {
    pub selection: &'static str,
    /// The text read (`get`); empty when no program owns the selection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `get`: whether a program owned the selection and gave text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owned: Option<bool>,
    /// Characters read or set.
    pub length: usize,
}

/// The most text `set` accepts (one X11 property, no INCR transfer; the same bound on Windows).
pub const MAX_SET_BYTES: usize = 1 << 20;

/// Check text for `set`: at most [`MAX_SET_BYTES`], no control character but newline and tab.
pub fn check_text(text: Option<&str>) -> Result<&str, ToolError> {
    let Some(text) = text else {
        return Err(ToolError::bad_argument("text", "is required for `set`"));
    };
    if text.len() > MAX_SET_BYTES {
        return Err(ToolError::bad_argument("text", format!("is larger than {MAX_SET_BYTES} bytes")));
    }
    if let Some(c) = text.chars().find(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r')) {
        return Err(ToolError::bad_argument(
            "text",
            format!("holds control character U+{:04X}", u32::from(c)),
        ));
    }
    Ok(text)
}

impl From<SelectionName> for Selection {
    fn from(which: SelectionName) -> Selection {
        match which {
            SelectionName::Clipboard => Selection::Clipboard,
            SelectionName::Primary => Selection::Primary,
        }
    }
}

fn name(which: SelectionName) -> &'static str {
    match which {
        SelectionName::Clipboard => "clipboard",
        SelectionName::Primary => "primary",
    }
}

impl A11yTools {
    pub fn clipboard(&self, req: &ClipboardRequest, stop: &StopFlag) -> Result<ClipboardResult, ToolError> {
        let which = req.selection.unwrap_or_default();
        match req.action {
            ClipboardAction::Set => {
                let text = check_text(req.text.as_deref())?;
                if stop.is_set() {
                    return Err(ToolError::emergency_stopped());
                }
                self.clipboard.set(which.into(), text.to_string())?;
                Ok(ClipboardResult {
                    selection: name(which),
                    text: None,
                    owned: None,
                    length: text.chars().count(),
                })
            }
            ClipboardAction::Get => {
                if req.text.is_some() {
                    return Err(ToolError::bad_argument("text", "is only for `set`"));
                }
                let text = self.clipboard.get(which.into(), stop)?;
                let owned = text.is_some();
                let text = text.unwrap_or_default();
                Ok(ClipboardResult {
                    selection: name(which),
                    length: text.chars().count(),
                    text: Some(text),
                    owned: Some(owned),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_text_is_checked() {
        assert!(check_text(None).is_err());
        assert!(check_text(Some(&"x".repeat(MAX_SET_BYTES + 1))).is_err());
        assert!(check_text(Some("a\u{0}b")).is_err());
        assert_eq!(check_text(Some("two\nlines\tok")).unwrap(), "two\nlines\tok");
    }
}
