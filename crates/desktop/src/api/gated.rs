//! The backend as an actuation sees it once it holds the input lock: every event that presses,
//! moves or changes something asks the stop flag immediately before it is sent.
//!
//! Loops already ask the flag between their steps, but a call that waited for the lock behind
//! another one (a click queued behind a slow drag) was admitted before the stop and would
//! otherwise act after it. Putting the check here, under the lock and next to the send, makes
//! "nothing is pressed after the stop engages" hold for every actuation, present and future,
//! without each tool remembering to check. Releases always pass: letting go is what the stop
//! wants. A backend that waits between this check and the press (X11, before a keymap change)
//! is handed the flag and asks it again after its wait.

use mcec_rules::{StopFlag, ToolError};

use super::stopped_after;
use crate::keys::Key;
use crate::seams::{Backend, Injector, Screens, WindowManager, WindowOp};
use crate::types::{
    Captured, CursorImage, DisplayInfo, MouseButton, Point, Rect, ScrollDirection, WindowInfo,
};

/// `inner`, with every press, move and window change refused once `stop` is set.
pub(super) struct StopGated<'a> {
    pub(super) inner: &'a dyn Backend,
    pub(super) stop: &'a StopFlag,
}

impl StopGated<'_> {
    fn check(&self) -> Result<(), ToolError> {
        if self.stop.is_set() {
            return Err(stopped_after("Nothing more was sent once it engaged."));
        }
        Ok(())
    }
}

impl Screens for StopGated<'_> {
    fn displays(&self) -> Result<Vec<DisplayInfo>, ToolError> {
        self.inner.displays()
    }

    fn capture(&self, area: Rect) -> Result<Captured, ToolError> {
        self.inner.capture(area)
    }

    fn cursor(&self) -> Result<Option<CursorImage>, ToolError> {
        self.inner.cursor()
    }
}

impl WindowManager for StopGated<'_> {
    fn list_windows(&self) -> Result<Vec<WindowInfo>, ToolError> {
        self.inner.list_windows()
    }

    fn window_info(&self, id: u64) -> Result<WindowInfo, ToolError> {
        self.inner.window_info(id)
    }

    fn window_op(&self, id: u64, op: WindowOp) -> Result<(), ToolError> {
        self.check()?;
        self.inner.window_op(id, op)
    }

    fn parent_process(&self, pid: u32) -> Option<u32> {
        self.inner.parent_process(pid)
    }
}

impl Injector for StopGated<'_> {
    fn pointer_move(&self, to: Point) -> Result<(), ToolError> {
        self.check()?;
        self.inner.pointer_move(to)
    }

    fn pointer_position(&self) -> Result<Point, ToolError> {
        self.inner.pointer_position()
    }

    fn button(&self, button: MouseButton, down: bool) -> Result<(), ToolError> {
        if down {
            self.check()?;
        }
        self.inner.button(button, down)
    }

    fn scroll(&self, direction: ScrollDirection) -> Result<(), ToolError> {
        self.check()?;
        self.inner.scroll(direction)
    }

    fn key(&self, key: Key, down: bool, stop: &StopFlag) -> Result<(), ToolError> {
        if down {
            self.check()?;
        }
        self.inner.key(key, down, stop)
    }

    fn type_text(&self, text: &str, stop: &StopFlag) -> Result<(), ToolError> {
        self.check()?;
        self.inner.type_text(text, stop)
    }

    fn settle(&self) -> Result<(), ToolError> {
        self.inner.settle()
    }

    fn release_all(&self) -> Result<(), ToolError> {
        self.inner.release_all()
    }
}

impl Backend for StopGated<'_> {
    fn display_name(&self) -> &str {
        self.inner.display_name()
    }

    fn prepare_program(&self, program: &mut std::process::Command) {
        self.inner.prepare_program(program);
    }
}
