//! The desktop tools: each typed request from `mcec-desktop` bound to its method on
//! [`DesktopTools`]. The request types carry the schemas; the tool layer there carries the
//! policy (selectors, caps, input lock, stop-flag checks); this file only connects them.

use std::sync::Arc;

use mcec_desktop::DesktopTools;
use mcec_desktop::requests::{
    CaptureRequest, ClickRequest, DisplaysRequest, DragRequest, FocusRequest, KeyRequest, LaunchRequest,
    MouseRequest, RecordRequest, ScrollRequest, SendCommandRequest, TypeRequest, WaitRequest, WindowRequest,
    WindowsRequest,
};
use mcec_rules::command_lang::check_enabled;
use mcec_rules::{ErrorCode, StopFlag, ToolError};
use serde::Serialize;

use super::{Invocation, ToolOutput};
use crate::agent::Agent;

fn desktop(agent: &Agent) -> Result<&Arc<DesktopTools>, ToolError> {
    agent.tools.desktop.as_ref().ok_or_else(|| {
        ToolError::new(ErrorCode::NoDesktop, "No X display is connected to this mcec process.")
    })
}

fn json(result: impl Serialize) -> Result<ToolOutput, ToolError> {
    serde_json::to_value(result)
        .map(ToolOutput::json)
        .map_err(|e| ToolError::new(ErrorCode::Internal, format!("cannot encode the result: {e}")))
}

/// Binds a request type to a `DesktopTools` call: `bind!(Request, |desktop, request, stop| call)`.
macro_rules! bind {
    ($request:ty, |$d:ident, $r:ident, $stop:ident| $call:expr) => {
        impl Invocation for $request {
            fn run(self: Box<Self>, agent: &Agent, stop: &StopFlag) -> Result<ToolOutput, ToolError> {
                let $d = desktop(agent)?;
                let $r = &*self;
                let $stop = stop;
                json($call?)
            }
        }
    };
}

bind!(DisplaysRequest, |d, r, _stop| d.displays(r));
bind!(WindowsRequest, |d, r, stop| d.windows(r, stop));
bind!(ScrollRequest, |d, r, stop| d.scroll(r, stop));
bind!(MouseRequest, |d, r, stop| d.mouse(r, stop));
bind!(WaitRequest, |d, r, stop| d.wait(r, stop));
bind!(TypeRequest, |d, r, stop| d.type_text(r, stop));
bind!(KeyRequest, |d, r, stop| d.key(r, stop));
bind!(WindowRequest, |d, r, stop| d.window(r, stop));
bind!(LaunchRequest, |d, r, stop| d.launch(r, stop));
bind!(RecordRequest, |d, r, stop| d.record(r, stop));

/// `click`, `drag` and `focus` take element endpoints where they take points: resolved to
/// desktop pixels by the accessibility tools first, then the desktop tool runs as for a point.
impl Invocation for ClickRequest {
    fn run(mut self: Box<Self>, agent: &Agent, stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        let d = desktop(agent)?;
        super::a11y::resolve_endpoints(agent, &self.selector(), [&mut self.at], stop)?;
        json(d.click(&self, stop)?)
    }
}

impl Invocation for DragRequest {
    fn run(mut self: Box<Self>, agent: &Agent, stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        let d = desktop(agent)?;
        let window = self.selector();
        super::a11y::resolve_endpoints(agent, &window, [&mut self.from, &mut self.to], stop)?;
        json(d.drag(&self, stop)?)
    }
}

impl Invocation for FocusRequest {
    fn run(mut self: Box<Self>, agent: &Agent, stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        let d = desktop(agent)?;
        let window = self.selector();
        super::a11y::resolve_endpoints(agent, &window, self.click_at.as_mut(), stop)?;
        json(d.focus(&self, stop)?)
    }
}

impl Invocation for CaptureRequest {
    fn run(self: Box<Self>, agent: &Agent, _stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        let mut capture = desktop(agent)?.capture(&self)?;
        let data = std::mem::take(&mut capture.data);
        let mime_type = capture.mime_type;
        let mut output = json(capture)?;
        output.image = Some(super::Image { data, mime_type });
        Ok(output)
    }
}

/// Each raw command kind has its own switch in `mcec.commands`; a line using a disabled kind
/// is refused whole, before anything runs.
impl Invocation for SendCommandRequest {
    fn run(self: Box<Self>, agent: &Agent, stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        check_enabled(self.command.commands(), &agent.commands())?;
        json(desktop(agent)?.send_command(&self, stop)?)
    }
}
