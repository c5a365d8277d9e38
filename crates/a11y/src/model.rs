//! What an agent sees of an element, and the vocabulary of roles, states and operations.
//!
//! The role and state names are AT-SPI2's, spelled in kebab case (`push-button`,
//! `check-box`); the MSAA backend maps its roles and state bits onto them (`msaa/vocab.rs`),
//! as a UI Automation backend would its control types, so an agent's selectors mean the same
//! on every platform.

use mcec_desktop::types::Rect;
use serde::Serialize;

/// Text and values longer than this are cut in `query` answers (`get-text` reads all).
pub const SHORT_TEXT: usize = 200;

/// Every role name, in AT-SPI2's numbering (index = role number).
pub const ROLES: &[&str] = &[
    "invalid",
    "accelerator-label",
    "alert",
    "animation",
    "arrow",
    "calendar",
    "canvas",
    "check-box",
    "check-menu-item",
    "color-chooser",
    "column-header",
    "combo-box",
    "date-editor",
    "desktop-icon",
    "desktop-frame",
    "dial",
    "dialog",
    "directory-pane",
    "drawing-area",
    "file-chooser",
    "filler",
    "focus-traversable",
    "font-chooser",
    "frame",
    "glass-pane",
    "html-container",
    "icon",
    "image",
    "internal-frame",
    "label",
    "layered-pane",
    "list",
    "list-item",
    "menu",
    "menu-bar",
    "menu-item",
    "option-pane",
    "page-tab",
    "page-tab-list",
    "panel",
    "password-text",
    "popup-menu",
    "progress-bar",
    "push-button",
    "radio-button",
    "radio-menu-item",
    "root-pane",
    "row-header",
    "scroll-bar",
    "scroll-pane",
    "separator",
    "slider",
    "spin-button",
    "split-pane",
    "status-bar",
    "table",
    "table-cell",
    "table-column-header",
    "table-row-header",
    "tearoff-menu-item",
    "terminal",
    "text",
    "toggle-button",
    "tool-bar",
    "tool-tip",
    "tree",
    "tree-table",
    "unknown",
    "viewport",
    "window",
    "extended",
    "header",
    "footer",
    "paragraph",
    "ruler",
    "application",
    "autocomplete",
    "editbar",
    "embedded",
    "entry",
    "chart",
    "caption",
    "document-frame",
    "heading",
    "page",
    "section",
    "redundant-object",
    "form",
    "link",
    "input-method-window",
    "table-row",
    "tree-item",
    "document-spreadsheet",
    "document-presentation",
    "document-text",
    "document-web",
    "document-email",
    "comment",
    "list-box",
    "grouping",
    "image-map",
    "notification",
    "info-bar",
    "level-bar",
    "title-bar",
    "block-quote",
    "audio",
    "video",
    "definition",
    "article",
    "landmark",
    "log",
    "marquee",
    "math",
    "rating",
    "timer",
    "static",
    "math-fraction",
    "math-root",
    "subscript",
    "superscript",
    "description-list",
    "description-term",
    "description-value",
    "footnote",
    "content-deletion",
    "content-insertion",
    "mark",
    "suggestion",
    "push-button-menu",
];

/// Short names agents use for the common roles, and the role each stands for.
pub const ROLE_ALIASES: &[(&str, &str)] =
    &[("button", "push-button"), ("checkbox", "check-box"), ("edit", "text"), ("radio", "radio-button")];

/// Every state name, in AT-SPI2's numbering (bit index = state number).
pub const STATES: &[&str] = &[
    "invalid",
    "active",
    "armed",
    "busy",
    "checked",
    "collapsed",
    "defunct",
    "editable",
    "enabled",
    "expandable",
    "expanded",
    "focusable",
    "focused",
    "has-tooltip",
    "horizontal",
    "iconified",
    "modal",
    "multi-line",
    "multiselectable",
    "opaque",
    "pressed",
    "resizable",
    "selectable",
    "selected",
    "sensitive",
    "showing",
    "single-line",
    "stale",
    "transient",
    "vertical",
    "visible",
    "manages-descendants",
    "indeterminate",
    "required",
    "truncated",
    "animated",
    "invalid-entry",
    "supports-autocompletion",
    "selectable-text",
    "is-default",
    "visited",
    "checkable",
    "has-popup",
    "read-only",
];

/// A role name as given by an agent, resolved through the aliases; `None` if unknown.
pub fn canonical_role(name: &str) -> Option<&'static str> {
    let lower = name.trim().to_ascii_lowercase().replace([' ', '_'], "-");
    if let Some((_, role)) = ROLE_ALIASES.iter().find(|(alias, _)| *alias == lower) {
        return Some(role);
    }
    ROLES.iter().copied().find(|r| *r == lower)
}

/// A state name as given by an agent; `None` if unknown.
pub fn canonical_state(name: &str) -> Option<&'static str> {
    let lower = name.trim().to_ascii_lowercase().replace([' ', '_'], "-");
    STATES.iter().copied().find(|s| *s == lower)
}

/// One element as the backend describes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawElement {
    pub role: &'static str,
    pub name: String,
    pub description: String,
    /// The toolkit's stable id for the element (AT-SPI2's accessible id), empty if none.
    pub automation_id: String,
    pub states: Vec<&'static str>,
    /// Named actions, in the order the platform numbers them.
    pub actions: Vec<String>,
    /// Bounds in desktop pixels, when the element has any.
    pub bounds: Option<Rect>,
    /// The current value of a slider, spin button or progress bar.
    pub value: Option<f64>,
    /// The element's text, cut at [`SHORT_TEXT`], when asked for and it has a Text interface.
    pub text: Option<String>,
    pub child_count: u32,
    /// The element's text can be set (an editable Text interface).
    pub editable_text: bool,
    /// The element has a settable value.
    pub has_value: bool,
    /// The element can take keyboard focus through the platform (AT-SPI Component).
    pub can_focus: bool,
}

impl RawElement {
    pub fn has(&self, state: &str) -> bool {
        self.states.contains(&state)
    }

    /// Enabled in the agent's sense: the toolkit says enabled (or sensitive) and it is not defunct.
    pub fn is_enabled(&self) -> bool {
        (self.has("enabled") || self.has("sensitive")) && !self.has("defunct")
    }
}

/// An element as the agent sees it in `query`, `find` and `wait-for` answers.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Element {
    pub element_id: String,
    pub role: &'static str,
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub automation_id: String,
    pub states: Vec<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    /// In desktop pixels, the same space as `click`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Rect>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The parent's id in a `query` answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Depth below the window's root (0) in a `query` answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// The platform API that described the element (`msaa` on Windows), when the backend
    /// names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<&'static str>,
}

impl Element {
    pub fn new(element_id: String, raw: RawElement) -> Element {
        Element {
            element_id,
            role: raw.role,
            name: raw.name,
            description: raw.description,
            automation_id: raw.automation_id,
            states: raw.states,
            actions: raw.actions,
            bounds: raw.bounds,
            value: raw.value,
            text: raw.text,
            parent_id: None,
            depth: None,
            via: None,
        }
    }
}

/// What `invoke` does to one element.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    /// Run the platform action with this index (press, click, toggle, activate, expand …).
    Action { index: usize, name: String },
    /// Give the element keyboard focus.
    Focus,
    /// Set a slider's or spin button's value.
    SetValue(f64),
    /// Replace the text of an editable field.
    SetText(String),
    /// Insert text at the end of an editable field.
    AppendText(String),
    /// Select the element within its container (a list row, a tab).
    Select,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_follow_the_atspi_numbering() {
        assert_eq!(ROLES[7], "check-box");
        assert_eq!(ROLES[23], "frame");
        assert_eq!(ROLES[29], "label");
        assert_eq!(ROLES[43], "push-button");
        assert_eq!(ROLES[61], "text");
        assert_eq!(ROLES[79], "entry");
        assert_eq!(ROLES[90], "table-row");
        assert_eq!(STATES[8], "enabled");
        assert_eq!(STATES[12], "focused");
        assert_eq!(STATES[24], "sensitive");
        assert_eq!(STATES[30], "visible");
        assert_eq!(STATES[43], "read-only");
    }

    #[test]
    fn names_resolve_through_aliases_and_spelling() {
        assert_eq!(canonical_role("Button"), Some("push-button"));
        assert_eq!(canonical_role("check box"), Some("check-box"));
        assert_eq!(canonical_role("frobnicator"), None);
        assert_eq!(canonical_state("Focused"), Some("focused"));
        assert_eq!(canonical_state("shiny"), None);
    }
}
