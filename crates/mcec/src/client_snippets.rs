//! Ready-to-paste MCP client configuration for each client mcec knows, from one description
//! of how to reach the server (a command line for stdio, a URL and bearer for HTTP).
//!
//! Clients disagree on the format: Claude Desktop, Cursor and Gemini CLI read `mcpServers`
//! JSON (Gemini names the HTTP address `httpUrl`), VS Code reads `servers` with a `type`,
//! Codex CLI reads TOML `[mcp_servers.NAME]` and takes the bearer from an environment
//! variable, and Claude Code is configured with a `claude mcp add` command line. `mcec config
//! --client` and `mcec provision --client` print these; the texts may hold a token, so they go
//! to the operator's terminal and never to the log.

use clap::ValueEnum;
use serde_json::{Value, json};

/// The clients with a snippet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Vscode,
    Cursor,
    Codex,
    Gemini,
}

impl Client {
    /// Display name and where the snippet goes.
    pub fn place(self) -> (&'static str, &'static str) {
        match self {
            Client::ClaudeDesktop => {
                ("Claude Desktop", "claude_desktop_config.json (Settings > Developer > Edit Config)")
            }
            Client::ClaudeCode => ("Claude Code", "run it in a shell"),
            Client::Vscode => ("VS Code", ".vscode/mcp.json in the workspace (or the user mcp.json)"),
            Client::Cursor => ("Cursor", "~/.cursor/mcp.json (or .cursor/mcp.json in the project)"),
            Client::Codex => ("Codex CLI", "~/.codex/config.toml"),
            Client::Gemini => ("Gemini CLI", "~/.gemini/settings.json (or .gemini/settings.json)"),
        }
    }
}

/// How the client reaches mcec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The client starts `command args...` (with `env` added to its environment) and speaks
    /// MCP on its stdio.
    Stdio { command: String, args: Vec<String>, env: Vec<(String, String)> },
    /// Streamable HTTP at `url`, with `token` as the bearer when the server wants one.
    Http { url: String, token: Option<String> },
}

/// The environment variable Codex CLI reads the bearer from.
pub const CODEX_TOKEN_VAR: &str = "MCEC_BEARER_TOKEN";

/// The snippet for `client`, or why that client cannot take `target` from a file.
pub fn snippet(client: Client, name: &str, target: &Target) -> Result<String, String> {
    Ok(match (client, target) {
        (Client::ClaudeCode, Target::Stdio { command, args, env }) => {
            let pairs: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let mut words = vec!["claude", "mcp", "add"];
            for pair in &pairs {
                words.extend(["-e", pair.as_str()]);
            }
            words.extend([name, "--"]);
            words.push(command);
            words.extend(args.iter().map(String::as_str));
            shell_line(&words)
        }
        (Client::ClaudeCode, Target::Http { url, token }) => {
            let mut words =
                vec!["claude".to_string(), "mcp".into(), "add".into(), "--transport".into(), "http".into()];
            words.extend([name.to_string(), url.clone()]);
            if let Some(token) = token {
                words.extend(["--header".to_string(), format!("Authorization: Bearer {token}")]);
            }
            shell_line(&words.iter().map(String::as_str).collect::<Vec<_>>())
        }
        (Client::ClaudeDesktop, Target::Http { .. }) => {
            return Err("Claude Desktop adds HTTP servers only through Settings > Connectors, not its \
                        config file; use the stdio entry (`--transport stdio`)"
                .into());
        }
        (Client::Codex, target) => codex_toml(name, target),
        (client, target) => pretty(&json_entry(client, name, target)),
    })
}

fn json_entry(client: Client, name: &str, target: &Target) -> Value {
    let auth = |token: &Option<String>| match token {
        Some(token) => json!({"Authorization": format!("Bearer {token}")}),
        None => json!({}),
    };
    let mut entry = match (client, target) {
        (Client::Vscode, Target::Stdio { command, args, .. }) => {
            json!({"type": "stdio", "command": command, "args": args})
        }
        (Client::Vscode, Target::Http { url, token }) => {
            json!({"type": "http", "url": url, "headers": auth(token)})
        }
        (Client::Gemini, Target::Http { url, token }) => json!({"httpUrl": url, "headers": auth(token)}),
        (_, Target::Http { url, token }) => json!({"url": url, "headers": auth(token)}),
        (_, Target::Stdio { command, args, .. }) => json!({"command": command, "args": args}),
    };
    if let Target::Stdio { env, .. } = target
        && !env.is_empty()
    {
        entry["env"] =
            env.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>().into();
    }
    let key = if client == Client::Vscode { "servers" } else { "mcpServers" };
    json!({ key: { name: entry } })
}

fn codex_toml(name: &str, target: &Target) -> String {
    let mut out = format!("[mcp_servers.{}]\n", toml_key(name));
    match target {
        Target::Stdio { command, args, env } => {
            out += &format!("command = {}\n", toml_str(command));
            let args: Vec<String> = args.iter().map(|a| toml_str(a)).collect();
            out += &format!("args = [{}]\n", args.join(", "));
            if !env.is_empty() {
                let pairs: Vec<String> =
                    env.iter().map(|(k, v)| format!("{} = {}", toml_key(k), toml_str(v))).collect();
                out += &format!("env = {{ {} }}\n", pairs.join(", "));
            }
        }
        Target::Http { url, token } => {
            out += &format!("url = {}\n", toml_str(url));
            if token.is_some() {
                out += &format!("bearer_token_env_var = {}\n", toml_str(CODEX_TOKEN_VAR));
            }
        }
    }
    out
}

fn toml_key(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        name.to_string()
    } else {
        toml_str(name)
    }
}

/// A TOML basic string (the same escapes as JSON for everything mcec puts in one).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Words joined for a POSIX shell, each quoted when it needs it.
fn shell_line(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| {
            let plain =
                !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
            if plain { (*w).to_string() } else { format!("'{}'", w.replace('\'', r"'\''")) }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio() -> Target {
        Target::Stdio {
            command: "/usr/bin/mcec".into(),
            args: vec!["mcp".into(), "--session".into()],
            env: vec![],
        }
    }

    fn pinned() -> Target {
        let env = vec![
            ("DISPLAY".into(), ":1".into()),
            ("XAUTHORITY".into(), "/run/user/1000/gdm/Xauthority".into()),
        ];
        Target::Stdio { command: "/home/you/mcec/mcec".into(), args: vec!["mcp".into()], env }
    }

    #[test]
    fn a_pinned_display_reaches_every_clients_entry() {
        for client in [Client::ClaudeDesktop, Client::Cursor, Client::Gemini, Client::Vscode] {
            let v: Value =
                serde_json::from_str(&snippet(client, "mcec", &pinned()).expect("entry")).expect("json");
            let key = if client == Client::Vscode { "servers" } else { "mcpServers" };
            assert_eq!(v[key]["mcec"]["env"]["DISPLAY"], ":1", "{client:?}");
            assert_eq!(v[key]["mcec"]["env"]["XAUTHORITY"], "/run/user/1000/gdm/Xauthority", "{client:?}");
        }
        let codex = snippet(Client::Codex, "mcec", &pinned()).expect("codex");
        assert!(
            codex.contains(r#"env = { DISPLAY = ":1", XAUTHORITY = "/run/user/1000/gdm/Xauthority" }"#),
            "{codex}"
        );
        let line = snippet(Client::ClaudeCode, "mcec", &pinned()).expect("claude code");
        assert_eq!(
            line,
            "claude mcp add -e DISPLAY=:1 -e XAUTHORITY=/run/user/1000/gdm/Xauthority mcec -- /home/you/mcec/mcec mcp"
        );
        let plain = snippet(Client::Cursor, "mcec", &stdio()).expect("cursor");
        assert!(!plain.contains("env"), "{plain}");
    }

    fn http() -> Target {
        Target::Http { url: "http://127.0.0.1:5151/mcp".into(), token: Some("tok'en".into()) }
    }

    #[test]
    fn vscode_uses_servers_with_a_type_and_gemini_uses_http_url() {
        let vs: Value =
            serde_json::from_str(&snippet(Client::Vscode, "mcec", &http()).expect("vscode")).expect("json");
        assert_eq!(vs["servers"]["mcec"]["type"], "http");
        let gem: Value =
            serde_json::from_str(&snippet(Client::Gemini, "mcec", &http()).expect("gemini")).expect("json");
        assert_eq!(gem["mcpServers"]["mcec"]["httpUrl"], "http://127.0.0.1:5151/mcp");
        assert_eq!(gem["mcpServers"]["mcec"]["headers"]["Authorization"], "Bearer tok'en");
    }

    #[test]
    fn codex_never_writes_the_token_into_its_file() {
        let text = snippet(Client::Codex, "mcec", &http()).expect("codex");
        assert!(!text.contains("tok'en"), "{text}");
        assert!(text.contains(CODEX_TOKEN_VAR), "{text}");
    }

    #[test]
    fn shell_words_are_quoted() {
        let line = snippet(Client::ClaudeCode, "mcec", &http()).expect("claude code");
        assert!(line.ends_with(r"--header 'Authorization: Bearer tok'\''en'"), "{line}");
        let line = snippet(Client::ClaudeCode, "mcec", &stdio()).expect("claude code");
        assert_eq!(line, "claude mcp add mcec -- /usr/bin/mcec mcp --session");
    }

    #[test]
    fn claude_desktop_takes_no_http_file_entry() {
        assert!(snippet(Client::ClaudeDesktop, "mcec", &http()).is_err());
        assert!(snippet(Client::ClaudeDesktop, "mcec", &stdio()).is_ok());
    }
}
