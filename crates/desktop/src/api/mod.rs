//! The tool layer: one method per desktop tool, typed request in, JSON-able result out.
//!
//! [`DesktopTools`] holds a backend behind the [`crate::seams`] traits and applies the
//! contract's policy on top: selectors must name exactly one window, captures are capped
//! before anything is allocated, every actuation runs under one input lock and releases what
//! it pressed on any failure, and every abortable loop asks the [`StopFlag`] before its next
//! step. The MCP layer turns a result into the envelope (and a capture into an image block).

mod act;
mod artifacts;
mod captures;
mod gated;
mod held;
mod launch;
mod observe;
mod pointer;
mod raw;
mod record;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use mcec_rules::operator_hand::{self, HandVerdict};
use mcec_rules::{ErrorCode, StopFlag, ToolError};

use crate::requests::{ImageFormat, WindowSelector};
use crate::seams::{Backend, SessionWindow};
use crate::select;
use crate::types::{Point, Rect, WindowInfo};

/// The longest any one call may plan to run (waits, holds, pauses, one-shot recordings), so
/// it answers before the 60 s request timeout common MCP clients apply.
pub const MAX_CALL_MS: u64 = 50_000;

pub use act::{ClickResult, DragResult, FocusResult, KeyResult, TypeResult, WindowActionResult};
pub use held::MAX_HOLD;
pub use launch::LaunchResult;
pub use observe::{CaptureResult, WindowsResult};
pub use pointer::{MAX_NOTCHES, MAX_WAIT_MS, MouseResult, ScrollResult, WaitResult, WindowUnder};
pub use raw::{MAX_PER_CALL, QUEUE_CAPACITY, SendCommandResult};
pub use record::RecordResult;

/// What the caller decides for the tool layer.
#[derive(Debug, Clone)]
pub struct DesktopConfig {
    /// Where files go that a tool writes without an explicit absolute path (captures with a
    /// relative `file`, recordings). Created on first use. Never `/tmp`: for a session
    /// copy, a folder inside its session directory.
    pub artifact_dir: PathBuf,
}

/// The desktop tools over one backend. Cheap to share: wrap it in an `Arc`.
pub struct DesktopTools {
    backend: Arc<dyn Backend>,
    config: DesktopConfig,
    /// Held for the whole of every actuation, so two calls never interleave their input.
    /// Shared with the watchdog of buttons held by `mouse down`.
    input_lock: Arc<Mutex<()>>,
    held: held::HeldButtons,
    /// The captures handed out, for points given in image pixels.
    captures: captures::Captures,
    /// How long `mouse down` may hold a button ([`MAX_HOLD`] unless changed).
    hold_limit: std::time::Duration,
    recorder: record::Recorder,
    /// The `send_command` queue: one per process, as there is one `DesktopTools`.
    raw_queue: raw::RawQueue,
    capture_defaults: CaptureDefaults,
    /// A session's own display's window on the operator's desktop, when it has one: input
    /// waits while the operator's hand is in it.
    session_window: Option<Arc<dyn SessionWindow>>,
}

/// What a `capture` that names no size or format gets (`mcec.settings`' `Capture*` keys).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CaptureDefaults {
    pub max_long_side: u32,
    pub max_pixels: u64,
    pub format: ImageFormat,
}

impl Default for CaptureDefaults {
    fn default() -> Self {
        CaptureDefaults {
            max_long_side: crate::geometry::CLIENT_LONG_SIDE,
            max_pixels: crate::geometry::CLIENT_PIXELS,
            format: ImageFormat::Auto,
        }
    }
}

impl DesktopTools {
    pub fn new(backend: Arc<dyn Backend>, config: DesktopConfig) -> DesktopTools {
        DesktopTools {
            backend,
            config,
            input_lock: Arc::new(Mutex::new(())),
            held: held::HeldButtons::default(),
            captures: captures::Captures::default(),
            hold_limit: MAX_HOLD,
            recorder: record::Recorder::default(),
            raw_queue: raw::RawQueue::default(),
            capture_defaults: CaptureDefaults::default(),
            session_window: None,
        }
    }

    /// Change how long `mouse down` may hold a button before mcec lets go (tests shorten it).
    pub fn set_hold_limit(&mut self, limit: std::time::Duration) {
        self.hold_limit = limit;
    }

    /// Change the size and format of a capture that names none.
    pub fn set_capture_defaults(&mut self, defaults: CaptureDefaults) {
        self.capture_defaults = defaults;
    }

    /// The own display's window on the operator's desktop, whose operator's hand input waits for.
    pub fn set_session_window(&mut self, window: Arc<dyn SessionWindow>) {
        self.session_window = Some(window);
    }

    /// The own display's window on the operator's desktop, when this process has one.
    pub fn session_window(&self) -> Option<&Arc<dyn SessionWindow>> {
        self.session_window.as_ref()
    }

    /// The backend, for callers that need a seam directly.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    pub fn config(&self) -> &DesktopConfig {
        &self.config
    }

    /// The emergency-stop path: end any recording and release every button and modifier.
    /// Does not wait for the input lock (a running actuation sees the stop flag itself).
    pub fn emergency_release(&self) -> Result<(), ToolError> {
        self.recorder.abort();
        self.held.clear();
        self.backend.release_all()
    }

    fn input(&self) -> MutexGuard<'_, ()> {
        self.input_lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `f` under the input lock; on failure release everything before answering.
    ///
    /// The stop is asked again once the lock is held (a call may have waited behind another
    /// while the operator stopped), and `f` sees the backend through `gated::StopGated`, so
    /// no press, move or window change is sent after the stop engages, whatever `f` does.
    pub fn actuate<T>(
        &self,
        stop: &StopFlag,
        f: impl FnOnce(&dyn Backend) -> Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        if stop.is_set() {
            return Err(ToolError::emergency_stopped());
        }
        let _guard = self.input();
        if stop.is_set() {
            return Err(stopped_after("The call was waiting behind another action; nothing was sent."));
        }
        self.wait_for_operator_hand(stop)?;
        let result = f(&gated::StopGated { inner: self.backend.as_ref(), stop });
        if result.is_err()
            && let Err(e) = self.backend.release_all()
        {
            tracing::error!("releasing input after a failed actuation: {e}");
        }
        result
    }

    /// While the operator uses the own display's window, wait (asking the stop between looks)
    /// and give up with `operator-active` (`mcec_rules::operator_hand`).
    fn wait_for_operator_hand(&self, stop: &StopFlag) -> Result<(), ToolError> {
        let Some(window) = &self.session_window else {
            return Ok(());
        };
        let started = std::time::Instant::now();
        loop {
            let since_seen = window.operator_last_seen().map(|seen| seen.elapsed());
            match operator_hand::verdict(since_seen, started.elapsed()) {
                HandVerdict::Act => return Ok(()),
                HandVerdict::GiveUp => return Err(operator_hand::operator_active()),
                HandVerdict::Wait(pause) => std::thread::sleep(pause),
            }
            if stop.is_set() {
                return Err(stopped_after("The call was waiting for the operator's hand; nothing was sent."));
            }
        }
    }

    /// The virtual desktop: the bounding box of every monitor.
    fn desktop_bounds(&self) -> Result<(Rect, Vec<Rect>), ToolError> {
        let displays = self.backend.displays()?;
        let rects: Vec<Rect> = displays.iter().map(|d| d.bounds).collect();
        let Some(first) = rects.first() else {
            return Err(ToolError::new(ErrorCode::NoDesktop, "The desktop reports no monitor."));
        };
        let all = rects.iter().fold(*first, |acc, r| acc.union(r));
        Ok((all, rects))
    }

    /// Check that `p` lies on a monitor; `bad-arguments` naming `field` otherwise.
    fn on_screen(&self, p: Point, field: &str) -> Result<(), ToolError> {
        let (all, rects) = self.desktop_bounds()?;
        if rects.iter().any(|r| r.contains(p)) {
            return Ok(());
        }
        Err(ToolError::bad_argument(
            field,
            format!(
                "({}, {}) lies on no screen; the desktop spans x {}..{}, y {}..{}",
                p.x,
                p.y,
                all.x,
                all.right() - 1,
                all.y,
                all.bottom() - 1
            ),
        ))
    }

    /// The one window `sel` names. A `handle` not in the list is looked up directly, so
    /// windows the list rules skip can still be targeted by id.
    pub fn resolve(&self, sel: &WindowSelector) -> Result<WindowInfo, ToolError> {
        let windows = self.backend.list_windows()?;
        match select::resolve(&windows, sel) {
            Ok(w) => Ok(w.clone()),
            Err(e) if e.code == ErrorCode::WindowNotFound && sel.handle.is_some() => {
                let Some(handle) = sel.handle else {
                    return Err(e);
                };
                match self.backend.window_info(handle) {
                    Ok(w) if select::matches(&w, sel) => Ok(w),
                    Ok(_) => Err(e),
                    Err(inner) if inner.code == ErrorCode::WindowClosed => Err(ToolError::new(
                        ErrorCode::WindowNotFound,
                        format!("There is no window with handle {handle}."),
                    )),
                    Err(inner) => Err(inner),
                }
            }
            Err(e) => Err(e),
        }
    }
}

/// `emergency-stopped` with how far the call got.
pub(crate) fn stopped_after(progress: impl std::fmt::Display) -> ToolError {
    let base = ToolError::emergency_stopped();
    ToolError::new(base.code, format!("{} {progress}", base.detail))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shareable<T: Send + Sync>() {}

    #[test]
    fn tools_can_be_shared_across_threads() {
        shareable::<DesktopTools>();
        let err = stopped_after("Typed 3 of 5 characters.");
        assert_eq!(err.code, ErrorCode::EmergencyStopped);
        assert!(err.detail.ends_with("Typed 3 of 5 characters."));
    }
}
