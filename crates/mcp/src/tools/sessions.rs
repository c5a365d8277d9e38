//! `provision-session` and `end-session`: thin bindings over `mcec-sessions`. Their own
//! gates live here: provisioning needs the operator's opt-in in *this* copy; teardown is
//! never behind it (teardown must always be possible) but needs the session's token.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mcec_rules::own_display::{OwnDisplaySize, SessionDisplay};
use mcec_rules::{ErrorCode, StopFlag, ToolError, catalog};
use mcec_sessions::provision::{ProvisionRequest, provision};
use mcec_sessions::teardown::end_session;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Invocation, ToolOutput};
use crate::agent::Agent;

/// What provisioning needs from the running copy.
#[derive(Debug, Clone)]
pub struct SessionServices {
    pub sessions_root: PathBuf,
    /// The running executable, copied into each session.
    pub source_exe: PathBuf,
    /// `AllowSessionProvisioning` of this copy (always false inside a session copy).
    /// Shared with the operator's Agent tab, which flips it when the operator opts in or out,
    /// so the change applies without a restart.
    pub allow_provisioning: Arc<AtomicBool>,
    /// The operator's `EmergencyStopHotkey`, carried into each session.
    pub operator_hotkey: String,
    /// The operator's `OwnDisplaySessionsMax`.
    pub own_display_sessions_max: u32,
    /// The operator's `SessionDisplay`: what a session that asks for no `ownDisplay` gets.
    pub session_display: SessionDisplay,
}

/// Create a session copy of mcec for this agent.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProvisionSession {
    /// The copy's HTTP front door; `false`: stdio only.
    #[schemars(extend("default" = true))]
    mcp_server: Option<bool>,
    /// Tools to enable (default: every tool but `launch`, which is never provisioned).
    commands: Option<Vec<String>>,
    /// Give the session an X display of its own of this size (a window on the operator's
    /// display, or headless when there is none): its tools act only there, and the operator's
    /// stop still stops it. Absent: the operator's display (unless the operator made own
    /// displays the rule, `SessionDisplay = "own"`: then one of 1280x800).
    own_display: Option<OwnDisplayRequest>,
}

/// The size of a session's own display.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OwnDisplayRequest {
    /// Pixels, 320..=7680.
    #[schemars(range(min = 320, max = 7680), extend("default" = 1280))]
    width: Option<u32>,
    /// Pixels, 200..=4320.
    #[schemars(range(min = 200, max = 4320), extend("default" = 800))]
    height: Option<u32>,
}

impl OwnDisplayRequest {
    fn size(&self) -> Result<OwnDisplaySize, ToolError> {
        let default = OwnDisplaySize::default();
        OwnDisplaySize::new(self.width.unwrap_or(default.width), self.height.unwrap_or(default.height))
            .map_err(|problem| ToolError::bad_argument("ownDisplay", problem))
    }
}

/// Delete a session copy (stop its process first).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EndSession {
    /// From the handoff: 12 lowercase hex characters.
    session_id: String,
    /// From the handoff.
    token: String,
}

fn services(agent: &Agent) -> Result<&SessionServices, ToolError> {
    agent.tools.sessions.as_ref().ok_or_else(|| {
        ToolError::new(ErrorCode::Unavailable, "Session provisioning is not available in this process.")
    })
}

impl Invocation for ProvisionSession {
    fn run(self: Box<Self>, agent: &Agent, _stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        let services = services(agent)?;
        if !services.allow_provisioning.load(Ordering::SeqCst) {
            return Err(ToolError::new(
                ErrorCode::ProvisioningNotAuthorized,
                "The operator has not allowed agents to provision sessions on this machine \
                 (AllowSessionProvisioning is off). Ask the operator to opt in; do not retry until then.",
            ));
        }
        let asked = self.own_display.as_ref().map(OwnDisplayRequest::size).transpose()?;
        let own_display = services.session_display.own_display(asked);
        let request = ProvisionRequest {
            sessions_root: services.sessions_root.clone(),
            source_exe: services.source_exe.clone(),
            mcp_server: self.mcp_server.unwrap_or(true),
            commands: self.commands,
            all_tool_names: catalog::TOOLS.iter().map(|t| t.name.to_string()).collect(),
            operator_hotkey: services.operator_hotkey.clone(),
            requested_by: "agent",
            own_display,
            own_display_sessions_max: services.own_display_sessions_max,
        };
        let handoff = provision(request).map_err(|e| e.to_tool_error())?;
        let warnings = handoff.warnings.clone();
        let result = serde_json::to_value(&handoff)
            .map_err(|e| ToolError::new(ErrorCode::Internal, format!("cannot encode the handoff: {e}")))?;
        Ok(ToolOutput { result, image: None, warnings })
    }
}

impl Invocation for EndSession {
    fn run(self: Box<Self>, agent: &Agent, _stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        let services = services(agent)?;
        let outcome = end_session(&services.sessions_root, &self.session_id, &self.token)
            .map_err(|e| e.to_tool_error())?;
        let result = serde_json::to_value(&outcome)
            .map_err(|e| ToolError::new(ErrorCode::Internal, format!("cannot encode the outcome: {e}")))?;
        Ok(ToolOutput::json(result))
    }
}
