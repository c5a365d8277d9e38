//! The tool table: for each tool name, its input schema (derived with schemars from the
//! typed argument struct, cleaned by [`schema::input_schema`]) and a parser that turns JSON arguments into an [`Invocation`].
//! Dispatch owns the order (gates, parse, desktop gate, run); this module owns only the
//! "what" of each tool.

mod a11y;
mod consent;
mod desktop;
pub mod schema;
mod sessions;
mod status;

pub use sessions::SessionServices;

use std::collections::HashMap;
use std::sync::LazyLock;

use mcec_rules::{StopFlag, ToolError};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::agent::Agent;

/// What a tool produced: the envelope's `result`, an optional image for an image block, and
/// warnings for the envelope.
#[derive(Debug, Default)]
pub struct ToolOutput {
    pub result: Value,
    pub image: Option<Image>,
    pub warnings: Vec<String>,
}

/// An encoded image and its MIME type (`image/png`, `image/jpeg`).
#[derive(Debug)]
pub struct Image {
    pub data: Vec<u8>,
    pub mime_type: &'static str,
}

impl ToolOutput {
    pub fn json(result: Value) -> Self {
        ToolOutput { result, ..Default::default() }
    }
}

/// A tool call whose arguments parsed; running it may block (X11 round trips, files).
/// `stop` is this call's own flag: set by the emergency stop, by the client's cancel, or by
/// the process shutting down; every abortable step asks it.
pub trait Invocation: Send + 'static {
    fn run(self: Box<Self>, agent: &Agent, stop: &StopFlag) -> Result<ToolOutput, ToolError>;
}

/// Services the tools call into. Filled in by the binary; `None` where a service is not
/// part of this process (e.g. no desktop backend).
#[derive(Default)]
pub struct ToolServices {
    pub sessions: Option<SessionServices>,
    /// The desktop backend, when a display was reachable at start.
    pub desktop: Option<std::sync::Arc<mcec_desktop::DesktopTools>>,
    /// The accessibility tools over that desktop, with the platform's accessibility backend
    /// and clipboard, chosen by the binary; `None` without a desktop.
    pub a11y: Option<mcec_a11y::A11yTools>,
}

type Parser = fn(Option<Map<String, Value>>) -> Result<Box<dyn Invocation>, ToolError>;

pub struct Binding {
    pub schema: JsonObject,
    pub parse: Parser,
}

fn bind<T: DeserializeOwned + JsonSchema + Invocation>() -> Binding {
    fn parse<T: DeserializeOwned + Invocation>(
        args: Option<Map<String, Value>>,
    ) -> Result<Box<dyn Invocation>, ToolError> {
        Ok(Box::new(crate::args::parse::<T>(args)?))
    }
    let schema = schema::input_schema(serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default());
    Binding { schema, parse: parse::<T> }
}

static BINDINGS: LazyLock<HashMap<&'static str, Binding>> = LazyLock::new(|| {
    use mcec_desktop::requests;
    use mcec_rules::catalog::{END_SESSION, PROVISION_SESSION, REQUEST_COMMAND_ACCESS, SESSION_STATUS};
    HashMap::from([
        (SESSION_STATUS, bind::<status::SessionStatus>()),
        (PROVISION_SESSION, bind::<sessions::ProvisionSession>()),
        (END_SESSION, bind::<sessions::EndSession>()),
        ("displays", bind::<requests::DisplaysRequest>()),
        ("windows", bind::<requests::WindowsRequest>()),
        ("capture", bind::<requests::CaptureRequest>()),
        ("click", bind::<requests::ClickRequest>()),
        ("drag", bind::<requests::DragRequest>()),
        ("scroll", bind::<requests::ScrollRequest>()),
        ("mouse", bind::<requests::MouseRequest>()),
        ("wait", bind::<requests::WaitRequest>()),
        ("type", bind::<requests::TypeRequest>()),
        ("key", bind::<requests::KeyRequest>()),
        ("window", bind::<requests::WindowRequest>()),
        ("focus", bind::<requests::FocusRequest>()),
        ("launch", bind::<requests::LaunchRequest>()),
        ("record", bind::<requests::RecordRequest>()),
        ("send_command", bind::<requests::SendCommandRequest>()),
        (REQUEST_COMMAND_ACCESS, bind::<consent::RequestCommandAccess>()),
        ("query", bind::<mcec_a11y::requests::QueryRequest>()),
        ("find", bind::<mcec_a11y::requests::FindRequest>()),
        ("invoke", bind::<mcec_a11y::requests::InvokeRequest>()),
        ("wait-for", bind::<mcec_a11y::requests::WaitForRequest>()),
        ("get-text", bind::<mcec_a11y::requests::GetTextRequest>()),
        ("clipboard", bind::<mcec_a11y::requests::ClipboardRequest>()),
    ])
});

/// The `commandAccess` map of `initialize`'s instructions and `session-status`.
pub fn command_access(agent: &Agent) -> Value {
    consent::command_access(agent)
}

/// The binding for a catalogue tool, if this build has one.
pub fn binding(name: &str) -> Option<&'static Binding> {
    BINDINGS.get(name)
}
