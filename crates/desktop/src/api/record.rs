//! `record`: animated GIFs of the desktop, a region or a window.
//!
//! One recording at a time, in the background (`start`/`stop`) or in the call (`oneshot`).
//! Frame rate, length and width are bounded; the loop asks the stop flag between frames, and
//! the emergency stop ends a background recording (its file is finished and kept).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mcec_rules::{ErrorCode, StopFlag, ToolError};
use serde::Serialize;

use super::observe::check_downscale;
use super::{DesktopTools, artifacts, stopped_after};
use crate::geometry::target_size;
use crate::requests::{RecordAction, RecordRequest};
use crate::seams::Backend;
use crate::types::Rect;

const DEFAULT_FPS: u32 = 5;
const MAX_FPS: u32 = 10;
const MAX_DURATION_MS: u64 = 60_000;
const DEFAULT_WIDTH: u32 = 800;
const MAX_WIDTH: u32 = 1_920;
/// NeuQuant sampling factor: 1 best, 30 fastest.
const QUANT_SPEED: i32 = 20;

/// The answer of `record`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordResult {
    /// True after `start`: the recording runs in the background.
    pub recording: bool,
    /// The GIF file.
    pub file: String,
    pub fps: u32,
    /// Frame size.
    pub width: u32,
    pub height: u32,
    /// Desktop area recorded.
    pub source: Rect,
    /// Frames written (after `stop`/`oneshot`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub byte_size: Option<u64>,
    /// Why it ended: `stopped`, `duration`, or `emergency-stop`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended: Option<&'static str>,
}

/// What to record and where.
#[derive(Debug, Clone)]
struct Plan {
    area: Rect,
    width: u32,
    height: u32,
    fps: u32,
    duration: Duration,
    path: PathBuf,
    artifact_dir: PathBuf,
}

impl Plan {
    fn result(&self) -> RecordResult {
        RecordResult {
            recording: false,
            file: self.path.display().to_string(),
            fps: self.fps,
            width: self.width,
            height: self.height,
            source: self.area,
            frames: None,
            duration_ms: None,
            byte_size: None,
            ended: None,
        }
    }
}

enum Slot {
    Idle,
    Background { cancel: Arc<AtomicBool>, handle: JoinHandle<Result<RecordResult, ToolError>> },
    Oneshot { cancel: Arc<AtomicBool> },
}

/// The one recording slot.
pub(crate) struct Recorder {
    slot: Mutex<Slot>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder { slot: Mutex::new(Slot::Idle) }
    }
}

impl Recorder {
    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// End whatever is recording (its file is finished and kept).
    pub(crate) fn abort(&self) {
        match &*self.slot() {
            Slot::Background { cancel, .. } | Slot::Oneshot { cancel } => {
                cancel.store(true, Ordering::SeqCst)
            }
            Slot::Idle => {}
        }
    }
}

/// Capture frames per `plan` into a GIF until the duration ends, `cancel` or `stop` is set.
/// `file` is the plan's path, opened by the caller so a bad `file` is refused in the call.
fn run(
    backend: &dyn Backend,
    plan: &Plan,
    file: File,
    stop: &StopFlag,
    cancel: &AtomicBool,
) -> Result<RecordResult, ToolError> {
    let gif_err = |e: gif::EncodingError| {
        tracing::error!("GIF encoding: {e}");
        ToolError::new(ErrorCode::Internal, "Could not encode the GIF.")
    };
    let mut encoder = gif::Encoder::new(BufWriter::new(file), plan.width as u16, plan.height as u16, &[])
        .map_err(gif_err)?;
    encoder.set_repeat(gif::Repeat::Infinite).map_err(gif_err)?;
    let interval = Duration::from_millis(1_000 / u64::from(plan.fps));
    let delay_cs = (100 / plan.fps) as u16;
    let start = Instant::now();
    let mut frames = 0u32;
    let ended = loop {
        if stop.is_set() {
            break "emergency-stop";
        }
        if cancel.load(Ordering::SeqCst) {
            break "stopped";
        }
        if start.elapsed() >= plan.duration {
            break "duration";
        }
        // Scaled by the backend, which can do it before the frame becomes a full-size copy.
        let img = match backend.capture_scaled(plan.area, plan.width, plan.height) {
            Ok(shot) => shot.image,
            Err(e) if frames > 0 => {
                tracing::warn!("recording ended early: {e}");
                break "stopped";
            }
            Err(e) => return Err(e),
        };
        let mut frame =
            gif::Frame::from_rgb_speed(img.width as u16, img.height as u16, &img.pixels, QUANT_SPEED);
        frame.delay = delay_cs;
        encoder.write_frame(&frame).map_err(gif_err)?;
        frames += 1;
        let next = start + interval * frames;
        while let Some(left) = next.checked_duration_since(Instant::now()) {
            if stop.is_set() || cancel.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(10)));
        }
    };
    let duration_ms = start.elapsed().as_millis() as u64;
    drop(encoder);
    let byte_size = std::fs::metadata(&plan.path).map(|m| m.len()).ok();
    Ok(RecordResult {
        frames: Some(frames),
        duration_ms: Some(duration_ms),
        byte_size,
        ended: Some(ended),
        ..plan.result()
    })
}

impl DesktopTools {
    fn plan(&self, req: &RecordRequest, default_duration: Option<u64>) -> Result<Plan, ToolError> {
        let fps = req.fps.unwrap_or(DEFAULT_FPS);
        if !(1..=MAX_FPS).contains(&fps) {
            return Err(ToolError::bad_argument("fps", format!("must be 1 to {MAX_FPS}")));
        }
        let duration_ms = req
            .duration_ms
            .or(default_duration)
            .ok_or_else(|| ToolError::bad_argument("durationMs", "is required for `oneshot`"))?;
        if !(1..=MAX_DURATION_MS).contains(&duration_ms) {
            return Err(ToolError::bad_argument("durationMs", format!("must be 1 to {MAX_DURATION_MS}")));
        }
        check_downscale(req.max_width, None)?;
        let max_width = req.max_width.unwrap_or(DEFAULT_WIDTH);
        if max_width > MAX_WIDTH {
            return Err(ToolError::bad_argument("maxWidth", format!("must be at most {MAX_WIDTH}")));
        }
        let path =
            artifacts::output_path(&self.config.artifact_dir, req.file.as_deref(), "recording", "gif")?;
        let (area, _) = self.target_area(req.region.as_ref(), &req.selector())?;
        let (width, height) = target_size(area.width, area.height, Some(max_width), None);
        Ok(Plan {
            area,
            width,
            height,
            fps,
            duration: Duration::from_millis(duration_ms),
            path,
            artifact_dir: self.config.artifact_dir.clone(),
        })
    }

    /// `record`.
    pub fn record(&self, req: &RecordRequest, stop: &StopFlag) -> Result<RecordResult, ToolError> {
        match req.action {
            RecordAction::Start => self.record_start(req, stop),
            RecordAction::Stop => self.record_stop(),
            RecordAction::Oneshot => self.record_oneshot(req, stop),
        }
    }

    fn busy() -> ToolError {
        ToolError::new(
            ErrorCode::Unavailable,
            "A recording is already running; stop it first (`record` with action `stop`).",
        )
    }

    fn record_start(&self, req: &RecordRequest, stop: &StopFlag) -> Result<RecordResult, ToolError> {
        let plan = self.plan(req, Some(MAX_DURATION_MS))?;
        if stop.is_set() {
            return Err(ToolError::emergency_stopped());
        }
        let mut slot = self.recorder.slot();
        if !matches!(*slot, Slot::Idle) {
            return Err(Self::busy());
        }
        let file = artifacts::create(&plan.artifact_dir, &plan.path)?;
        let cancel = Arc::new(AtomicBool::new(false));
        let (backend, stop2, cancel2, plan2) =
            (Arc::clone(&self.backend), stop.clone(), Arc::clone(&cancel), plan.clone());
        let handle = std::thread::Builder::new()
            .name("mcec-record".into())
            .spawn(move || run(backend.as_ref(), &plan2, file, &stop2, &cancel2))
            .map_err(|e| {
                tracing::error!("starting the recorder thread: {e}");
                ToolError::new(ErrorCode::Internal, "Could not start the recorder.")
            })?;
        *slot = Slot::Background { cancel, handle };
        Ok(RecordResult { recording: true, ..plan.result() })
    }

    fn record_stop(&self) -> Result<RecordResult, ToolError> {
        let mut slot = self.recorder.slot();
        match std::mem::replace(&mut *slot, Slot::Idle) {
            Slot::Background { cancel, handle } => {
                drop(slot);
                cancel.store(true, Ordering::SeqCst);
                handle
                    .join()
                    .unwrap_or_else(|_| Err(ToolError::new(ErrorCode::Internal, "The recorder failed.")))
            }
            other => {
                *slot = other;
                Err(ToolError::bad_argument("action", "`stop` but no recording is running"))
            }
        }
    }

    fn record_oneshot(&self, req: &RecordRequest, stop: &StopFlag) -> Result<RecordResult, ToolError> {
        let plan = self.plan(req, None)?;
        if plan.duration > Duration::from_millis(super::MAX_CALL_MS) {
            let why = format!(
                "must be at most {} for `oneshot` (use `start` and `stop` for longer)",
                super::MAX_CALL_MS
            );
            return Err(ToolError::bad_argument("durationMs", why));
        }
        if stop.is_set() {
            return Err(ToolError::emergency_stopped());
        }
        let cancel = Arc::new(AtomicBool::new(false));
        let file = {
            let mut slot = self.recorder.slot();
            if !matches!(*slot, Slot::Idle) {
                return Err(Self::busy());
            }
            let file = artifacts::create(&plan.artifact_dir, &plan.path)?;
            *slot = Slot::Oneshot { cancel: Arc::clone(&cancel) };
            file
        };
        let result = run(self.backend.as_ref(), &plan, file, stop, &cancel);
        *self.recorder.slot() = Slot::Idle;
        let result = result?;
        if result.ended == Some("emergency-stop") {
            return Err(stopped_after(format!(
                "The recording ended early; the partial GIF is at {}.",
                Path::new(&result.file).display()
            )));
        }
        Ok(result)
    }
}
