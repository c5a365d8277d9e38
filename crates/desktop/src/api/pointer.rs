//! The pointer tools beyond `click` and `drag` (`scroll`, `mouse`) and `wait`.
//!
//! They run under the same input lock and stop gate as every actuation; a button left down
//! by `mouse down` is remembered so the stop, the process's exit or the hold watchdog
//! ([`super::held`]) always lets go of it.

use mcec_rules::{StopFlag, ToolError};
use serde::Serialize;

use super::DesktopTools;
use super::act::{checked_duration, hold, holding, walk};
use crate::requests::{MouseAction, MouseRequest, ScrollRequest, WaitRequest};
use crate::types::{MouseButton, Point, ScrollDirection};

/// The most wheel notches one `scroll` sends.
pub const MAX_NOTCHES: u32 = 50;
const DEFAULT_NOTCHES: u32 = 3;
/// The longest `wait`.
pub const MAX_WAIT_MS: u64 = 30_000;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScrollResult {
    /// Where the wheel turned, in desktop pixels.
    pub at: Point,
    pub direction: ScrollDirection,
    /// Notches sent.
    pub notches: u32,
}

/// A window under the pointer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowUnder {
    pub id: u64,
    pub title: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MouseResult {
    pub action: MouseAction,
    /// Where the pointer is after the action, in desktop pixels.
    pub at: Point,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub button: Option<MouseButton>,
    /// `down`: the button is released after this many ms unless `up` comes first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub released_after_ms: Option<u64>,
    /// `up`: false when the button was not held by `mouse down` (it was released anyway).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub was_held: Option<bool>,
    /// `position`: the visible top-level windows whose bounds contain the pointer (not in
    /// stacking order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub windows: Option<Vec<WindowUnder>>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitResult {
    pub waited_ms: u64,
}

impl MouseResult {
    fn new(action: MouseAction, at: Point) -> MouseResult {
        MouseResult { action, at, button: None, released_after_ms: None, was_held: None, windows: None }
    }
}

impl DesktopTools {
    /// `scroll`: the pointer moves to the point, then the wheel turns one notch at a time,
    /// with `modifiers` held; the stop is asked before every notch.
    pub fn scroll(&self, req: &ScrollRequest, stop: &StopFlag) -> Result<ScrollResult, ToolError> {
        let notches = req.notches.unwrap_or(DEFAULT_NOTCHES);
        if !(1..=MAX_NOTCHES).contains(&notches) {
            return Err(ToolError::bad_argument("notches", format!("must be 1 to {MAX_NOTCHES}")));
        }
        let space = self.space(&req.selector(), req.capture_id.as_deref())?;
        let at = self.target_point(&space, req.at, "at")?;
        let modifiers = req.modifiers.as_deref().unwrap_or(&[]);
        self.actuate(stop, |b| {
            b.pointer_move(at)?;
            b.settle()?;
            holding(b, modifiers, stop, || {
                for _ in 0..notches {
                    b.scroll(req.direction)?;
                }
                b.settle()
            })
        })?;
        Ok(ScrollResult { at, direction: req.direction, notches })
    }

    /// `mouse`: `move` (hover, optionally along a path), `down`, `up` or `position`.
    pub fn mouse(&self, req: &MouseRequest, stop: &StopFlag) -> Result<MouseResult, ToolError> {
        let space = self.space(&req.selector(), req.capture_id.as_deref())?;
        let needs_at =
            |field: &str| req.at.ok_or_else(|| ToolError::bad_argument(field, "is required for this action"));
        let button = req.button.unwrap_or_default();
        match req.action {
            MouseAction::Move => {
                let duration = checked_duration(req.duration_ms)?;
                let to = needs_at("at")?;
                let path = req.path.as_deref().unwrap_or(&[]);
                if path.is_empty() && duration.is_zero() && !self.held.any() {
                    // A plain hover: one motion to the point. A walk through every 12 px only
                    // matters along a path, over time, or with a button held (dragging).
                    let at = self.target_point(&space, to, "at")?;
                    self.actuate(stop, |b| {
                        b.pointer_move(at)?;
                        b.settle()
                    })?;
                    return Ok(MouseResult::new(MouseAction::Move, at));
                }
                let from = self.backend.pointer_position()?;
                let (_, path, to) = self.relative_to(&space, &to.into(), path, &to.into())?;
                let points = self.drag_points(from, &path, to, ["at", "path", "at"])?;
                self.actuate(stop, |b| {
                    b.pointer_move(points[0])?;
                    walk(b, &points, duration, stop, "move")
                })?;
                Ok(MouseResult::new(MouseAction::Move, to))
            }
            MouseAction::Down => {
                let at = self.target_point(&space, needs_at("at")?, "at")?;
                self.actuate(stop, |b| {
                    b.pointer_move(at)?;
                    b.settle()?;
                    b.button(button, true)?;
                    b.settle()
                })?;
                self.held.pressed(button, self.backend.clone(), self.input_lock.clone(), self.hold_limit);
                Ok(MouseResult {
                    button: Some(button),
                    released_after_ms: Some(u64::try_from(self.hold_limit.as_millis()).unwrap_or(u64::MAX)),
                    ..MouseResult::new(MouseAction::Down, at)
                })
            }
            MouseAction::Up => {
                let at = match req.at {
                    Some(at) => Some(self.target_point(&space, at, "at")?),
                    None => None,
                };
                let was_held = self.held.let_go(button);
                self.actuate(stop, |b| {
                    if let Some(p) = at {
                        b.pointer_move(p)?;
                        b.settle()?;
                    }
                    b.button(button, false)?;
                    b.settle()
                })?;
                let now = self.backend.pointer_position()?;
                Ok(MouseResult {
                    button: Some(button),
                    was_held: Some(was_held),
                    ..MouseResult::new(MouseAction::Up, now)
                })
            }
            MouseAction::Position => {
                let at = self.backend.pointer_position()?;
                let windows = self
                    .backend
                    .list_windows()?
                    .into_iter()
                    .filter(|w| !w.minimized && w.bounds.is_some_and(|b| b.contains(at)))
                    .map(|w| WindowUnder { id: w.id, title: w.title })
                    .collect();
                Ok(MouseResult { windows: Some(windows), ..MouseResult::new(MouseAction::Position, at) })
            }
        }
    }

    /// `wait`: sleep up to [`MAX_WAIT_MS`], ending at once (with `emergency-stopped`) on a stop.
    pub fn wait(&self, req: &WaitRequest, stop: &StopFlag) -> Result<WaitResult, ToolError> {
        if !(1..=MAX_WAIT_MS).contains(&req.ms) {
            return Err(ToolError::bad_argument("ms", format!("must be 1 to {MAX_WAIT_MS}")));
        }
        hold(req.ms, stop)?;
        Ok(WaitResult { waited_ms: req.ms })
    }
}
