//! The actuation tools: `click`, `drag`, `type`, `key`, `window` and `focus`.
//!
//! All input, window changes included, runs under the one input lock
//! ([`DesktopTools::actuate`]), which asks the stop again before every event; arguments are checked
//! before anything is pressed; whatever a call pressed is released on every exit path. The
//! checks and pressing helpers here (`check_text`, `click_at`, `walk_drag`, `press_chords`,
//! `hold`) are also what `send_command` runs, so both paths share one implementation.

use std::time::{Duration, Instant};

use mcec_rules::{ErrorCode, StopFlag, ToolError, progress};
use serde::Serialize;

use super::captures::CaptureMap;
use super::{DesktopTools, stopped_after};
use crate::geometry::{MAX_DRAG_POINTS, densify};
use crate::keys::{Chord, Key, Modifier, parse_keys};
use crate::requests::{
    ClickRequest, DragRequest, Endpoint, FocusRequest, KeyRequest, TypeRequest, WindowAction, WindowRequest,
    WindowSelector,
};
use crate::seams::{Backend, WindowOp};
use crate::types::{MouseButton, Point, WindowInfo};

const MAX_CLICKS: u32 = 3;
const MAX_HOLD_MS: u64 = 10_000;
const MAX_TEXT_CHARS: usize = 10_000;
/// The longest `drag` `durationMs`.
const MAX_DRAG_MS: u64 = 10_000;
/// How long `window` and `focus` watch for the change to show.
const CONFIRM_WAIT: Duration = Duration::from_millis(1_500);
const CONFIRM_POLL: Duration = Duration::from_millis(5);

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClickResult {
    /// Where the click landed, in desktop pixels.
    pub at: Point,
    pub button: MouseButton,
    pub count: u32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DragResult {
    pub from: Point,
    pub to: Point,
    /// Pointer positions sent, start included.
    pub points: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeResult {
    /// Characters typed.
    pub characters: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyResult {
    /// Chords pressed and released.
    pub chords: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowActionResult {
    /// The window after the action.
    pub window: WindowInfo,
    /// True when the change was observed; a window manager may refuse or delay it.
    pub confirmed: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FocusResult {
    pub window: WindowInfo,
    /// Where `clickAt` clicked, in desktop pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clicked: Option<Point>,
}

/// Where a request's points are given.
pub(crate) enum Space {
    Desktop,
    /// Relative to this window's top-left corner.
    Window(WindowInfo),
    /// In the image pixels of this capture.
    Capture(CaptureMap),
}

impl Space {
    /// `p` in desktop pixels; `bad-arguments` naming `field` when it lies outside the window
    /// or the image it is relative to.
    pub(crate) fn to_desktop(&self, p: Point, field: &str) -> Result<Point, ToolError> {
        match self {
            Space::Desktop => Ok(p),
            Space::Window(w) => inside_window(w, p, field),
            Space::Capture(map) => map.desktop_point(p, field),
        }
    }

    /// An endpoint in desktop pixels: a point translated from this space, or an element's
    /// centre the accessibility layer already resolved (in desktop pixels whatever the space).
    pub(crate) fn endpoint(&self, e: &Endpoint, field: &str) -> Result<Point, ToolError> {
        match e {
            Endpoint::Point(p) => self.to_desktop(*p, field),
            Endpoint::Resolved(p) => Ok(*p),
            Endpoint::Element(_) => Err(ToolError::bad_argument(
                field,
                "an element endpoint needs the accessibility tools, which this caller does not have",
            )),
        }
    }
}

/// A `durationMs` for pointer movement: 0 to [`MAX_DRAG_MS`].
pub(crate) fn checked_duration(ms: Option<u64>) -> Result<Duration, ToolError> {
    let ms = ms.unwrap_or(0);
    if ms > MAX_DRAG_MS {
        return Err(ToolError::bad_argument("durationMs", format!("must be 0 to {MAX_DRAG_MS}")));
    }
    Ok(Duration::from_millis(ms))
}

/// `at` relative to `w`, as a desktop point; `bad-arguments` when it lies outside it.
/// `unavailable` when the platform gives no window geometry.
pub(crate) fn inside_window(w: &WindowInfo, at: Point, field: &str) -> Result<Point, ToolError> {
    let bounds = w.geometry()?;
    let inside = at.x >= 0
        && at.y >= 0
        && i64::from(at.x) < i64::from(bounds.width)
        && i64::from(at.y) < i64::from(bounds.height);
    if !inside {
        return Err(ToolError::bad_argument(
            field,
            format!(
                "({}, {}) lies outside the window, which is {}x{}; it is relative to the window's top-left corner",
                at.x, at.y, bounds.width, bounds.height
            ),
        ));
    }
    Ok(Point::new(bounds.x + at.x, bounds.y + at.y))
}

pub(crate) fn click_at(b: &dyn Backend, p: Point, button: MouseButton, count: u32) -> Result<(), ToolError> {
    b.pointer_move(p)?;
    for _ in 0..count {
        b.button(button, true)?;
        b.button(button, false)?;
    }
    b.settle()
}

/// Sleep `ms`, waking early (with an error) when the stop flag is set.
pub(crate) fn hold(ms: u64, stop: &StopFlag) -> Result<(), ToolError> {
    if stop.sleep(Duration::from_millis(ms)) { Ok(()) } else { Err(ToolError::emergency_stopped()) }
}

/// Check text for `type`: at most [`MAX_TEXT_CHARS`], no control character but newline and
/// tab. Answers the character count; errors name `field`.
pub(crate) fn check_text(text: &str, field: &str) -> Result<usize, ToolError> {
    let chars = text.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(ToolError::bad_argument(field, format!("is longer than {MAX_TEXT_CHARS} characters")));
    }
    if let Some((i, c)) = text.chars().enumerate().find(|(_, c)| c.is_control() && *c != '\n' && *c != '\t') {
        return Err(ToolError::bad_argument(
            field,
            format!(
                "holds control character U+{:04X} at position {i}; only newline and tab are typed (use `key` for other keys)",
                u32::from(c)
            ),
        ));
    }
    Ok(chars)
}

/// Move through `points` (the pointer already at the first), point `i` due at `i/(n-1)` of
/// `duration`. The stop flag is asked before every point and while waiting for it; `what`
/// ends the sentence that says how far it got. Runs under the input lock.
pub(crate) fn walk(
    b: &dyn Backend,
    points: &[Point],
    duration: Duration,
    stop: &StopFlag,
    what: &str,
) -> Result<(), ToolError> {
    let total = points.len();
    let started = Instant::now();
    let steps = u32::try_from(total.saturating_sub(1).max(1)).unwrap_or(u32::MAX);
    for (i, p) in points.iter().enumerate().skip(1) {
        let due = started + duration * u32::try_from(i).unwrap_or(u32::MAX) / steps;
        if !stop.sleep(due.saturating_duration_since(Instant::now())) {
            let last = points[i - 1];
            return Err(stopped_after(format!(
                "The {what} was aborted after {i} of {total} points, at ({}, {}); the button is up.",
                last.x, last.y
            )));
        }
        b.pointer_move(*p)?;
        b.settle()?;
        progress::report(i as u64 + 1, total as u64, "points");
    }
    Ok(())
}

/// Walk a densified drag with `button` down. The button is released on every exit. Runs
/// under the input lock.
pub(crate) fn walk_drag(
    b: &dyn Backend,
    points: &[Point],
    duration: Duration,
    stop: &StopFlag,
    button: MouseButton,
) -> Result<(), ToolError> {
    let Some(first) = points.first() else {
        return Ok(());
    };
    b.pointer_move(*first)?;
    b.settle()?;
    b.button(button, true)?;
    let walked = walk(b, points, duration, stop, "drag");
    let released = b.button(button, false).and_then(|_| b.settle());
    walked.and(released)
}

/// Run `f` with `modifiers` held (each pressed once, in order); every one pressed is
/// released, in reverse, on every exit. Runs under the input lock.
pub(crate) fn holding<T>(
    b: &dyn Backend,
    modifiers: &[Modifier],
    stop: &StopFlag,
    f: impl FnOnce() -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    let mut pressed: Vec<Modifier> = Vec::new();
    let result = (|| {
        for m in modifiers {
            if !pressed.contains(m) {
                b.key(Key::Modifier(*m), true, stop)?;
                pressed.push(*m);
            }
        }
        f()
    })();
    let mut released = Ok(());
    for m in pressed.iter().rev() {
        if let Err(e) = b.key(Key::Modifier(*m), false, stop) {
            released = Err(e);
        }
    }
    let value = result?;
    released.and_then(|_| b.settle()).map(|_| value)
}

/// Press each chord (modifiers first), hold it `hold_ms`, release in reverse. Every key
/// pressed is released on every exit; the stop flag is asked between presses. Runs under
/// the input lock.
pub(crate) fn press_chords(
    b: &dyn Backend,
    chords: &[Chord],
    hold_ms: u64,
    stop: &StopFlag,
) -> Result<(), ToolError> {
    for (i, chord) in chords.iter().enumerate() {
        if stop.is_set() {
            return Err(stopped_after(format!("Pressed {i} of {} chords.", chords.len())));
        }
        let mut pressed: Vec<Key> = Vec::new();
        let result = (|| {
            for m in &chord.modifiers {
                b.key(Key::Modifier(*m), true, stop)?;
                pressed.push(Key::Modifier(*m));
                if stop.is_set() {
                    return Err(stopped_after(format!(
                        "Pressed {i} of {} chords; the keys held were released.",
                        chords.len()
                    )));
                }
            }
            b.key(chord.key, true, stop)?;
            pressed.push(chord.key);
            if hold_ms > 0 {
                b.settle()?;
                hold(hold_ms, stop).map_err(|_| {
                    stopped_after(format!(
                        "Pressed {} of {} chords (the last one while it was held); the keys held were released.",
                        i + 1,
                        chords.len()
                    ))
                })?;
            }
            Ok(())
        })();
        let mut released = Ok(());
        for k in pressed.iter().rev() {
            if let Err(e) = b.key(*k, false, stop) {
                released = Err(e);
            }
        }
        result.and(released)?;
        progress::report(i as u64 + 1, chords.len() as u64, "chords");
    }
    b.settle()
}

impl DesktopTools {
    /// Poll `window_info` until `done` holds or the confirm wait ends.
    fn confirm(
        &self,
        id: u64,
        stop: &StopFlag,
        done: impl Fn(&WindowInfo) -> bool,
    ) -> Result<(WindowInfo, bool), ToolError> {
        let start = Instant::now();
        loop {
            let w = self.backend.window_info(id)?;
            if done(&w) {
                return Ok((w, true));
            }
            if start.elapsed() >= CONFIRM_WAIT || stop.is_set() {
                return Ok((w, false));
            }
            std::thread::sleep(CONFIRM_POLL);
        }
    }

    /// `click`.
    pub fn click(&self, req: &ClickRequest, stop: &StopFlag) -> Result<ClickResult, ToolError> {
        let count = req.count.unwrap_or(1);
        if !(1..=MAX_CLICKS).contains(&count) {
            return Err(ToolError::bad_argument("count", format!("must be 1 to {MAX_CLICKS}")));
        }
        let button = req.button.unwrap_or_default();
        let space = self.space(&req.selector(), req.capture_id.as_deref())?;
        let at = space.endpoint(&req.at, "at")?;
        self.on_screen(at, "at")?;
        let modifiers = req.modifiers.as_deref().unwrap_or(&[]);
        self.actuate(stop, |b| holding(b, modifiers, stop, || click_at(b, at, button, count)))?;
        Ok(ClickResult { at, button, count })
    }

    /// `drag`: a button down at `from`, through `path`, up at `to`, spread over `durationMs`,
    /// with `modifiers` held throughout. The button and the modifiers are released on every
    /// exit; a stop aborts before the next point.
    pub fn drag(&self, req: &DragRequest, stop: &StopFlag) -> Result<DragResult, ToolError> {
        let duration = checked_duration(req.duration_ms)?;
        let path = req.path.as_deref().unwrap_or(&[]);
        let space = self.space(&req.selector(), req.capture_id.as_deref())?;
        let (from, path, to) = self.relative_to(&space, &req.from, path, &req.to)?;
        let points = self.drag_points(from, &path, to, ["from", "path", "to"])?;
        let button = req.button.unwrap_or_default();
        let modifiers = req.modifiers.as_deref().unwrap_or(&[]);
        self.actuate(stop, |b| {
            holding(b, modifiers, stop, || walk_drag(b, &points, duration, stop, button))
        })?;
        Ok(DragResult { from, to, points: points.len() })
    }

    /// The coordinates a request's points are given in: the desktop's, a window's (when a
    /// selector is given), or a capture's image pixels (when `captureId` is).
    pub(crate) fn space(
        &self,
        selector: &WindowSelector,
        capture_id: Option<&str>,
    ) -> Result<Space, ToolError> {
        match (selector.is_empty(), capture_id) {
            (true, None) => Ok(Space::Desktop),
            (false, None) => Ok(Space::Window(self.resolve(selector)?)),
            (true, Some(id)) => Ok(Space::Capture(self.captures.get(id)?)),
            (false, Some(_)) => Err(ToolError::bad_argument(
                "captureId",
                "give either a window selector or a captureId, not both",
            )),
        }
    }

    /// `from`, `path` and `to` in desktop pixels, translated from `space`.
    pub(crate) fn relative_to(
        &self,
        space: &Space,
        from: &Endpoint,
        path: &[Point],
        to: &Endpoint,
    ) -> Result<(Point, Vec<Point>, Point), ToolError> {
        let path = path
            .iter()
            .enumerate()
            .map(|(i, p)| space.to_desktop(*p, &format!("path[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((space.endpoint(from, "from")?, path, space.endpoint(to, "to")?))
    }

    /// A point given in `space`, in desktop pixels, checked to lie on a screen.
    pub(crate) fn target_point(&self, space: &Space, at: Point, field: &str) -> Result<Point, ToolError> {
        let at = space.to_desktop(at, field)?;
        self.on_screen(at, field)?;
        Ok(at)
    }

    /// The densified points of a drag, every waypoint checked to lie on a screen. `fields`
    /// names `from`, `path` and `to` in errors.
    pub(crate) fn drag_points(
        &self,
        from: Point,
        path: &[Point],
        to: Point,
        fields: [&str; 3],
    ) -> Result<Vec<Point>, ToolError> {
        let [from_field, path_field, to_field] = fields;
        self.on_screen(from, from_field)?;
        self.on_screen(to, to_field)?;
        for (i, p) in path.iter().enumerate() {
            let field = if path_field == "path" { format!("path[{i}]") } else { path_field.to_string() };
            self.on_screen(*p, &field)?;
        }
        let mut waypoints = vec![from];
        waypoints.extend_from_slice(path);
        waypoints.push(to);
        densify(&waypoints).map_err(|e| {
            ToolError::bad_argument(
                if path.is_empty() { to_field } else { path_field },
                format!(
                    "the drag needs {} points at 12 px steps; at most {MAX_DRAG_POINTS} are allowed",
                    e.needed
                ),
            )
        })
    }

    /// `type`.
    pub fn type_text(&self, req: &TypeRequest, stop: &StopFlag) -> Result<TypeResult, ToolError> {
        let chars = check_text(&req.text, "text")?;
        self.actuate(stop, |b| b.type_text(&req.text, stop))?;
        Ok(TypeResult { characters: chars })
    }

    /// `key`: each chord pressed (modifiers first), held `holdMs`, released in reverse.
    pub fn key(&self, req: &KeyRequest, stop: &StopFlag) -> Result<KeyResult, ToolError> {
        let chords = parse_keys(&req.keys).map_err(|e| ToolError::bad_argument("keys", e))?;
        let hold_ms = req.hold_ms.unwrap_or(0);
        if hold_ms > MAX_HOLD_MS {
            return Err(ToolError::bad_argument("holdMs", format!("must be at most {MAX_HOLD_MS}")));
        }
        if hold_ms.saturating_mul(chords.len() as u64) > super::MAX_CALL_MS {
            let why =
                format!("times {} chords is more than {} ms in one call", chords.len(), super::MAX_CALL_MS);
            return Err(ToolError::bad_argument("holdMs", why));
        }
        self.actuate(stop, |b| press_chords(b, &chords, hold_ms, stop))?;
        Ok(KeyResult { chords: chords.len() })
    }

    /// `window`.
    pub fn window(&self, req: &WindowRequest, stop: &StopFlag) -> Result<WindowActionResult, ToolError> {
        let w = self.resolve(&req.selector())?;
        let coord = |v: Option<i64>, name: &str| -> Result<i32, ToolError> {
            let v = v.ok_or_else(|| ToolError::bad_argument(name, "is required for this action"))?;
            i32::try_from(v)
                .ok()
                .filter(|v| (-32_768..=32_767).contains(v))
                .ok_or_else(|| ToolError::bad_argument(name, "is out of range"))
        };
        let size = |v: Option<i64>, name: &str| -> Result<u32, ToolError> {
            let v = v.ok_or_else(|| ToolError::bad_argument(name, "is required for this action"))?;
            u32::try_from(v)
                .ok()
                .filter(|v| (1..=32_767).contains(v))
                .ok_or_else(|| ToolError::bad_argument(name, "must be 1 to 32767"))
        };
        let op = match req.action {
            WindowAction::Move => WindowOp::Move(Point::new(coord(req.x, "x")?, coord(req.y, "y")?)),
            WindowAction::Resize => {
                WindowOp::Resize { width: size(req.width, "width")?, height: size(req.height, "height")? }
            }
            WindowAction::Minimize => WindowOp::Minimize,
            WindowAction::Maximize => WindowOp::Maximize,
            WindowAction::Restore => WindowOp::Restore,
            WindowAction::Foreground => WindowOp::Foreground,
        };
        self.actuate(stop, |b| b.window_op(w.id, op))?;
        let before = w.bounds;
        let (window, confirmed) = self.confirm(w.id, stop, |now| match op {
            WindowOp::Move(p) => now.bounds.is_some_and(|b| b.x == p.x && b.y == p.y),
            WindowOp::Resize { width, height } => {
                now.bounds.is_some_and(|b| b.width == width && b.height == height)
            }
            WindowOp::Minimize => now.minimized,
            WindowOp::Maximize => now.bounds != before,
            WindowOp::Restore => !now.minimized,
            WindowOp::Foreground => now.foreground,
        })?;
        Ok(WindowActionResult { window, confirmed })
    }

    /// `focus`: foreground the window, optionally click in it, and verify it has the focus.
    pub fn focus(&self, req: &FocusRequest, stop: &StopFlag) -> Result<FocusResult, ToolError> {
        let w = self.resolve(&req.selector())?;
        let click = match &req.click_at {
            Some(Endpoint::Resolved(p)) => {
                let bounds = w.geometry()?;
                Some(inside_window(&w, Point::new(p.x - bounds.x, p.y - bounds.y), "clickAt")?)
            }
            Some(e) => Some(Space::Window(w.clone()).endpoint(e, "clickAt")?),
            None => None,
        };
        self.actuate(stop, |b| b.window_op(w.id, WindowOp::Foreground))?;
        let (_, focused) = self.confirm(w.id, stop, |now| now.foreground)?;
        if let Some(p) = click {
            self.on_screen(p, "clickAt")?;
            self.actuate(stop, |b| click_at(b, p, MouseButton::Left, 1))?;
        }
        let (window, focused_after) = if click.is_some() || !focused {
            self.confirm(w.id, stop, |now| now.foreground)?
        } else {
            (self.backend.window_info(w.id)?, true)
        };
        if stop.is_set() {
            return Err(ToolError::emergency_stopped());
        }
        if !focused_after {
            return Err(ToolError::new(
                ErrorCode::Focus,
                format!(
                    "Window {} (\"{}\") did not get the keyboard focus; another window may be holding it.",
                    window.id, window.title
                ),
            ));
        }
        Ok(FocusResult { window, clicked: click })
    }
}
