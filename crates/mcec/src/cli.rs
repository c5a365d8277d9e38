//! The command line, as clap types. `mcec` with no command runs the host.

use clap::{Args, Parser, Subcommand, ValueEnum};

use mcec_rules::own_display::OwnDisplaySize;

use crate::client_snippets::Client;

#[derive(Debug, Parser)]
#[command(
    name = "mcec",
    version,
    about = "Computer-use MCP server for the Linux desktop that keeps the operator in control"
)]
pub struct Cli {
    /// Same as `mcec mcp` (for clients that expect a flag).
    #[arg(long = "mcp", global = false)]
    pub mcp_flag: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The host: operator window, the HTTP front door when McpServerEnabled, the stop hotkey.
    Run,
    /// Serve MCP on stdin/stdout (stdout carries JSON-RPC only).
    Mcp(McpArgs),
    /// Emergency stop: stop every mcec on this display, running now or started later.
    ///
    /// The display is DISPLAY, or the one `mcec mcp` would find without it. The stop is
    /// recorded for that display; every mcec there stops within a moment, and any started
    /// later starts stopped. No command re-arms: only your own click on Re-arm in each mcec's
    /// prompt (or the host's menu) does.
    Stop,
    /// Provision a session copy for an agent (needs AllowSessionProvisioning).
    Provision(ProvisionArgs),
    /// Manage session copies.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Print a ready-to-paste MCP client entry for this copy.
    Config(ConfigArgs),
    /// Print shell completions for bash, zsh or fish.
    Completions {
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the man page (roff).
    Man,
    /// Emergency-stop hotkey helpers.
    #[command(subcommand)]
    Hotkey(HotkeyCommand),
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Give this connection its own fresh session copy and relay to it; the copy is ended
    /// when the client disconnects (needs AllowSessionProvisioning).
    #[arg(long)]
    pub session: bool,
    /// With --session: give the copy an X display of its own, WIDTHxHEIGHT (default
    /// 1280x800): a window on your display, or headless without one; your stop still stops it.
    #[arg(long, value_name = "WxH", num_args = 0..=1, default_missing_value = "1280x800",
          value_parser = own_display_size, requires = "session")]
    pub own_display: Option<OwnDisplaySize>,
}

/// `WIDTHxHEIGHT` within the bounds of an own display.
fn own_display_size(text: &str) -> Result<OwnDisplaySize, String> {
    OwnDisplaySize::parse(text)
}

#[derive(Debug, Args)]
pub struct ProvisionArgs {
    /// Do not enable the copy's HTTP front door (stdio only).
    #[arg(long)]
    pub no_mcp_server: bool,
    /// Comma-separated commands to enable (default: every tool except launch).
    #[arg(long, value_delimiter = ',')]
    pub commands: Option<Vec<String>>,
    /// Give the copy an X display of its own, WIDTHxHEIGHT (default 1280x800): a window on
    /// your display, or headless without one; your stop still stops it.
    #[arg(long, value_name = "WxH", num_args = 0..=1, default_missing_value = "1280x800",
          value_parser = own_display_size)]
    pub own_display: Option<OwnDisplaySize>,
    /// Print the handoff as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print the client entries for this MCP client instead of the generic JSON.
    #[arg(long, value_enum, conflicts_with = "json")]
    pub client: Option<Client>,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// The MCP client to write the entry for.
    #[arg(long, value_enum)]
    pub client: Client,
    /// How the client reaches mcec.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    pub transport: Transport,
    /// The server's name in the client's configuration.
    #[arg(long, default_value = "mcec")]
    pub name: String,
    /// Add DISPLAY and XAUTHORITY (this desktop's, as mcec finds them) to the stdio entry, for
    /// machines with several displays.
    #[arg(long)]
    pub pin_display: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    Stdio,
    Http,
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List sessions: id, age, size, running or stale.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove sessions by id, or all of them; running ones are skipped and named.
    Rm {
        ids: Vec<String>,
        #[arg(long, conflicts_with = "ids")]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Remove sessions older than 12 hours that are not running.
    Reap {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum HotkeyCommand {
    /// Print the normalised chord, or the error (exit 2).
    Check { spec: String },
}
