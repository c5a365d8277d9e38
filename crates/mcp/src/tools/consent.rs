//! `request-command-access` (the agent asks the operator for more commands) and the
//! `commandAccess` map an agent gets at connect time and in `session-status`.
//!
//! The rules (what may be asked, the reason's sanitizing, grants and sticky denials) are
//! `mcec_rules::consent`; the prompt and the check that a hand clicked `Allow` are the
//! binary's [`crate::ConsentAsker`]. This file joins them and tells clients when a grant
//! changed the tool list.

use mcec_rules::consent::{self, Begin, MAX_REASON_INPUT_BYTES, Outcome};
use mcec_rules::{StopFlag, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Invocation, ToolOutput};
use crate::agent::Agent;
use crate::audit::audit;

/// Ask the operator to enable commands for this process.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestCommandAccess {
    /// Tool names, or raw kinds `send_command.chars`, `.key`, `.mouse`, `.pause`.
    #[schemars(length(min = 1, max = 8))]
    pub commands: Vec<String>,
    /// One line shown to the operator (its first 300 characters, control and bidirectional
    /// characters removed).
    #[schemars(length(max = 65536))]
    pub reason: String,
}

impl Invocation for RequestCommandAccess {
    fn run(self: Box<Self>, agent: &Agent, stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        if self.reason.len() > MAX_REASON_INPUT_BYTES {
            return Err(ToolError::bad_argument(
                "reason",
                format!("at most {MAX_REASON_INPUT_BYTES} bytes; one line is plenty"),
            ));
        }
        let requested = consent::requested_commands(&self.commands)?;
        let reason = consent::sanitize_reason(&self.reason);
        let file = agent.file_commands();
        let asked = match agent.with_consent(|book| book.begin(&requested, &file)) {
            Ok(Begin::AlreadyEnabled) => {
                return Ok(ToolOutput::json(answer(&[], &requested)));
            }
            Ok(Begin::Ask(missing)) => missing,
            Err(refusal) => return Err(refusal),
        };
        let list = asked.join(",");
        audit("consent-asked", &format!("commands={list} reason={reason:?}"));
        let outcome = match agent.consent_asker() {
            Some(asker) => asker.ask(&reason, &asked, stop),
            None => Outcome::Unavailable("this mcec has no operator window to ask in".into()),
        };
        let verdict = agent.with_consent(|book| book.finish(&outcome));
        let word = match &outcome {
            Outcome::Granted => "granted (physical click)",
            Outcome::Denied => "denied",
            Outcome::TimedOut => "timed out",
            Outcome::Unavailable(_) => "unavailable",
            Outcome::Stopped => "stopped",
        };
        audit("consent", &format!("{word}; commands={list}"));
        let granted = verdict?;
        agent.tools_changed();
        let already: Vec<String> = requested.into_iter().filter(|n| !granted.contains(n)).collect();
        Ok(ToolOutput::json(answer(&granted, &already)))
    }
}

fn answer(granted: &[String], already: &[String]) -> Value {
    json!({
        "granted": granted,
        "alreadyEnabled": already,
        "note": "Enabled for this mcec process only, until it exits; tools/list shows them now.",
    })
}

/// What this agent may call now and what it may ask for, with the one-line note.
pub(crate) fn command_access(agent: &Agent) -> Value {
    let on = agent.agent_commands_enabled() && !agent.installed_copy;
    let commands = agent.commands();
    let askable = |name: &str| !agent.with_consent(|book| book.is_denied(name));
    let (enabled_tools, requestable_tools): (Vec<&str>, Vec<&str>) =
        consent::requestable_tools().filter(|_| on).partition(|t| commands.is_enabled(t));
    let requestable_tools: Vec<&str> = requestable_tools.into_iter().filter(|t| askable(t)).collect();
    let (enabled_kinds, requestable_kinds): (Vec<String>, Vec<String>) =
        consent::requestable_raw_kinds().filter(|_| on).partition(|k| commands.is_enabled(k));
    let requestable_kinds: Vec<String> = requestable_kinds.into_iter().filter(|k| askable(k)).collect();
    json!({
        "enabledTools": enabled_tools,
        "requestableTools": requestable_tools,
        "enabledRawKinds": enabled_kinds,
        "requestableRawKinds": requestable_kinds,
        "note": consent::NOTE,
    })
}
