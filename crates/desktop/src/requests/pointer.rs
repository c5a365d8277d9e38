//! Arguments of the pointer tools beyond click and drag (`scroll`, `mouse`) and of `wait`:
//! what computer-use models expect to be able to do with a mouse and with time.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{unselected, with_selector, words};
use crate::keys::Modifier;
use crate::types::{MouseButton, Point, ScrollDirection};

with_selector! {
    /// `scroll`: turn the mouse wheel at a point.
    pub struct ScrollRequest {
        #[schemars(description = words::POINT)]
        pub at: Point,
        pub direction: ScrollDirection,
        #[serde(default)]
        #[schemars(range(min = 1, max = 50), extend("default" = 3))]
        pub notches: Option<u32>,
        /// Held while scrolling only.
        #[serde(default)]
        pub modifiers: Option<Vec<Modifier>>,
        #[serde(default)]
        #[schemars(description = words::CAPTURE_ID)]
        pub capture_id: Option<String>,
    }
}

impl ScrollRequest {
    /// `notches` (default 3) turns of the wheel at a desktop point, no modifiers, no selector.
    pub fn at(at: Point, direction: ScrollDirection) -> ScrollRequest {
        unselected!(ScrollRequest { at, direction, notches: None, modifiers: None, capture_id: None })
    }
}

/// What `mouse` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MouseAction {
    /// Move the pointer to `at` (hover), optionally along `path` over `durationMs`.
    Move,
    /// Press `button` at `at` and keep it down until `up`, the stop, or 60 s.
    Down,
    /// Release `button` (at `at` when given).
    Up,
    /// Where the pointer is, and which windows lie under it.
    Position,
}

with_selector! {
    /// `mouse`: hover, press or release a button, or ask where the pointer is.
    pub struct MouseRequest {
        pub action: MouseAction,
        /// Desktop pixels (window-relative with a window); needed by `move` and `down`.
        #[serde(default)]
        pub at: Option<Point>,
        /// `move`: waypoints walked before `at`.
        #[serde(default)]
        #[schemars(length(max = 400))]
        pub path: Option<Vec<Point>>,
        /// `move`: spread the movement over this many ms.
        #[serde(default)]
        #[schemars(range(max = 10_000), extend("default" = 0))]
        pub duration_ms: Option<u64>,
        /// For `down` and `up`.
        #[serde(default)]
        #[schemars(extend("default" = "left"))]
        pub button: Option<MouseButton>,
        #[serde(default)]
        #[schemars(description = words::CAPTURE_ID)]
        pub capture_id: Option<String>,
    }
}

impl MouseRequest {
    /// `action` at a desktop point (or none), left button, no selector.
    pub fn new(action: MouseAction, at: Option<Point>) -> MouseRequest {
        unselected!(MouseRequest {
            action,
            at,
            path: None,
            duration_ms: None,
            button: None,
            capture_id: None,
        })
    }
}

/// `wait`: let time pass (for a page to load, an animation to end); ends at once on a stop.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WaitRequest {
    /// Milliseconds.
    #[schemars(range(min = 1, max = 30_000))]
    pub ms: u64,
}
