//! `send_command`: a parsed raw command line run through the process's one bounded queue.
//!
//! Every command of the line is checked first (points on a screen, key names, text), then
//! the line is admitted to the queue all or nothing, then it runs under the input lock with
//! the same helpers the typed tools use. The stop flag is asked before every command; on a
//! stop the rest of the line is dropped and the answer says how many ran.

use std::sync::Mutex;
use std::time::Duration;

use mcec_rules::command_lang::{RawButton, RawCommand, RawScroll};
use mcec_rules::{ErrorCode, StopFlag, ToolError, progress};
use serde::Serialize;

use super::act::{check_text, click_at, hold, press_chords, walk_drag};
use super::{DesktopTools, stopped_after};
use crate::keys::{Chord, parse_keys};
use crate::requests::SendCommandRequest;
use crate::seams::Backend;
use crate::types::{MouseButton, Point, ScrollDirection};

/// Commands admitted and not yet run, across every call of this process.
pub const QUEUE_CAPACITY: usize = 200;
/// The most commands one line may hold.
pub const MAX_PER_CALL: usize = 50;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SendCommandResult {
    /// Commands run, in order.
    pub ran: usize,
}

/// The bounded queue: only a count, since the commands of each call stay with that call.
#[derive(Debug, Default)]
pub(crate) struct RawQueue {
    pending: Mutex<usize>,
}

impl RawQueue {
    fn pending(&self) -> std::sync::MutexGuard<'_, usize> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Admit `n` commands, all or nothing.
    fn admit(&self, n: usize) -> Result<Ticket<'_>, ToolError> {
        if n > MAX_PER_CALL {
            return Err(too_many(n));
        }
        let mut pending = self.pending();
        if *pending + n > QUEUE_CAPACITY {
            return Err(ToolError::new(
                ErrorCode::QueueFull,
                format!(
                    "The command queue holds {} of {QUEUE_CAPACITY} commands; these {n} do not fit. Nothing ran; try again when earlier calls have finished.",
                    *pending
                ),
            ));
        }
        *pending += n;
        Ok(Ticket { queue: self, left: n })
    }
}

fn too_many(n: usize) -> ToolError {
    ToolError::new(
        ErrorCode::QueueFull,
        format!(
            "A line may hold at most {MAX_PER_CALL} commands; this one holds {n}. Nothing ran; split it into several calls."
        ),
    )
}

/// A call's place in the queue; whatever it did not run leaves the queue when it is dropped.
struct Ticket<'a> {
    queue: &'a RawQueue,
    left: usize,
}

impl Ticket<'_> {
    fn ran_one(&mut self) {
        if self.left > 0 {
            self.left -= 1;
            *self.queue.pending() -= 1;
        }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let mut pending = self.queue.pending();
        *pending = pending.saturating_sub(self.left);
    }
}

/// A command checked and ready to run.
enum Step<'a> {
    Type(&'a str),
    Keys(Vec<Chord>),
    Move(Point),
    Click(Point, MouseButton),
    Drag(Vec<Point>),
    Down(Point, MouseButton),
    Up(Point, MouseButton),
    Scroll(Point, ScrollDirection, u32),
    Pause(u64),
}

fn button_of(raw: RawButton) -> MouseButton {
    match raw {
        RawButton::Left => MouseButton::Left,
        RawButton::Right => MouseButton::Right,
        RawButton::Middle => MouseButton::Middle,
    }
}

/// Put "command i" in front of a `bad-arguments` detail about `command`.
fn in_command(i: usize, e: ToolError) -> ToolError {
    if e.code != ErrorCode::BadArguments {
        return e;
    }
    let problem = e.detail.strip_prefix("`command`: ").unwrap_or(&e.detail);
    ToolError::bad_argument("command", format!("command {i}: {problem}"))
}

impl DesktopTools {
    /// `send_command`. Which kinds `mcec.commands` enables is the caller's check
    /// (`mcec_rules::command_lang::check_enabled`), made before this is called.
    pub fn send_command(
        &self,
        req: &SendCommandRequest,
        stop: &StopFlag,
    ) -> Result<SendCommandResult, ToolError> {
        let commands = req.command.commands();
        let total = commands.len();
        if total > MAX_PER_CALL {
            return Err(too_many(total));
        }
        let steps = commands
            .iter()
            .enumerate()
            .map(|(i, c)| self.check_raw(c).map_err(|e| in_command(i + 1, e)))
            .collect::<Result<Vec<_>, _>>()?;
        let paused: u64 = steps.iter().map(|s| if let Step::Pause(ms) = s { *ms } else { 0 }).sum();
        if paused > super::MAX_CALL_MS {
            let why =
                format!("pauses {paused} ms in all; one line may pause at most {} ms", super::MAX_CALL_MS);
            return Err(ToolError::bad_argument("command", why));
        }
        let mut ticket = self.raw_queue.admit(total)?;
        if stop.is_set() {
            return Err(stopped_after(format!("Ran 0 of {total} commands.")));
        }
        self.actuate(stop, |b| {
            for (i, step) in steps.iter().enumerate() {
                let stopped = || {
                    stopped_after(format!(
                        "Ran {i} of {total} commands; the rest were dropped and any key or button held was released."
                    ))
                };
                if stop.is_set() {
                    return Err(stopped());
                }
                match perform(b, step, stop) {
                    Ok(()) => {
                        ticket.ran_one();
                        match step {
                            Step::Down(_, button) => {
                                self.held.pressed(*button, self.backend.clone(), self.input_lock.clone(), self.hold_limit)
                            }
                            Step::Up(_, button) => {
                                self.held.let_go(*button);
                            }
                            _ => {}
                        }
                        progress::report(i as u64 + 1, total as u64, "commands");
                    }
                    Err(e) if e.code == ErrorCode::EmergencyStopped => return Err(stopped()),
                    Err(e) => {
                        return Err(ToolError::new(
                            e.code,
                            format!("Command {} failed after {i} ran: {}", i + 1, e.detail),
                        ));
                    }
                }
            }
            Ok(())
        })?;
        Ok(SendCommandResult { ran: total })
    }

    /// Check one command the way its typed tool would; nothing is pressed here.
    fn check_raw<'a>(&self, command: &'a RawCommand) -> Result<Step<'a>, ToolError> {
        let point = |x: i32, y: i32| -> Result<Point, ToolError> {
            let p = Point::new(x, y);
            self.on_screen(p, "command")?;
            Ok(p)
        };
        Ok(match command {
            RawCommand::Chars(text) => {
                check_text(text, "command")?;
                Step::Type(text)
            }
            RawCommand::Key(spec) => Step::Keys(
                parse_keys(spec).map_err(|e| ToolError::bad_argument("command", format!("key: {e}")))?,
            ),
            RawCommand::MouseMove { x, y } => Step::Move(point(*x, *y)?),
            RawCommand::MouseClick { x, y, button } => Step::Click(point(*x, *y)?, button_of(*button)),
            RawCommand::MouseDown { x, y, button } => Step::Down(point(*x, *y)?, button_of(*button)),
            RawCommand::MouseUp { x, y, button } => Step::Up(point(*x, *y)?, button_of(*button)),
            RawCommand::MouseScroll { x, y, direction, notches } => {
                let direction = match direction {
                    RawScroll::Up => ScrollDirection::Up,
                    RawScroll::Down => ScrollDirection::Down,
                    RawScroll::Left => ScrollDirection::Left,
                    RawScroll::Right => ScrollDirection::Right,
                };
                Step::Scroll(point(*x, *y)?, direction, *notches)
            }
            RawCommand::MouseDrag { from, to } => Step::Drag(self.drag_points(
                Point::new(from.0, from.1),
                &[],
                Point::new(to.0, to.1),
                ["command", "command", "command"],
            )?),
            RawCommand::Pause(ms) => Step::Pause(*ms),
        })
    }
}

/// Run one checked command; the input lock is held by the caller.
fn perform(b: &dyn Backend, step: &Step<'_>, stop: &StopFlag) -> Result<(), ToolError> {
    match step {
        Step::Type(text) => b.type_text(text, stop),
        Step::Keys(chords) => press_chords(b, chords, 0, stop),
        Step::Move(p) => b.pointer_move(*p).and_then(|_| b.settle()),
        Step::Click(p, button) => click_at(b, *p, *button, 1),
        Step::Drag(points) => walk_drag(b, points, Duration::ZERO, stop, MouseButton::Left),
        Step::Down(p, button) => {
            b.pointer_move(*p)?;
            b.settle()?;
            b.button(*button, true).and_then(|_| b.settle())
        }
        Step::Up(p, button) => {
            b.pointer_move(*p)?;
            b.settle()?;
            b.button(*button, false).and_then(|_| b.settle())
        }
        Step::Scroll(p, direction, notches) => {
            b.pointer_move(*p)?;
            b.settle()?;
            for _ in 0..*notches {
                b.scroll(*direction)?;
            }
            b.settle()
        }
        Step::Pause(ms) => hold(*ms, stop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_admits_all_or_nothing_and_frees_what_did_not_run() {
        let q = RawQueue::default();
        assert_eq!(q.admit(MAX_PER_CALL + 1).err().map(|e| e.code), Some(ErrorCode::QueueFull));
        assert_eq!(*q.pending(), 0);
        let a = q.admit(50).unwrap();
        let b = q.admit(50).unwrap();
        let mut c = q.admit(50).unwrap();
        let d = q.admit(50).unwrap();
        assert_eq!(*q.pending(), 200);
        let e = q.admit(1).err().expect("full");
        assert_eq!(e.code, ErrorCode::QueueFull);
        assert!(e.detail.contains("200 of 200") && e.detail.contains("Nothing ran"), "{}", e.detail);
        c.ran_one();
        assert_eq!(*q.pending(), 199);
        assert!(q.admit(2).is_err());
        let one = q.admit(1).unwrap();
        drop((a, b, c, d, one));
        assert_eq!(*q.pending(), 0);
    }
}
