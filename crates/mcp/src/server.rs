//! The rmcp [`ServerHandler`]: `initialize` (name, version, instructions), `tools/list`
//! and `tools/call`. `ping` and notifications are rmcp's defaults. Tool calls go straight
//! to [`crate::dispatch`], so rmcp's own unknown-tool and argument errors never answer
//! first. Each call gets its own stop flag, set when the client cancels the request
//! (`notifications/cancelled`) or abandons it (the HTTP connection closes). A call whose
//! request carries a `progressToken` gets `notifications/progress` every
//! [`PROGRESS_EVERY`] while it runs, so a client's request timeout does not cut a long wait.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcec_rules::StopFlag;
use mcec_rules::catalog::{self, ToolSpec};
use mcec_rules::gates;
use mcec_rules::progress::Progress;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::agent::Agent;
use crate::dispatch;
use crate::tools;

/// What every agent is told at connect time.
pub const INSTRUCTIONS: &str = "mcec lets you see and drive this Linux desktop while its operator stays in control. \
Every tools/call answers with one JSON envelope: {ok, runId, result | error{code, category, detail}, warnings?}. \
If error.code is `emergency-stopped`, the operator has pressed the emergency stop: stop what you are doing, tell the \
user, and do not retry or work around it; only the operator can re-arm it, at the machine. `bootstrap-only` means \
this is the operator's installed copy: call provision-session to get a session copy and drive that. Otherwise \
read error.detail: it says what to do next. Window selectors (`window`, `process`, `className`) match in any case \
and never pick \"the first\" of several matches. \
`commandAccess` below lists the commands enabled now and those you may ask the operator for with \
request-command-access (session-status carries it too; notifications/tools/list_changed says when it changes).";

/// Said first when the copy runs with no settings file ("ask" mode): nothing is enabled yet.
pub const ASK_FIRST_NOTE: &str = "Nothing is enabled yet: this mcec runs without a settings file, so ask first. \
Before using any tool, call request-command-access once with every command you need (for example capture and click) \
and a one-line reason; the operator allows it with a click in a local prompt, for this process only.";

/// What an agent is told by an installed copy, which serves only the provisioning tools.
pub const INSTALLED_INSTRUCTIONS: &str = "This is the operator's installed copy of mcec, which is bootstrap-only: \
it never drives the desktop itself and lists only provision-session and end-session. Call provision-session (the \
operator must have enabled AllowSessionProvisioning) to get a session copy of mcec with its own directory and \
token, start that copy as the handoff says, and drive the desktop through it; call end-session with the handoff's \
sessionId and token when you are done. Every tools/call answers with one JSON envelope: {ok, runId, result | \
error{code, category, detail}}; read error.detail, it says what to do next. If error.code is `emergency-stopped`, the \
operator has pressed the emergency stop: stop, tell the user, and do not retry.";

/// The protocol versions mcec answers: those the e2e suite initializes with
/// (tests/e2e/test_mcp_conventions.py). A newer client is answered with the newest of these.
pub const PROTOCOL_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2024_11_05,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
];

/// One catalogue entry as `tools/list` shows it: title, annotations, input schema and the
/// envelope as output schema.
fn listed(spec: &ToolSpec, input_schema: &rmcp::model::JsonObject) -> Tool {
    let hints = spec.hints;
    let annotations = ToolAnnotations::new()
        .read_only(hints.read_only)
        .destructive(hints.destructive)
        .idempotent(hints.idempotent)
        .open_world(hints.open_world);
    Tool::new(spec.name, spec.description, input_schema.clone())
        .with_title(spec.title)
        .with_annotations(annotations)
        .with_raw_output_schema(tools::schema::ENVELOPE.clone())
}

/// How often a running call tells a client that asked for progress that it is still going.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Tell the client the call is still running: `progress` is the milliseconds elapsed (it
/// only grows, whatever the tool is doing); the message says how far the tool got, when it
/// reported a step (`mcec_rules::progress`).
async fn report_progress(
    context: &RequestContext<RoleServer>,
    token: &ProgressToken,
    tool: &str,
    started: Instant,
    progress: &Progress,
) {
    let elapsed = started.elapsed();
    let message = match progress.latest() {
        Some(step) => format!(
            "{tool}: {} of {} {} after {:.1} s",
            step.done,
            step.total,
            step.unit,
            elapsed.as_secs_f64()
        ),
        None => format!("{tool}: running for {:.1} s", elapsed.as_secs_f64()),
    };
    let param =
        ProgressNotificationParam::new(token.clone(), elapsed.as_millis() as f64).with_message(message);
    if let Err(e) = context.peer.notify_progress(param).await {
        tracing::debug!("cannot send progress for {tool}: {e}");
    }
}

/// Sets a call's flag when dropped: a finished call ignores it, an abandoned one stops.
struct SetOnDrop(StopFlag);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

/// One MCP server over one shared [`Agent`]; cheap to clone (one per HTTP request).
#[derive(Clone)]
pub struct McecServer {
    agent: Arc<Agent>,
}

impl McecServer {
    pub fn new(agent: Arc<Agent>) -> Self {
        McecServer { agent }
    }

    /// The tools this process offers: only the meta tools on an installed copy; otherwise
    /// `session-status`, `request-command-access`, the commands `mcec.commands` enables or
    /// the operator granted, and the meta tools.
    pub fn listed_tools(&self) -> Vec<Tool> {
        let agent = &self.agent;
        let commands = agent.commands();
        let offer = gates::Offer {
            installed_copy: agent.installed_copy,
            session_copy: agent.session_copy,
            agent_commands_enabled: agent.agent_commands_enabled(),
            commands: &commands,
        };
        catalog::TOOLS
            .iter()
            .filter(|spec| gates::listed(spec, &offer))
            .filter_map(|spec| {
                let binding = tools::binding(spec.name)?;
                Some(listed(spec, &binding.schema))
            })
            .collect()
    }
}

impl McecServer {
    /// What `initialize` tells the agent: the installed copy's bootstrap text, or the full
    /// instructions with the `commandAccess` map; `--session`'s note (what the operator must
    /// do) first when there is one.
    fn instructions(&self) -> String {
        let base = if self.agent.installed_copy {
            INSTALLED_INSTRUCTIONS.to_string()
        } else {
            format!("{INSTRUCTIONS}\ncommandAccess: {}", tools::command_access(&self.agent))
        };
        match &self.agent.instructions_note {
            Some(note) => format!("{note} {base}"),
            None => base,
        }
    }
}

impl ServerHandler for McecServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
            .with_server_info(Implementation::new("mcec", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.agent.set_client(&request.client_info);
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.agent.add_peer(context.peer);
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(PROTOCOL_VERSIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let agent = self.agent.clone();
        let name = request.name.into_owned();
        let args = request.arguments;
        let stop = agent.call_flag();
        // The blocking task outlives this future; if the transport drops the future (the
        // HTTP client hung up), the guard stops the call's hands at their next step.
        let _hung_up = SetOnDrop(stop.clone());
        let call_stop = stop.clone();
        let tool = name.clone();
        let token = context.meta.get_progress_token();
        let progress = Progress::new();
        let call_progress = progress.clone();
        let started = Instant::now();
        let mut task = tokio::task::spawn_blocking(move || {
            call_progress.scope(|| dispatch::call(&agent, &name, args, &call_stop))
        });
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
        let joined = loop {
            tokio::select! {
                joined = &mut task => break joined,
                () = context.ct.cancelled() => {
                    stop.set();
                    break task.await;
                }
                _ = ticks.tick(), if token.is_some() => {
                    if let Some(token) = &token {
                        report_progress(&context, token, &tool, started, &progress).await;
                    }
                }
            }
        };
        let answer = joined.map_err(|e| ErrorData::internal_error(format!("tool task failed: {e}"), None))?;
        Ok(CallToolResponse::Complete(answer.into_call_tool_result()))
    }
}
