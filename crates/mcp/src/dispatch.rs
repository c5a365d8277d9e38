//! One `tools/call`, from name and arguments to envelope, in the contract's order:
//! gates 1–5 ([`gates::admit`]), gate 6 (the tool's typed parser), gate 7
//! ([`gates::desktop_gate`]), then the tool itself. Every refusal is audited before it is
//! answered; every call gets one audit line. This is the only place that order lives.

use std::time::Instant;

use base64::Engine;
use mcec_rules::gates::{self, printable};
use mcec_rules::{ErrorCode, StopFlag, ToolError, envelope};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use crate::agent::Agent;
use crate::audit::audit;
use crate::tools::{self, Image, ToolOutput};

/// The answer to one call: the envelope plus an optional image.
#[derive(Debug)]
pub struct Answer {
    pub envelope: Value,
    pub image: Option<Image>,
}

impl Answer {
    pub fn ok(&self) -> bool {
        self.envelope["ok"] == Value::Bool(true)
    }

    /// The MCP result: an image block first where there is one, then the envelope as text
    /// (for clients older than `structuredContent`), and the envelope as `structuredContent`.
    pub fn into_call_tool_result(self) -> CallToolResult {
        let ok = self.ok();
        let mut content = Vec::with_capacity(2);
        if let Some(image) = self.image {
            content.push(ContentBlock::image(
                base64::engine::general_purpose::STANDARD.encode(image.data),
                image.mime_type,
            ));
        }
        content.push(ContentBlock::text(self.envelope.to_string()));
        let mut result = if ok { CallToolResult::success(content) } else { CallToolResult::error(content) };
        result.structured_content = Some(self.envelope);
        result
    }
}

/// Run one call to completion on the current thread (it may block on X11 or the disk).
/// `stop` is the call's own flag (see [`Agent::call_flag`]).
pub fn call(agent: &Agent, name: &str, args: Option<Map<String, Value>>, stop: &StopFlag) -> Answer {
    let started = Instant::now();
    agent.with_record(|r| r.count_call());
    let shown = printable(name);
    let outcome = admit_and_run(agent, name, args, stop);
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    match outcome {
        Ok(output) => {
            audit("call", &format!("tool={shown} ok=true ms={ms:.1}"));
            Answer {
                envelope: envelope::success(&agent.run_id, output.result, &output.warnings),
                image: output.image,
            }
        }
        Err(Failure { error, refused_before_run }) => {
            agent.with_record(|r| r.count_refusal(error.code));
            let action = if refused_before_run { "refused" } else { "call" };
            audit(
                action,
                &format!("tool={shown} ok=false code={} ms={ms:.1} detail={}", error.code, error.detail),
            );
            Answer { envelope: envelope::failure(&agent.run_id, &error), image: None }
        }
    }
}

struct Failure {
    error: ToolError,
    /// True when a gate refused; false when the tool ran and failed.
    refused_before_run: bool,
}

fn refused(error: ToolError) -> Failure {
    Failure { error, refused_before_run: true }
}

fn admit_and_run(
    agent: &Agent,
    name: &str,
    args: Option<Map<String, Value>>,
    stop: &StopFlag,
) -> Result<ToolOutput, Failure> {
    let commands = agent.commands();
    let spec = gates::admit(&agent.call_state(&commands), name).map_err(refused)?;
    let binding = tools::binding(spec.name).ok_or_else(|| {
        refused(ToolError::new(
            ErrorCode::Unavailable,
            format!("`{}` is not available in this build of mcec.", spec.name),
        ))
    })?;
    let narration = mcec_rules::narration::describe(spec.name, args.as_ref());
    let invocation = (binding.parse)(args).map_err(refused)?;
    gates::desktop_gate(spec, &agent.desktop_gate()).map_err(refused)?;
    agent.observe(spec.name, &narration);
    invocation.run(agent, stop).map_err(|error| {
        // The call's own flag stopped it while the operator's stop is clear: its client
        // cancelled it or went away. Say so, rather than claiming an emergency stop.
        let cancelled = error.code == ErrorCode::EmergencyStopped && stop.is_set() && !agent.stop.is_set();
        let error = if cancelled { ToolError::cancelled_from(&error) } else { error };
        Failure { error, refused_before_run: false }
    })
}
