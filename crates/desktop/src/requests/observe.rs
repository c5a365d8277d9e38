//! Arguments of the observation tools (`displays`, `windows`, `capture`) and of `record`.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{unselected, with_selector};

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
    /// Only windows whose title contains this text (case-insensitive).
    #[serde(default)]
    pub title: Option<String>,
    /// Only windows of this class or instance name (case-insensitive).
    #[serde(default)]
    pub class_name: Option<String>,
    /// Only windows of this process name (case-insensitive).
    #[serde(default)]
    pub process: Option<String>,
    /// Only windows of this process id.
    #[serde(default)]
    pub pid: Option<u32>,
    /// Wait until the filtered list satisfies this condition (bounded by `timeoutMs`).
    #[serde(default)]
    pub condition: Option<WaitCondition>,
    /// Longest wait for `condition`, in ms (default 5000, at most 50000).
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
        /// Capture only this rectangle of the desktop. Not together with a window selector.
        #[serde(default)]
        pub region: Option<Region>,
        /// Downscale so the image is at most this wide (never upscaled).
        #[serde(default)]
        #[schemars(range(min = 1))]
        pub max_width: Option<u32>,
        /// Downscale by this factor, in (0, 1]; larger values leave the size unchanged.
        #[serde(default)]
        #[schemars(extend("exclusiveMinimum" = 0), extend("default" = 1))]
        pub scale: Option<f64>,
        /// `true`: no downscale. Otherwise the image is held to at most 1568 px a side and
        /// 1.15 megapixels unless `maxWidth` or `scale` is given; the answer says the scale.
        #[serde(default)]
        pub full: Option<bool>,
        /// `true`: draw the mouse pointer into the image.
        #[serde(default)]
        pub cursor: Option<bool>,
        /// `auto` (default unless the operator set another): PNG, or JPEG when the picture is
        /// photographic; `png`; `jpeg`. The answer's `mimeType` says which. A `file` named
        /// `.jpg`/`.jpeg` is JPEG.
        #[serde(default)]
        pub format: Option<ImageFormat>,
        /// JPEG quality, 1 to 100 (default 80); not with `format: png`.
        #[serde(default)]
        pub quality: Option<u8>,
        /// Also write the image here (relative: in the session's artefact directory).
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
        /// `start`, `stop` or `oneshot`.
        pub action: RecordAction,
        /// Record only this rectangle of the desktop. Not together with a window selector.
        #[serde(default)]
        pub region: Option<Region>,
        /// Frames per second, 1 to 10 (default 5).
        #[serde(default)]
        #[schemars(range(min = 1, max = 10), extend("default" = 5))]
        pub fps: Option<u32>,
        /// Length in ms: required for `oneshot` (at most 50000); for `start`, it stops by
        /// itself after this long (default and at most 60000).
        #[serde(default)]
        #[schemars(range(min = 1, max = 60_000))]
        pub duration_ms: Option<u64>,
        /// Downscale frames to at most this width (default 800, at most 1920, never upscaled).
        #[serde(default)]
        #[schemars(range(min = 1, max = 1920), extend("default" = 800))]
        pub max_width: Option<u32>,
        /// Write the GIF here (relative: in the session's artefact directory; default a new
        /// file there).
        #[serde(default)]
        pub file: Option<String>,
    }
}
