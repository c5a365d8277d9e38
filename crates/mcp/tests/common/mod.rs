//! What the front-door tests share: an `Agent` built from a few facts, and a capture of the
//! `AGENT-AUDIT:` lines written while a closure runs on the current thread.

#![allow(dead_code, reason = "each test binary uses its own part")]

use std::io::Write;
use std::sync::{Arc, Mutex};

use mcec_mcp::tools::ToolServices;
use mcec_mcp::{Agent, AgentConfig};
use mcec_rules::StopFlag;
use mcec_rules::catalog;
use mcec_rules::gates::DesktopGate;
use mcec_rules::settings::Commands;

pub const ID: &str = "0123456789ab";

/// An agent with every command enabled, over `tools`.
pub fn agent(gate: DesktopGate, tools: ToolServices) -> Agent {
    agent_with(gate, tools, |_| {})
}

/// Like [`agent`], with `edit` changing the start-up facts first.
pub fn agent_with(gate: DesktopGate, tools: ToolServices, edit: impl FnOnce(&mut AgentConfig)) -> Agent {
    let mut config = AgentConfig {
        run_id: ID.into(),
        stop: StopFlag::new(),
        installed_copy: false,
        session_copy: false,
        instructions_note: None,
        agent_commands_enabled: true,
        commands: Commands::enabling(catalog::TOOLS.iter().map(|t| t.name)),
        desktop_gate: gate,
    };
    edit(&mut config);
    Agent::new(config, tools)
}

/// The audit lines (`AGENT-AUDIT: …`, without the log prefix) written by `f` on this thread.
pub fn audited<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let sink = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || Sink(sink.clone()))
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let out = tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
    let lines = text.lines().filter_map(|l| l.find("AGENT-AUDIT: ").map(|at| l[at..].to_string())).collect();
    (out, lines)
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
