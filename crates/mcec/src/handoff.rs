//! The operator's side of a provisioning: the request built from this copy's settings, and
//! the handoff turned into text a person pastes into an MCP client (stdio and HTTP configs).
//!
//! `mcec provision` prints it and the host's Agent tab shows it with copy buttons (as the
//! generic JSON, or in one client's format through `client_snippets`); both take it from here
//! so they never drift apart. The texts hold the session token: they go to the
//! operator's terminal or window, never to the log.

use std::path::Path;

use mcec_rules::catalog;
use mcec_sessions::provision::{Handoff, ProvisionRequest};
use serde_json::json;

use crate::client_snippets::{CODEX_TOKEN_VAR, Client, Target, snippet};

/// A provisioning request for a copy of `source_exe` under `sessions_root`.
pub fn request(
    sessions_root: &Path,
    source_exe: &Path,
    operator_hotkey: &str,
    mcp_server: bool,
    commands: Option<Vec<String>>,
) -> ProvisionRequest {
    ProvisionRequest {
        sessions_root: sessions_root.to_path_buf(),
        source_exe: source_exe.to_path_buf(),
        mcp_server,
        commands,
        all_tool_names: catalog::TOOLS.iter().map(|t| t.name.to_string()).collect(),
        operator_hotkey: operator_hotkey.to_string(),
        requested_by: "operator",
        own_display: None,
        own_display_sessions_max: mcec_rules::own_display::DEFAULT_SESSIONS_MAX,
    }
}

/// The handoff as the operator reads and copies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandoffText {
    /// Where the session is, how to start and end it, and any warnings; one item a line.
    pub summary: Vec<String>,
    /// MCP client config for stdio, pretty JSON.
    pub stdio_json: String,
    /// MCP client config for HTTP with the bearer header, when the copy serves HTTP.
    pub http_json: Option<String>,
}

pub fn handoff_text(h: &Handoff) -> HandoffText {
    let name = format!("mcec-{}", h.session_id.as_str());
    let mut summary = vec![
        format!("Session {} in {}", h.session_id.as_str(), h.directory.display()),
        format!("Start it:  {}", h.launch),
        format!("End it:    stop the process, then `mcec sessions rm {}`", h.session_id.as_str()),
    ];
    if let Some(own) = &h.desktop {
        summary.push(format!(
            "Display:   its own, {}x{} (a window on your display; the stop stays yours)",
            own.width, own.height
        ));
    }
    summary.extend(h.warnings.iter().map(|w| format!("Warning:   {w}")));
    let stdio = json!({"mcpServers": {&name: {"command": h.exe_path, "args": ["mcp"]}}});
    let http = match (&h.mcp_endpoint, &h.authorization) {
        (Some(endpoint), Some(authorization)) => Some(pretty(&json!({"mcpServers": {&name: {
            "type": "http", "url": endpoint, "headers": {"Authorization": authorization}
        }}}))),
        _ => None,
    };
    HandoffText { summary, stdio_json: pretty(&stdio), http_json: http }
}

/// A handoff's entries in one client's format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientEntries {
    pub stdio: String,
    /// `Err` says why this client cannot take the HTTP entry from a file.
    pub http: Option<Result<String, String>>,
    /// Where the bearer goes when the entry cannot hold it (Codex reads it from the environment).
    pub token_note: Option<String>,
}

pub fn client_entries(h: &Handoff, client: Client) -> Result<ClientEntries, String> {
    let name = format!("mcec-{}", h.session_id.as_str());
    let stdio = Target::Stdio {
        command: h.exe_path.display().to_string(),
        args: vec!["mcp".into()],
        env: Vec::new(),
    };
    let http =
        h.mcp_endpoint.as_ref().map(|url| Target::Http { url: url.clone(), token: Some(h.token.clone()) });
    let token_note = match (client, &http) {
        (Client::Codex, Some(_)) => Some(format!(
            "Codex reads the bearer from the environment: export {CODEX_TOKEN_VAR}='{}'",
            h.token
        )),
        _ => None,
    };
    Ok(ClientEntries {
        stdio: snippet(client, &name, &stdio)?,
        http: http.map(|target| snippet(client, &name, &target)),
        token_note,
    })
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}
