//! `clipboard`: `get` and `set` of text on the CLIPBOARD or PRIMARY selection of the display
//! mcec drives. The switch for reading (`[clipboard.read]`) is checked by the MCP layer,
//! which knows the agent's commands; this layer checks the text and does the X11 work.

use mcec_rules::{StopFlag, ToolError};
use serde::Serialize;

use super::A11yTools;
use crate::clipboard;
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

fn name(which: SelectionName) -> &'static str {
    match which {
        SelectionName::Clipboard => "clipboard",
        SelectionName::Primary => "primary",
    }
}

impl A11yTools {
    pub fn clipboard(&self, req: &ClipboardRequest, stop: &StopFlag) -> Result<ClipboardResult, ToolError> {
        let which = req.selection.unwrap_or_default();
        let display = self.desktop.backend().display_name().to_string();
        match req.action {
            ClipboardAction::Set => {
                let text = clipboard::check_text(req.text.as_deref())?;
                if stop.is_set() {
                    return Err(ToolError::emergency_stopped());
                }
                clipboard::set(&display, which, text.to_string())?;
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
                let text = clipboard::get(&display, which, stop)?;
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
