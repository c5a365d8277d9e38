//! The desktop tools by name, for the MCP layer: their specs (name, description, input
//! schema), strict argument parsing into [`ToolRequest`] (gate 6, no desktop needed), and
//! one [`DesktopTools::run`] that answers with a JSON result and, for `capture`, the PNG.

use mcec_rules::{ErrorCode, StopFlag, ToolError};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{DesktopTools, to_json};
use crate::requests::{
    CaptureRequest, ClickRequest, DisplaysRequest, DragRequest, FocusRequest, KeyRequest, LaunchRequest,
    RecordRequest, TypeRequest, WindowRequest, WindowsRequest,
};

/// One desktop tool as `tools/list` shows it.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: Value,
    /// Whether the tool sends input or changes windows (gate 7's "actuation tool").
    pub actuation: bool,
}

/// A parsed desktop tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolRequest {
    Displays(DisplaysRequest),
    Windows(WindowsRequest),
    Capture(CaptureRequest),
    Click(ClickRequest),
    Drag(DragRequest),
    Type(TypeRequest),
    Key(KeyRequest),
    Window(WindowRequest),
    Focus(FocusRequest),
    Launch(LaunchRequest),
    Record(RecordRequest),
}

/// What a desktop tool answers: the envelope's `result`, plus an image for `capture`.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub result: Value,
    /// PNG bytes to send as an MCP image block (`image/png`), before the text block.
    pub image_png: Option<Vec<u8>>,
}

fn spec<T: JsonSchema>(name: &'static str, description: &'static str, actuation: bool) -> ToolSpec {
    let input_schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    ToolSpec { name, description, input_schema, actuation }
}

/// Every desktop tool, in a stable order.
pub fn tool_specs() -> Vec<ToolSpec> {
    vec![
        spec::<DisplaysRequest>(
            "displays",
            "List the monitors: index, name, primary flag, bounds, and the virtual desktop they span.",
            false,
        ),
        spec::<WindowsRequest>(
            "windows",
            "List top-level windows (id, title, class, pid, process, bounds, foreground), optionally filtered by title/class/process/pid, optionally waiting until a matching window appears, disappears or comes to the foreground.",
            false,
        ),
        spec::<CaptureRequest>(
            "capture",
            "Screenshot of the whole desktop, a region, or one window (selector fields), as PNG; maxWidth/scale downscale it.",
            false,
        ),
        spec::<ClickRequest>(
            "click",
            "Click a mouse button at a point: desktop pixels, or relative to a window when a selector is given.",
            true,
        ),
        spec::<DragRequest>(
            "drag",
            "Drag with the left button from `from` through optional waypoints to `to`.",
            true,
        ),
        spec::<TypeRequest>("type", "Type Unicode text into the focused window.", true),
        spec::<KeyRequest>(
            "key",
            "Press key chords such as `ctrl+s`, `Return`, `F5` or `ctrl+a Delete`.",
            true,
        ),
        spec::<WindowRequest>(
            "window",
            "Move, resize, minimise, maximise, restore or raise one window.",
            true,
        ),
        spec::<FocusRequest>(
            "focus",
            "Bring a window to the foreground (optionally clicking in it) and verify it has the keyboard focus.",
            true,
        ),
        spec::<LaunchRequest>("launch", "Start a program and wait for its first window.", true),
        spec::<RecordRequest>(
            "record",
            "Record an animated GIF of the desktop, a region or a window: start/stop in the background, or oneshot.",
            false,
        ),
    ]
}

/// Whether `name` is a desktop tool.
pub fn is_desktop_tool(name: &str) -> bool {
    matches!(
        name,
        "displays"
            | "windows"
            | "capture"
            | "click"
            | "drag"
            | "type"
            | "key"
            | "window"
            | "focus"
            | "launch"
            | "record"
    )
}

/// Strictly parse `args` as `T`; `bad-arguments` naming the offending field.
pub fn parse_args<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    let args = if args.is_null() { Value::Object(Default::default()) } else { args };
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // serde names unknown and missing fields itself; type errors need the path.
        let field = if path == "." { "arguments".to_string() } else { path };
        ToolError::bad_argument(&field, inner)
    })
}

impl ToolRequest {
    /// Parse a call to desktop tool `name`; `Ok(None)` when `name` is not a desktop tool.
    pub fn parse(name: &str, args: Value) -> Result<Option<ToolRequest>, ToolError> {
        Ok(Some(match name {
            "displays" => ToolRequest::Displays(parse_args(args)?),
            "windows" => ToolRequest::Windows(parse_args(args)?),
            "capture" => ToolRequest::Capture(parse_args(args)?),
            "click" => ToolRequest::Click(parse_args(args)?),
            "drag" => ToolRequest::Drag(parse_args(args)?),
            "type" => ToolRequest::Type(parse_args(args)?),
            "key" => ToolRequest::Key(parse_args(args)?),
            "window" => ToolRequest::Window(parse_args(args)?),
            "focus" => ToolRequest::Focus(parse_args(args)?),
            "launch" => ToolRequest::Launch(parse_args(args)?),
            "record" => ToolRequest::Record(parse_args(args)?),
            _ => return Ok(None),
        }))
    }

    pub fn name(&self) -> &'static str {
        match self {
            ToolRequest::Displays(_) => "displays",
            ToolRequest::Windows(_) => "windows",
            ToolRequest::Capture(_) => "capture",
            ToolRequest::Click(_) => "click",
            ToolRequest::Drag(_) => "drag",
            ToolRequest::Type(_) => "type",
            ToolRequest::Key(_) => "key",
            ToolRequest::Window(_) => "window",
            ToolRequest::Focus(_) => "focus",
            ToolRequest::Launch(_) => "launch",
            ToolRequest::Record(_) => "record",
        }
    }

    /// Whether this call sends input or changes windows.
    pub fn is_actuation(&self) -> bool {
        !matches!(
            self,
            ToolRequest::Displays(_)
                | ToolRequest::Windows(_)
                | ToolRequest::Capture(_)
                | ToolRequest::Record(_)
        )
    }
}

impl DesktopTools {
    /// Run a parsed desktop tool call.
    pub fn run(&self, req: &ToolRequest, stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        let plain = |result: Value| ToolOutput { result, image_png: None };
        Ok(match req {
            ToolRequest::Displays(r) => plain(to_json(&self.displays(r)?)),
            ToolRequest::Windows(r) => plain(to_json(&self.windows(r, stop)?)),
            ToolRequest::Capture(r) => {
                let shot = self.capture(r)?;
                let result = to_json(&shot);
                ToolOutput { result, image_png: Some(shot.png) }
            }
            ToolRequest::Click(r) => plain(to_json(&self.click(r, stop)?)),
            ToolRequest::Drag(r) => plain(to_json(&self.drag(r, stop)?)),
            ToolRequest::Type(r) => plain(to_json(&self.type_text(r, stop)?)),
            ToolRequest::Key(r) => plain(to_json(&self.key(r, stop)?)),
            ToolRequest::Window(r) => plain(to_json(&self.window(r, stop)?)),
            ToolRequest::Focus(r) => plain(to_json(&self.focus(r, stop)?)),
            ToolRequest::Launch(r) => plain(to_json(&self.launch(r, stop)?)),
            ToolRequest::Record(r) => plain(to_json(&self.record(r, stop)?)),
        })
    }

    /// Parse and run in one step (for callers that need no gate between the two).
    pub fn call(&self, name: &str, args: Value, stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        match ToolRequest::parse(name, args)? {
            Some(req) => self.run(&req, stop),
            None => {
                Err(ToolError::new(ErrorCode::UnknownTool, format!("There is no desktop tool `{name}`.")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_tool_has_an_object_schema_and_parses() {
        let specs = tool_specs();
        assert_eq!(specs.len(), 11);
        for s in &specs {
            assert!(is_desktop_tool(s.name), "{}", s.name);
            assert_eq!(s.input_schema["type"], "object", "{}", s.name);
        }
        assert!(matches!(ToolRequest::parse("displays", Value::Null), Ok(Some(ToolRequest::Displays(_)))));
        assert!(matches!(ToolRequest::parse("nope", json!({})), Ok(None)));
        let click = ToolRequest::parse("click", json!({"at": {"x": 1, "y": 2}})).unwrap().unwrap();
        assert!(click.is_actuation());
        assert_eq!(click.name(), "click");
    }

    #[test]
    fn bad_arguments_name_the_field() {
        let err = |tool: &str, args: Value| ToolRequest::parse(tool, args).unwrap_err();
        let e = err("click", json!({"at": {"x": "left", "y": 2}}));
        assert_eq!(e.code, ErrorCode::BadArguments);
        assert!(e.detail.starts_with("`at.x`"), "{}", e.detail);
        let e = err("click", json!({}));
        assert!(e.detail.contains("missing field `at`"), "{}", e.detail);
        let e = err("click", json!({"at": {"x": 1, "y": 2}, "buton": "left"}));
        assert!(e.detail.contains("unknown field `buton`"), "{}", e.detail);
        let e = err("window", json!({"action": "explode", "window": "x"}));
        assert!(e.detail.starts_with("`action`") && e.detail.contains("explode"), "{}", e.detail);
        let e = err("click", json!({"at": {"x": 1, "y": 2}, "count": -1}));
        assert!(e.detail.starts_with("`count`"), "{}", e.detail);
    }
}
