//! `mcec config --client NAME`: the client configuration that reaches this copy, ready to
//! paste. On an installed copy the stdio entry is `mcec mcp --session` (a fresh session copy
//! per connection); on any other copy it is `mcec mcp`. `--transport http` describes this
//! copy's HTTP front door from its settings (an installed copy has none). The snippet goes to
//! stdout and where to paste it to stderr; a bearer token in it is never logged.
//! `--pin-display` adds this desktop's `DISPLAY` and `XAUTHORITY` to the stdio entry, for
//! machines where mcec could not choose among several displays by itself.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use mcec_sessions::paths::McecPaths;

use crate::cli::{ConfigArgs, Transport};
use crate::client_snippets::{CODEX_TOKEN_VAR, Client, Target, snippet};
use crate::config;

pub fn config_cmd(args: ConfigArgs) -> Result<ExitCode> {
    let paths =
        McecPaths::for_current_process().context("cannot work out where this copy keeps its files")?;
    let loaded = config::load(&paths.settings_file(), &paths.commands_file());
    if let Some(error) = &loaded.error {
        bail!("{error}");
    }
    let settings = &loaded.settings;
    let target = match args.transport {
        Transport::Stdio => {
            let words: &[&str] = if paths.installed { &["mcp", "--session"] } else { &["mcp"] };
            Target::Stdio {
                command: paths.exe.display().to_string(),
                args: words.iter().map(|w| (*w).to_string()).collect(),
                env: if args.pin_display { pinned_env()? } else { Vec::new() },
            }
        }
        Transport::Http if args.pin_display => {
            bail!("--pin-display is for the stdio entry: over HTTP the client starts nothing")
        }
        Transport::Http if paths.installed => bail!(
            "this is an installed copy, which never serves HTTP; use the stdio entry (`mcec config --client \
             NAME`), which gives every connection its own session copy"
        ),
        Transport::Http if !settings.mcp_server_enabled => bail!(
            "McpServerEnabled is false in {}: this copy has no HTTP front door to point a client at",
            paths.settings_file().display()
        ),
        Transport::Http => {
            let host = match settings.mcp_bind_address.as_str() {
                "0.0.0.0" | "::" | "" => "127.0.0.1",
                other => other,
            };
            let host = if host.contains(':') { format!("[{host}]") } else { host.to_string() };
            Target::Http {
                url: format!("http://{host}:{}/mcp", settings.mcp_http_port),
                token: settings.auth_token().map(str::to_string),
            }
        }
    };
    print_snippet(args.client, &args.name, &target)
}

/// DISPLAY and XAUTHORITY for a pinned entry: this desktop's, found as `mcec mcp` finds them.
#[cfg(unix)]
fn pinned_env() -> Result<Vec<(String, String)>> {
    crate::desktop_find::pinned().map_err(anyhow::Error::msg)
}

#[cfg(windows)]
fn pinned_env() -> Result<Vec<(String, String)>> {
    bail!("--pin-display is for X11 displays; Windows has one interactive desktop")
}

/// Print the snippet on stdout and where it goes on stderr.
pub fn print_snippet(client: Client, name: &str, target: &Target) -> Result<ExitCode> {
    let text = snippet(client, name, target).map_err(anyhow::Error::msg)?;
    let (label, place) = client.place();
    eprintln!("{label}: {place}");
    println!("{}", text.trim_end());
    if let (Client::Codex, Target::Http { token: Some(token), .. }) = (client, target) {
        eprintln!("Codex reads the bearer from the environment: export {CODEX_TOKEN_VAR}='{token}'");
    }
    Ok(ExitCode::SUCCESS)
}
