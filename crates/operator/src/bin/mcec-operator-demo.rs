//! A stand-in core for the operator windows, for tests and for looking at the windows by hand.
//!
//! Usage: `mcec-operator-demo [--main-thread] [overlay] [prompt] [host]`
//!
//! It reads commands from stdin, one per line, and applies them to the shared state:
//! `acting`, `idle`, `stop REASON`, `rearm`, `open`, `refuse MESSAGE`, `narrate LINE`,
//! `door STATUS`, `quit`, and for the host's settings window: `settings` (open it),
//! `agent allow|deny|copy` (the opt-in as the core confirmed it; `copy`: inside a provisioned
//! copy), `session ID AGE SIZE STATE` (add a row; `_` for a space in SIZE and STATE), `nosessions`, `handoff` (a sample
//! handoff) and `agentmsg TEXT` (a refusal the core reported). It prints each operator event on stdout as `event <Debug>` and, at
//! the end, `exit ok` or `exit error: <why>`. Without `--main-thread` the UI runs on its own
//! thread, with it the UI runs on the main thread and stdin is read
//! on another.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::mpsc;

use mcec_operator::{
    AgentMessage, ClientHandoff, HandoffView, OperatorEvent, OperatorState, SessionRow, Surfaces, UiError,
    run_operator_ui, spawn_operator_ui_thread,
};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |name: &str| args.iter().any(|a| a == name);
    let surfaces = Surfaces { overlay: has("overlay"), prompt: has("prompt"), host_window: has("host") };
    let state = OperatorState::new();
    let (tx, rx) = mpsc::channel::<OperatorEvent>();

    std::thread::spawn(move || {
        for event in rx {
            say(&format!("event {event:?}"));
        }
    });

    let outcome = if has("--main-thread") {
        let driver = state.clone();
        std::thread::spawn(move || drive(&driver));
        run_operator_ui(state, tx, surfaces)
    } else {
        match spawn_operator_ui_thread(state.clone(), tx, surfaces) {
            Ok(handle) => {
                let driver = state.clone();
                std::thread::spawn(move || drive(&driver));
                handle.join().unwrap_or_else(|_| Err(UiError::Panicked("UI thread panicked".into())))
            }
            Err(err) => Err(err),
        }
    };
    match outcome {
        Ok(()) => {
            say("exit ok");
            ExitCode::SUCCESS
        }
        Err(err) => {
            say(&format!("exit error: {err}"));
            ExitCode::from(3)
        }
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Apply stdin commands until EOF or `quit`; EOF also quits.
fn drive(state: &OperatorState) {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let (cmd, rest) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        match cmd {
            "acting" => {
                state.set_acting(true);
            }
            "idle" => {
                state.set_acting(false);
            }
            "stop" => state.set_stopped(rest),
            "rearm" => {
                state.set_rearmed();
            }
            "open" => {
                state.open_prompt();
            }
            "refuse" => state.show_refusal(rest),
            "narrate" => state.narrate(rest),
            "door" => state.set_front_door(rest),
            "settings" => state.open_settings(),
            "agent" => state.update_agent_tab(|tab| {
                tab.pending = false;
                match rest {
                    "allow" => tab.allow_provisioning = true,
                    "deny" => tab.allow_provisioning = false,
                    _ => tab.in_session_copy = true,
                }
            }),
            "session" => {
                let f: Vec<&str> = rest.split(' ').collect();
                let row = SessionRow {
                    id: f.first().copied().unwrap_or_default().into(),
                    age: f.get(1).copied().unwrap_or_default().into(),
                    size: f.get(2).copied().unwrap_or_default().replace('_', " "),
                    running: f.get(3) == Some(&"running"),
                    state: f.get(3).copied().unwrap_or_default().replace('_', " "),
                };
                state.update_agent_tab(|tab| tab.sessions.push(row));
            }
            "nosessions" => state.update_agent_tab(|tab| tab.sessions.clear()),
            "handoff" => state.update_agent_tab(|tab| {
                tab.pending = false;
                tab.handoff = Some(sample_handoff());
            }),
            "agentmsg" => state.update_agent_tab(|tab| {
                tab.pending = false;
                tab.message = Some(AgentMessage::error(rest));
            }),
            "quit" => break,
            "" => continue,
            other => {
                say(&format!("unknown command {other}"));
                continue;
            }
        }
        say(&format!("ok {cmd}"));
    }
    state.request_quit();
}

/// A handoff with the core's client choices: the generic JSON, one client with no HTTP entry
/// and one with a note, so every shape the tab draws is there.
fn sample_handoff() -> HandoffView {
    let client = |label: &str, stdio: &str, http: Option<&str>, note: Option<&str>| ClientHandoff {
        label: label.into(),
        place: format!("where {label} reads it"),
        stdio: stdio.into(),
        http: http.map(Into::into),
        note: note.map(Into::into),
    };
    HandoffView {
        summary: "Session 0123456789ab in /tmp/sessions/0123456789ab".into(),
        clients: vec![
            client("JSON", "{\n  \"mcpServers\": {}\n}", Some("{\n  \"headers\": {}\n}"), None),
            client("Claude Desktop", "{\n  \"mcpServers\": {}\n}", None, Some("no HTTP from a file")),
            client(
                "Codex CLI",
                "[mcp_servers.x]\ncommand = \"x\"",
                Some("[mcp_servers.x]\nurl = \"u\""),
                None,
            ),
        ],
        token_hidden: false,
    }
}
