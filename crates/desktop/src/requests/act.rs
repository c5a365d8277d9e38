//! Arguments of the actuation tools.

use schemars::JsonSchema;
use serde::Deserialize;

use super::Endpoint;
use super::{unselected, with_selector};
use crate::keys::Modifier;
use crate::types::{MouseButton, Point};

with_selector! {
    /// `click`: press and release a mouse button at a point.
    pub struct ClickRequest {
        /// `{x, y}` in desktop pixels (window-relative with a window selector), or an element
        /// (`{elementId}` or `{by, value, role, states}` under the window): its centre.
        pub at: Endpoint,
        /// `left` (default), `right` or `middle`.
        #[serde(default)]
        #[schemars(extend("default" = "left"))]
        pub button: Option<MouseButton>,
        /// Number of clicks, 1 to 3 (default 1; 2 is a double click).
        #[serde(default)]
        #[schemars(range(min = 1, max = 3), extend("default" = 1))]
        pub count: Option<u32>,
        /// Keys held for the click only, e.g. `["ctrl"]`.
        #[serde(default)]
        pub modifiers: Option<Vec<Modifier>>,
        /// Points are in the pixels of this `capture` (its `captureId`); not with a window.
        #[serde(default)]
        pub capture_id: Option<String>,
    }
}

impl ClickRequest {
    /// A single left click at a desktop point, with no window selector.
    pub fn at(at: Point) -> ClickRequest {
        unselected!(ClickRequest {
            at: Endpoint::Point(at),
            button: None,
            count: None,
            modifiers: None,
            capture_id: None
        })
    }
}

with_selector! {
    /// `drag`: press a button at `from`, move through `path` to `to`, release.
    pub struct DragRequest {
        /// Start: `{x, y}` in desktop pixels (window-relative with a window selector, as are
        /// `path` and `to`), or an element (`{elementId}` or `{by, value, role, states}`).
        pub from: Endpoint,
        /// End: a point or an element, as `from`.
        pub to: Endpoint,
        /// Waypoints between `from` and `to`. The whole path is walked in steps of at most
        /// 12 px and at most 400 points.
        #[serde(default)]
        #[schemars(length(max = 400))]
        pub path: Option<Vec<Point>>,
        /// Spread the points evenly over this many ms (0 to 10000; default 0, as fast as the
        /// target window keeps up).
        #[serde(default)]
        #[schemars(range(max = 10_000), extend("default" = 0))]
        pub duration_ms: Option<u64>,
        /// `left` (default), `right` or `middle`.
        #[serde(default)]
        pub button: Option<MouseButton>,
        /// Modifier keys held for the whole drag only (`shift`, `ctrl`, `alt`, `super`).
        #[serde(default)]
        pub modifiers: Option<Vec<Modifier>>,
        /// Points are in the pixels of this `capture` (its `captureId`); not with a window.
        #[serde(default)]
        pub capture_id: Option<String>,
    }
}

impl DragRequest {
    /// A plain left-button drag between two desktop points.
    pub fn between(from: Point, to: Point) -> DragRequest {
        unselected!(DragRequest {
            from: Endpoint::Point(from),
            to: Endpoint::Point(to),
            path: None,
            duration_ms: None,
            button: None,
            modifiers: None,
            capture_id: None,
        })
    }
}

/// `type`: type text into the focused window.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TypeRequest {
    /// Any Unicode text; newlines press Return and tabs press Tab. Other control characters
    /// are refused. At most 10000 characters.
    #[schemars(length(max = 10_000))]
    pub text: String,
}

/// `key`: press key chords, e.g. `ctrl+shift+t`, `Enter`, `F5`, `ctrl+a Delete`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KeyRequest {
    /// Space-separated chords of `+`-joined key names: modifiers `ctrl`, `shift`, `alt`,
    /// `super`, and one key such as `a`, `5`, `Enter` (or `Return`), `Tab`, `Esc` (or `Escape`), `BackSpace`,
    /// `Delete`, `Home`, `End`, `PageUp`, `PageDown`, `Up`, `Down`, `Left`, `Right`, `Space`,
    /// `F1`..`F24`, `plus`, `minus`. At most 32 chords.
    #[schemars(length(min = 1))]
    pub keys: String,
    /// Hold each chord down this long before releasing it, in ms (at most 10000; all the
    /// chords' holds together at most 50000).
    #[serde(default, alias = "hold")]
    #[schemars(range(max = 10_000), extend("default" = 0))]
    pub hold_ms: Option<u64>,
}

/// What `window` does to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WindowAction {
    /// Move the window's top-left corner to `x`, `y`.
    Move,
    /// Resize to `width` x `height`.
    Resize,
    Minimize,
    Maximize,
    /// Undo minimise or maximise.
    Restore,
    /// Raise and focus the window.
    Foreground,
}

with_selector! {
    /// `window`: move, resize, minimise, maximise, restore or raise one window.
    pub struct WindowRequest {
        /// The operation.
        pub action: WindowAction,
        /// New left edge for `move`.
        #[serde(default)]
        pub x: Option<i64>,
        /// New top edge for `move`.
        #[serde(default)]
        pub y: Option<i64>,
        /// New width for `resize` (positive).
        #[serde(default)]
        #[schemars(range(min = 1))]
        pub width: Option<i64>,
        /// New height for `resize` (positive).
        #[serde(default)]
        #[schemars(range(min = 1))]
        pub height: Option<i64>,
    }
}

with_selector! {
    /// `focus`: bring a window to the foreground, optionally click in it, and verify it has
    /// the keyboard focus.
    pub struct FocusRequest {
        /// Also left-click here: window-relative `{x, y}`, or an element of the window.
        #[serde(default)]
        pub click_at: Option<Endpoint>,
    }
}

/// `launch`: start a program and wait for its first window.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LaunchRequest {
    /// The program: an absolute path or a name looked up on PATH.
    #[schemars(length(min = 1))]
    pub path: String,
    /// Arguments, passed as they are (no shell).
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// Working directory of the new process.
    #[serde(default)]
    pub working_directory: Option<String>,
    /// Longest wait for a window of the new process, in ms (default 10000, at most 50000).
    #[serde(default)]
    #[schemars(range(max = 50_000), extend("default" = 10_000))]
    pub timeout_ms: Option<u64>,
}
