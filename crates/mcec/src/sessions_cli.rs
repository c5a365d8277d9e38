//! The operator's session commands: `mcec provision` and `mcec sessions list|rm|reap`.
//! Thin over `mcec-sessions`; what they print is for a person (or `--json` for a script).
//! The handoff printed by `mcec provision` holds the session token: it goes to stdout for
//! the operator to paste, never to the log.

use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::{Context, Result, bail};
use mcec_mcp::audit::audit;
use mcec_sessions::id::SessionId;
use mcec_sessions::list::{SessionSummary, list_sessions};
use mcec_sessions::paths::McecPaths;
use mcec_sessions::provision::{Handoff, provision};
use mcec_sessions::reaper::{REAP_AGE, reap};
use mcec_sessions::remove::{Removal, RemoveError, remove_all_sessions, remove_session_dir};
use serde_json::json;

use crate::cli::{ProvisionArgs, SessionsCommand};
use crate::client_snippets::{Client, Target};
use crate::config_cmd::print_snippet;
use crate::{config, handoff, logging};

fn setup() -> Result<McecPaths> {
    let paths =
        McecPaths::for_current_process().context("cannot work out where this copy keeps its files")?;
    if let Some(warning) = logging::init(Some(&paths.log_file())) {
        tracing::warn!("{warning}");
    }
    Ok(paths)
}

/// Run a command and turn errors into exit code 2 with one clear line.
pub fn run(command: impl FnOnce() -> Result<ExitCode>) -> ExitCode {
    command().unwrap_or_else(|e| {
        eprintln!("mcec: {e:#}");
        ExitCode::from(2)
    })
}

pub fn provision_cmd(args: ProvisionArgs) -> Result<ExitCode> {
    let paths = setup()?;
    let loaded = config::load(&paths.settings_file(), &paths.commands_file());
    if let Some(error) = &loaded.error {
        bail!("{error}");
    }
    if paths.session.is_some() {
        bail!("this is a session copy; sessions cannot provision further sessions");
    }
    if !loaded.settings.allow_session_provisioning {
        bail!(
            "provisioning is off. Set `AllowSessionProvisioning = true` in {} to allow it",
            paths.settings_file().display()
        );
    }
    let handoff = provision(
        handoff::request(
            &paths.sessions_root,
            &paths.exe,
            &loaded.settings.emergency_stop_hotkey,
            !args.no_mcp_server,
            args.commands,
        )
        .with_own_display(
            loaded.settings.session_display.own_display(args.own_display),
            loaded.settings.own_display_sessions_max,
        )
        .by("operator-cli"),
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&handoff)?);
    } else if let Some(client) = args.client {
        print_client_handoff(&handoff, client)?;
    } else {
        print_handoff(&handoff);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_handoff(h: &Handoff) {
    let text = handoff::handoff_text(h);
    for line in &text.summary {
        println!("{line}");
    }
    println!("\nMCP client config, stdio (the client starts the copy):\n{}", text.stdio_json);
    if let Some(http) = &text.http_json {
        println!("\nMCP client config, HTTP (start the copy first with `{}`):\n{http}", h.exe_path.display());
    }
}

/// The handoff as entries for one client: stdio, and HTTP when the copy serves it.
fn print_client_handoff(h: &Handoff, client: Client) -> Result<()> {
    for line in &handoff::handoff_text(h).summary {
        println!("{line}");
    }
    let name = format!("mcec-{}", h.session_id.as_str());
    let stdio = Target::Stdio {
        command: h.exe_path.display().to_string(),
        args: vec!["mcp".into()],
        env: Vec::new(),
    };
    println!("\n{} entry, stdio (the client starts the copy):", client.place().0);
    print_snippet(client, &name, &stdio)?;
    if let Some(url) = &h.mcp_endpoint {
        let http = Target::Http { url: url.clone(), token: Some(h.token.clone()) };
        println!(
            "\n{} entry, HTTP (start the copy first with `{}`):",
            client.place().0,
            h.exe_path.display()
        );
        if let Err(why) = print_snippet(client, &name, &http) {
            println!("{why}");
        }
    }
    Ok(())
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

pub fn sessions_cmd(command: SessionsCommand) -> Result<ExitCode> {
    let paths = setup()?;
    let root = &paths.sessions_root;
    match command {
        SessionsCommand::List { json } => {
            let sessions = list_sessions(root);
            if json {
                println!("{}", serde_json::to_string_pretty(&sessions)?);
            } else {
                print_list(root, &sessions);
            }
            Ok(ExitCode::SUCCESS)
        }
        SessionsCommand::Rm { ids, all, json } => remove(root, ids, all, json),
        SessionsCommand::Reap { json } => {
            let report = reap(root, REAP_AGE, SystemTime::now());
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!(
                    "removed {} stale session(s); {} running kept",
                    report.removed.len(),
                    report.skipped_running.len()
                );
                for e in &report.errors {
                    println!("error: {e}");
                }
            }
            Ok(if report.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
    }
}

fn print_list(root: &Path, sessions: &[SessionSummary]) {
    if sessions.is_empty() {
        println!("no sessions in {}", root.display());
        return;
    }
    println!("{:<14} {:>8} {:>10}  {:<11} DISPLAY", "ID", "AGE", "SIZE", "STATE");
    for s in sessions {
        let state = s.state.words();
        let display =
            s.own_display.as_deref().map_or_else(|| "yours".to_string(), |size| format!("own {size}"));
        println!(
            "{:<14} {:>8} {:>10}  {state:<11} {display}",
            s.id.as_str(),
            age(s.age_secs),
            size(s.size_bytes)
        );
    }
}

pub(crate) fn age(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 2 * 3600 => format!("{}m", s / 60),
        s => format!("{}h", s / 3600),
    }
}

pub(crate) fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 * 1024 => format!("{} KiB", b.div_ceil(1024)),
        b => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
}

fn remove(root: &Path, ids: Vec<String>, all: bool, json: bool) -> Result<ExitCode> {
    if all {
        let report = remove_all_sessions(root);
        for id in &report.removed {
            audit("session-removed", &format!("session={} by=operator-cli", id.as_str()));
        }
        if json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            println!("removed {} session(s)", report.removed.len());
            for id in &report.skipped_running {
                println!("skipped {}: running (stop it first)", id.as_str());
            }
            for e in &report.errors {
                println!("error: {e}");
            }
        }
        let clean = report.skipped_running.is_empty() && report.errors.is_empty();
        return Ok(if clean { ExitCode::SUCCESS } else { ExitCode::FAILURE });
    }
    if ids.is_empty() {
        bail!("name the sessions to remove (`mcec sessions list` shows them), or pass --all");
    }
    let mut outcomes = Vec::new();
    let mut clean = true;
    for raw in &ids {
        let outcome = match SessionId::parse(raw) {
            Err(e) => Err(format!("not a session id: {e}")),
            Ok(id) => match remove_session_dir(root, &id) {
                Ok(Removal::Removed) => {
                    audit("session-removed", &format!("session={} by=operator-cli", id.as_str()));
                    Ok("removed")
                }
                Ok(Removal::AlreadyGone) => Ok("already gone"),
                Err(RemoveError::Running(_)) => Err("running (stop it first)".to_string()),
                Err(e) => Err(e.to_string()),
            },
        };
        clean &= outcome.is_ok();
        outcomes.push((raw.clone(), outcome));
    }
    if json {
        let rows: Vec<_> = outcomes
            .iter()
            .map(|(id, o)| match o {
                Ok(what) => json!({"id": id, "ok": true, "outcome": what}),
                Err(why) => json!({"id": id, "ok": false, "error": why}),
            })
            .collect();
        println!("{}", pretty(&json!(rows)));
    } else {
        for (id, o) in &outcomes {
            match o {
                Ok(what) => println!("{id}: {what}"),
                Err(why) => println!("{id}: skipped: {why}"),
            }
        }
    }
    Ok(if clean { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
