//! Arguments of the observation tools (`displays`, `windows`, `capture`) and of `record`.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{unselected, with_selector, words};

/// `displays`: no arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DisplaysRequest {}

/// What `windows` waits for before answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WaitCondition {
    /// Until at least one window matches the filters.
    Appears,
    /// Until no window matches the filters.
    Disappears,
    /// Until a matching window is the foreground window.
    Foreground,
}

/// `windows`: list top-level windows, optionally filtered, optionally waiting for a condition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WindowsRequest {
    // The filters are the window selector's fields, described as there.
    #[serde(default)]
    #[schemars(description = words::TITLE)]
    pub title: Option<String>,
    #[serde(default)]
    #[schemars(description = words::CLASS)]
    pub class_name: Option<String>,
    #[serde(default)]
    pub process: Option<String>,
    #[serde(default)]
    pub pid: Option<u32>,
    /// Wait until a window matching the filters appears, none does, or one is in front.
    #[serde(default)]
    pub condition: Option<WaitCondition>,
    /// Longest wait for `condition`, in ms.
    #[serde(default)]
    #[schemars(range(max = 50_000), extend("default" = 5000))]
    pub timeout_ms: Option<u64>,
}

/// A rectangle on the virtual desktop, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Region {
    /// Left edge.
    pub x: i64,
    /// Top edge.
    pub y: i64,
    /// Width in pixels (positive, at most 16384).
    #[schemars(range(min = 1, max = 16_384))]
    pub width: i64,
    /// Height in pixels (positive, at most 16384; width x height at most 64 Mpx).
    #[schemars(range(min = 1, max = 16_384))]
    pub height: i64,
}

/// How a capture is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ImageFormat {
    /// PNG, or JPEG when the picture is photographic (a PNG of it would run to megabytes).
    #[default]
    Auto,
    Png,
    Jpeg,
}

with_selector! {
    /// `capture`: the whole desktop, a `region`, or one window (selector fields) as PNG.
    pub struct CaptureRequest {
        #[serde(default)]
        #[schemars(description = words::REGION)]
        pub region: Option<Region>,
        /// Downscale to at most this wide.
        #[serde(default)]
        #[schemars(range(min = 1))]
        pub max_width: Option<u32>,
        /// Downscale factor; 1 or more keeps the size.
        #[serde(default)]
        #[schemars(extend("exclusiveMinimum" = 0), extend("default" = 1))]
        pub scale: Option<f64>,
        /// No downscale; else at most 1568 px a side and 1.15 Mpx unless `maxWidth` or `scale`.
        #[serde(default)]
        pub full: Option<bool>,
        /// Draw the pointer in.
        #[serde(default)]
        pub cursor: Option<bool>,
        /// `auto` (the operator may set another default): PNG, or JPEG when photographic; the
        /// answer's `mimeType` says which. A `.jpg` `file` is JPEG.
        #[serde(default)]
        pub format: Option<ImageFormat>,
        /// JPEG only.
        #[serde(default)]
        #[schemars(range(min = 1, max = 100), extend("default" = 80))]
        pub quality: Option<u8>,
        /// Also write the image here (relative: in the artefact directory).
        #[serde(default)]
        pub file: Option<String>,
    }
}

impl RecordRequest {
    /// `action` over the whole desktop with every option at its default.
    pub fn new(action: RecordAction) -> RecordRequest {
        unselected!(RecordRequest {
            action,
            region: None,
            fps: None,
            duration_ms: None,
            max_width: None,
            file: None
        })
    }
}

impl CaptureRequest {
    /// The whole desktop, full size, not written to a file.
    pub fn full_screen() -> CaptureRequest {
        unselected!(CaptureRequest {
            region: None,
            max_width: None,
            scale: None,
            full: None,
            cursor: None,
            format: None,
            quality: None,
            file: None,
        })
    }
}

/// What `record` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RecordAction {
    /// Start recording in the background (one recording at a time).
    Start,
    /// Stop the running recording and return its file.
    Stop,
    /// Record for `durationMs` and return when done.
    Oneshot,
}

with_selector! {
    /// `record`: an animated GIF of the desktop, a `region` or one window (selector fields).
    pub struct RecordRequest {
        pub action: RecordAction,
        #[serde(default)]
        #[schemars(description = words::REGION)]
        pub region: Option<Region>,
        #[serde(default)]
        #[schemars(range(min = 1, max = 10), extend("default" = 5))]
        pub fps: Option<u32>,
        /// `oneshot`: needed, at most 50000; `start`: stops by itself after it (default 60000).
        #[serde(default)]
        #[schemars(range(min = 1, max = 60_000))]
        pub duration_ms: Option<u64>,
        /// Downscale frames to at most this wide.
        #[serde(default)]
        #[schemars(range(min = 1, max = 1920), extend("default" = 800))]
        pub max_width: Option<u32>,
        /// Write the GIF here (relative: in the artefact directory; default a new file there).
        #[serde(default)]
        pub file: Option<String>,
    }
}
