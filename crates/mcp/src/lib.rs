//! # mcec-mcp: the agent's front door
//!
//! Where a tool call arrives, is checked, is audited and is answered in one shape. The
//! [`server`] adapts rmcp to our [`dispatch`], which runs the contract's gate order
//! (from `mcec_rules::gates`) and wraps every answer in the envelope. [`stdio`] serves
//! `mcec mcp`; [`http`] serves the host's `POST /mcp` behind the HTTP gate.
//!
//! This is the only crate that knows JSON-RPC and MCP. It does not decide safety rules
//! (those are in `mcec-rules`), touch X11 (that is `mcec-desktop`) or the disk (that is
//! `mcec-sessions`); it calls them through [`tools::ToolServices`].

pub mod agent;
mod args;
pub mod audit;
pub mod dispatch;
pub mod http;
pub mod http_body;
pub mod http_conns;
pub mod http_wire;
pub mod server;
pub mod stdio;
pub mod tools;

pub use agent::{Agent, AgentConfig, CallObserver, ConsentAsker};
pub use server::ASK_FIRST_NOTE;
