//! `session-status`: this process's agent session record.

use mcec_rules::{StopFlag, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Invocation, ToolOutput};
use crate::agent::Agent;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionStatus {}

impl Invocation for SessionStatus {
    fn run(self: Box<Self>, agent: &Agent, _stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        let stopped = agent.stop.is_set();
        Ok(ToolOutput::json(agent.with_record(|r| r.to_json(stopped))))
    }
}
