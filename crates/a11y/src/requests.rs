//! Typed arguments of the accessibility tools, exactly as an agent sends them. Windows are
//! chosen with the same selector fields as `click` (`window`, `process`, `className`, `pid`,
//! `handle`, `foreground`); elements with `elementId`, or `{by, value}` plus optional `role`
//! and `states`: the fields of [`mcec_desktop::requests::ElementTarget`], spelled into each
//! request by `with_element!` (for the reason `with_selector!` spells the window fields).

use mcec_desktop::with_selector;
use schemars::JsonSchema;
use serde::Deserialize;

/// Declares a request with the element target's fields (`elementId`, `by`, `value`, `role`,
/// `states`, written once in [`mcec_desktop::with_element_fields!`]) and the window selector's
/// appended, and `target()` collecting the former.
macro_rules! with_element {
    ($($item:tt)*) => {
        mcec_desktop::with_element_fields! { with_selector, target { $($item)* } }
    };
}

with_selector! {
    /// `query`: the accessibility tree under one window (or under one element), bounded.
    pub struct QueryRequest {
        /// Start at this element (from `query`, `find` or `wait-for`), not the window.
        #[serde(default)]
        pub element_id: Option<String>,
        /// Levels below the start.
        #[serde(default)]
        #[schemars(range(min = 1, max = 64), extend("default" = 8))]
        pub depth: Option<u32>,
        /// The answer says when the tree was cut.
        #[serde(default)]
        #[schemars(range(min = 1, max = 5000), extend("default" = 300))]
        pub max_elements: Option<usize>,
    }
}

with_element! {
    /// `find`: every element under a window that matches `value` (with `by`, `role`,
    /// `states`); exactly one is the answer, more than one is `ambiguous-selector` listing
    /// them, none is `element-not-found`. `elementId` is not taken: it is already found.
    pub struct FindRequest {
        /// Answer every match (at most 50) instead of refusing more than one.
        #[serde(default)]
        pub all: Option<bool>,
    }
}

/// What `invoke` does.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum InvokeAction {
    /// The element's default action: press a button, activate a menu item or row (default).
    Press,
    /// Flip a check box or toggle button.
    Toggle,
    /// Select a list row, tab or item in its container.
    Select,
    /// Expand a tree row, combo box or expander.
    Expand,
    /// Collapse it.
    Collapse,
    /// Give the element keyboard focus.
    Focus,
    /// Set the value of a slider or spin button (`number`).
    SetValue,
    /// Replace the text of an editable field (`text`).
    SetText,
    /// Add `text` at the end of an editable field.
    AppendText,
    /// Run a named action the element offers (`name`), as listed in its `actions`.
    Named,
}

with_element! {
    /// `invoke`: act on one element without the mouse. Give `elementId`, or a selector
    /// (`by`, `value`, `role`, `states`) with a window.
    pub struct InvokeRequest {
        #[serde(default)]
        #[schemars(extend("default" = "press"))]
        pub action: Option<InvokeAction>,
        /// For `setText`, `appendText`.
        #[serde(default)]
        #[schemars(length(max = 10_000))]
        pub text: Option<String>,
        /// For `setValue`.
        #[serde(default)]
        pub number: Option<f64>,
        /// For `named`: one of the element's `actions`.
        #[serde(default)]
        pub name: Option<String>,
    }
}

/// What `wait-for` waits for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WaitForCondition {
    /// Until exactly one element matches (default).
    #[default]
    Appears,
    /// Until no element matches.
    Disappears,
    /// Until the one match is enabled.
    Enabled,
    /// Until the one match has keyboard focus.
    Focused,
    /// Until the one match is showing on screen.
    Showing,
}

with_element! {
    /// `wait-for`: until an element under a window that matches `value` (with `by`, `role`,
    /// `states`) appears, disappears, becomes enabled, focused or showing; ends early on the
    /// emergency stop and the client's cancel. Takes a selector, not an `elementId`.
    pub struct WaitForRequest {
        #[serde(default)]
        #[schemars(extend("default" = "appears"))]
        pub condition: Option<WaitForCondition>,
        /// Past 50000, send a `progressToken` or allow the call more than 60 s.
        #[serde(default)]
        #[schemars(range(max = 60_000), extend("default" = 5000))]
        pub timeout_ms: Option<u64>,
    }
}

/// Where `get-text` reads from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TextSource {
    /// The accessibility tree first, OCR where it has no text (default).
    #[default]
    Auto,
    /// Only the accessibility tree.
    Accessibility,
    /// Only OCR of the pixels.
    Ocr,
}

with_element! {
    /// `get-text`: the text of an element (`elementId`, or `value` with a window), of a whole
    /// window (window selector alone), or of a desktop `region` (OCR).
    pub struct GetTextRequest {
        /// A desktop rectangle to read by OCR.
        #[serde(default)]
        pub region: Option<mcec_desktop::requests::Region>,
        #[serde(default)]
        #[schemars(extend("default" = "auto"))]
        pub source: Option<TextSource>,
    }
}

/// What `clipboard` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ClipboardAction {
    /// Read the selection's text (needs `[clipboard.read]`).
    Get,
    /// Own the selection with `text` until another program takes it.
    Set,
}

/// Which X11 selection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SelectionName {
    /// What Ctrl+C / Ctrl+V use (default).
    #[default]
    Clipboard,
    /// The text last selected, pasted with the middle button.
    Primary,
}

/// `clipboard`: get or set text on the CLIPBOARD (or PRIMARY) selection.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClipboardRequest {
    pub action: ClipboardAction,
    /// For `set`, at most 1 MiB of UTF-8.
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    #[schemars(extend("default" = "clipboard"))]
    pub selection: Option<SelectionName>,
}
