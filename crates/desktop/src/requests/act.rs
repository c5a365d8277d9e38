//! Arguments of the actuation tools.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Endpoint, words};
use super::{unselected, with_selector};
use crate::keys::Modifier;
use crate::types::{MouseButton, Point};

with_selector! {
    /// `click`: press and release a mouse button at a point.
    pub struct ClickRequest {
        #[schemars(description = words::ENDPOINT)]
        pub at: Endpoint,
        #[serde(default)]
        #[schemars(extend("default" = "left"))]
        pub button: Option<MouseButton>,
        /// 2 is a double click.
        #[serde(default)]
        #[schemars(range(min = 1, max = 3), extend("default" = 1))]
        pub count: Option<u32>,
        /// Held for the click only.
        #[serde(default)]
        pub modifiers: Option<Vec<Modifier>>,
        #[serde(default)]
        #[schemars(description = words::CAPTURE_ID)]
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
        #[schemars(description = words::ENDPOINT)]
        pub from: Endpoint,
        #[schemars(description = words::ENDPOINT)]
        pub to: Endpoint,
        /// Waypoints between `from` and `to` (in their space), walked in steps of at most 12 px.
        #[serde(default)]
        #[schemars(length(max = 400))]
        pub path: Option<Vec<Point>>,
        /// Spread the points over this many ms (0: as fast as the window keeps up).
        #[serde(default)]
        #[schemars(range(max = 10_000), extend("default" = 0))]
        pub duration_ms: Option<u64>,
        #[serde(default)]
        #[schemars(extend("default" = "left"))]
        pub button: Option<MouseButton>,
        /// Held for the whole drag only.
        #[serde(default)]
        pub modifiers: Option<Vec<Modifier>>,
        #[serde(default)]
        #[schemars(description = words::CAPTURE_ID)]
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
    /// Newlines press Return, tabs Tab; other control characters are refused.
    #[schemars(length(max = 10_000))]
    pub text: String,
}

/// `key`: press key chords, e.g. `ctrl+shift+t`, `Enter`, `F5`, `ctrl+a Delete`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KeyRequest {
    /// Space-separated chords of `+`-joined names: modifiers ctrl, shift, alt, super and one
    /// key such as a, 5, Enter, Tab, Esc, BackSpace, Delete, Home, End, PageUp, PageDown, Up,
    /// Down, Left, Right, Space, F1..F24, plus, minus. At most 32 chords.
    #[schemars(length(min = 1))]
    pub keys: String,
    /// Hold each chord this long, in ms (all the holds together at most 50000).
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
        pub action: WindowAction,
        /// `move`: the new left edge.
        #[serde(default)]
        pub x: Option<i64>,
        /// `move`: the new top edge.
        #[serde(default)]
        pub y: Option<i64>,
        /// `resize`: the new width.
        #[serde(default)]
        #[schemars(range(min = 1))]
        pub width: Option<i64>,
        /// `resize`: the new height.
        #[serde(default)]
        #[schemars(range(min = 1))]
        pub height: Option<i64>,
    }
}

with_selector! {
    /// `focus`: bring a window to the foreground, optionally click in it, and verify it has
    /// the keyboard focus.
    pub struct FocusRequest {
        /// Also left-click here: a window-relative `{x, y}` or an element.
        #[serde(default)]
        pub click_at: Option<Endpoint>,
    }
}

/// `launch`: start a program and wait for its first window.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LaunchRequest {
    /// An absolute path or a name on PATH.
    #[schemars(length(min = 1))]
    pub path: String,
    /// Passed as they are (no shell).
    #[serde(default)]
    pub args: Option<Vec<String>>,
    #[serde(default)]
    pub working_directory: Option<String>,
    /// Longest wait for its window, in ms.
    #[serde(default)]
    #[schemars(range(max = 50_000), extend("default" = 10_000))]
    pub timeout_ms: Option<u64>,
}
