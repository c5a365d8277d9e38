//! A scripted backend that records every call, for checking the tool layer's rules (stop
//! between steps, release on every exit, nothing sent after a stop) deterministically,
//! without a display.

use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use mcec_desktop::keys::Key;
use mcec_desktop::seams::{Backend, Injector, Screens, WindowManager, WindowOp};
use mcec_desktop::{
    Captured, DesktopConfig, DesktopTools, DisplayInfo, MouseButton, Point, Rect, RgbImage, ScrollDirection,
    WindowInfo,
};
use mcec_rules::{ErrorCode, StopFlag, ToolError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Move(Point),
    Button(MouseButton, bool),
    Key(Key, bool),
    Scroll(ScrollDirection),
    Window(u64, WindowOp),
    ReleaseAll,
    /// Where the mock set the stop flag (`stop_on_move`).
    StopSet,
}

impl Call {
    /// True for what the stop path itself wants: letting go.
    pub fn is_release(&self) -> bool {
        matches!(self, Call::Button(_, false) | Call::Key(_, false) | Call::ReleaseAll)
    }
}

/// Block inside the n-th pointer move (1-based), holding whatever lock the caller holds,
/// until the test says to go on.
pub struct Pause {
    pub at_move: usize,
    /// Told when the move is reached.
    pub reached: Sender<()>,
    /// Waited on before the move returns.
    pub resume: Receiver<()>,
}

/// Hooks a test sets before calling a tool.
#[derive(Default)]
pub struct Mock {
    pub calls: Mutex<Vec<Call>>,
    /// Set this flag when the n-th pointer move (1-based) is made.
    pub stop_on_move: Mutex<Option<(usize, StopFlag)>>,
    /// Fail pressing this key.
    pub fail_key: Mutex<Option<Key>>,
    /// Pause inside a pointer move.
    pub pause: Mutex<Option<Pause>>,
    /// The top-level windows `list_windows` and `window_info` report.
    pub windows: Mutex<Vec<WindowInfo>>,
}

/// The tool layer over a fresh scripted backend.
pub fn mock_tools() -> (Arc<Mock>, DesktopTools) {
    let mock = Arc::new(Mock::default());
    let dir = std::env::temp_dir().join("mcec-desktop-mock-unused");
    let tools = DesktopTools::new(mock.clone(), DesktopConfig { artifact_dir: dir });
    (mock, tools)
}

impl Mock {
    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    pub fn log(&self, c: Call) {
        self.calls.lock().unwrap().push(c);
    }
}

impl Screens for Mock {
    fn displays(&self) -> Result<Vec<DisplayInfo>, ToolError> {
        Ok(vec![DisplayInfo {
            index: 0,
            name: "mock".into(),
            primary: true,
            bounds: Rect::new(0, 0, 1280, 800),
            dpi: mcec_desktop::types::Dpi::assumed(),
        }])
    }

    fn capture(&self, area: Rect) -> Result<Captured, ToolError> {
        let image = RgbImage {
            width: area.width,
            height: area.height,
            pixels: vec![0; area.width as usize * area.height as usize * 3],
        };
        Ok(Captured { image, left_out: None, via: mcec_desktop::CaptureVia::Getimage })
    }
}

impl WindowManager for Mock {
    fn list_windows(&self) -> Result<Vec<WindowInfo>, ToolError> {
        Ok(self.windows.lock().unwrap().clone())
    }

    fn window_info(&self, id: u64) -> Result<WindowInfo, ToolError> {
        let windows = self.windows.lock().unwrap();
        let found = windows.iter().find(|w| w.id == id).cloned();
        found.ok_or_else(|| ToolError::new(ErrorCode::WindowClosed, format!("window {id} is gone")))
    }

    fn window_op(&self, id: u64, op: WindowOp) -> Result<(), ToolError> {
        self.log(Call::Window(id, op));
        Ok(())
    }

    fn parent_process(&self, _pid: u32) -> Option<u32> {
        None
    }
}

impl Injector for Mock {
    fn pointer_move(&self, to: Point) -> Result<(), ToolError> {
        self.log(Call::Move(to));
        let moves = self.calls().iter().filter(|c| matches!(c, Call::Move(_))).count();
        if let Some((n, flag)) = &*self.stop_on_move.lock().unwrap()
            && moves == *n
        {
            flag.set();
            self.log(Call::StopSet);
        }
        let pause = {
            let mut slot = self.pause.lock().unwrap();
            if slot.as_ref().is_some_and(|p| p.at_move == moves) { slot.take() } else { None }
        };
        if let Some(p) = pause {
            p.reached.send(()).expect("the test waits for the pause");
            p.resume.recv().expect("the test resumes the pause");
        }
        Ok(())
    }

    fn pointer_position(&self) -> Result<Point, ToolError> {
        Ok(Point::new(0, 0))
    }

    fn button(&self, button: MouseButton, down: bool) -> Result<(), ToolError> {
        self.log(Call::Button(button, down));
        Ok(())
    }

    fn scroll(&self, direction: ScrollDirection) -> Result<(), ToolError> {
        self.log(Call::Scroll(direction));
        Ok(())
    }

    fn key(&self, key: Key, down: bool, _stop: &StopFlag) -> Result<(), ToolError> {
        if down && *self.fail_key.lock().unwrap() == Some(key) {
            return Err(ToolError::new(ErrorCode::Unavailable, "scripted failure"));
        }
        self.log(Call::Key(key, down));
        Ok(())
    }

    fn type_text(&self, text: &str, stop: &StopFlag) -> Result<(), ToolError> {
        for c in text.chars() {
            if stop.is_set() {
                return Err(ToolError::emergency_stopped());
            }
            self.log(Call::Key(Key::Char(c), true));
            self.log(Call::Key(Key::Char(c), false));
        }
        Ok(())
    }

    fn settle(&self) -> Result<(), ToolError> {
        Ok(())
    }

    fn release_all(&self) -> Result<(), ToolError> {
        self.log(Call::ReleaseAll);
        Ok(())
    }
}

impl Backend for Mock {
    fn display_name(&self) -> &str {
        ":mock"
    }

    fn prepare_program(&self, _program: &mut std::process::Command) {}
}
