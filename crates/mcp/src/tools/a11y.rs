//! The accessibility tools (`query`, `find`, `invoke`, `wait-for`, `get-text`, `clipboard`) bound to
//! [`mcec_a11y::A11yTools`]. The binary builds one instance per process over the desktop, with
//! the platform's accessibility backend and clipboard ([`super::ToolServices::a11y`]), so
//! element ids stay valid across connections and calls and this layer names no platform.

use mcec_a11y::A11yTools;
use mcec_a11y::requests::{
    ClipboardAction, ClipboardRequest, FindRequest, GetTextRequest, InvokeRequest, QueryRequest,
    WaitForRequest,
};
use mcec_desktop::requests::{Endpoint, WindowSelector};
use mcec_rules::settings::CLIPBOARD_READ;
use mcec_rules::{ErrorCode, StopFlag, ToolError};
use serde::Serialize;

use super::{Invocation, ToolOutput};
use crate::agent::Agent;

fn a11y(agent: &Agent) -> Result<&A11yTools, ToolError> {
    agent.tools.a11y.as_ref().ok_or_else(|| {
        ToolError::new(ErrorCode::NoDesktop, "No X display is connected to this mcec process.")
    })
}

/// Every element endpoint among `endpoints` replaced by its element's centre in desktop
/// pixels, all of them before the desktop tool acts (so an ambiguous or missing element
/// refuses the whole call with nothing pressed). `window` is the request's window selector.
pub(super) fn resolve_endpoints<'a>(
    agent: &Agent,
    window: &WindowSelector,
    endpoints: impl IntoIterator<Item = &'a mut Endpoint>,
    stop: &StopFlag,
) -> Result<(), ToolError> {
    for e in endpoints {
        if let Endpoint::Element(target) = e {
            let centre = a11y(agent)?.element_centre(window, target, stop)?;
            *e = Endpoint::Resolved(centre);
        }
    }
    Ok(())
}

fn json(result: impl Serialize) -> Result<ToolOutput, ToolError> {
    serde_json::to_value(result)
        .map(ToolOutput::json)
        .map_err(|e| ToolError::new(ErrorCode::Internal, format!("cannot encode the result: {e}")))
}

macro_rules! bind {
    ($request:ty, $method:ident) => {
        impl Invocation for $request {
            fn run(self: Box<Self>, agent: &Agent, stop: &StopFlag) -> Result<ToolOutput, ToolError> {
                json(a11y(agent)?.$method(&self, stop)?)
            }
        }
    };
}

bind!(QueryRequest, query);
bind!(FindRequest, find);
bind!(InvokeRequest, invoke);
bind!(WaitForRequest, wait_for);
bind!(GetTextRequest, get_text);

/// Reading is refused unless `[clipboard.read]` is on; the audit line says only the length.
impl Invocation for ClipboardRequest {
    fn run(self: Box<Self>, agent: &Agent, stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        if self.action == ClipboardAction::Get && !agent.commands().is_enabled(CLIPBOARD_READ) {
            let e = ToolError::new(
                ErrorCode::CommandDisabled,
                "Reading the clipboard is disabled in mcec.commands (`[clipboard.read]` `Enabled = true` turns it on); nothing was read.",
            );
            crate::audit::audit("clipboard", "action=get refused=clipboard.read-disabled");
            return Err(e);
        }
        let result = a11y(agent)?.clipboard(&self, stop)?;
        let action = if self.action == ClipboardAction::Get { "get" } else { "set" };
        crate::audit::audit(
            "clipboard",
            &format!("action={action} selection={} length={}", result.selection, result.length),
        );
        json(result)
    }
}
