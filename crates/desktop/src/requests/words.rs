//! Field descriptions that several tools' input schemas share, written once. `tools/list`
//! hands every tool's schema to the model on every turn, so a sentence repeated in ten tools
//! costs ten times: each is short, states what the schema's keywords (`minimum`, `maximum`,
//! `default`, `enum`) cannot, and is used through `#[schemars(description = …)]` by every
//! request that takes the field (here and in `mcec-a11y`).

/// `window` of the window selector (and `title` of `windows`' filter).
pub const TITLE: &str = "Title substring.";
/// `className` of the window selector and of `windows`' filter.
pub const CLASS: &str = "Class or instance name.";
/// `handle` of the window selector.
pub const HANDLE: &str = "A `windows` id.";
/// A `{x, y}` of the pointer tools.
pub const POINT: &str = "Desktop pixels (window-relative with a window).";
/// A point or an element of `click`, `drag` and `focus`.
pub const ENDPOINT: &str =
    "`{x, y}` in desktop pixels (window-relative with a window), or an element (its centre).";
/// `captureId` of the pointer tools.
pub const CAPTURE_ID: &str = "Points are in this capture's pixels; not with a window.";
/// `region` of `capture` and `record`.
pub const REGION: &str = "Only this desktop rectangle (at most 64 Mpx); not with a window.";
/// `elementId` of the accessibility tools.
pub const ELEMENT_ID: &str = "From `query`, `find` or `wait-for`.";
/// `by` of an element selector.
pub const BY: &str = "`value` is a whole name (default), a role, an exact automationid or a text substring.";
/// `value` of an element selector.
pub const VALUE: &str = "What to match, under the window.";
/// `role` of an element selector.
pub const ROLE: &str = "Only this role, e.g. `push-button`.";
/// `states` of an element selector.
pub const STATES: &str = "Only with all these, e.g. `checked`.";
