//! # mcec: the binary that wires the crates together
//!
//! Parses the command line, sets up logging (stderr and `mcec.log`, never stdout), loads
//! the settings (fail closed), and starts what the command asks for: the stdio MCP server
//! (`mcec mcp`), the host with its HTTP front door (`mcec`), or an operator command (`mcec
//! stop`, `mcec provision`, …).
//! Decisions live in the library crates; this crate only connects them.

mod agent_tab;
mod attest;
mod cli;
mod cli_docs;
mod client_snippets;
mod config;
mod config_cmd;
mod consent;
#[cfg(unix)]
mod desktop_find;
mod handoff;
mod headless_stop;
mod logging;
mod malloc_tuning;
mod operator_side;
#[cfg(unix)]
mod own_display;
mod panic_release;
mod platform;
mod record_watch;
mod relay;
mod reload;
mod serve;
mod sessions_cli;
mod stop_cmd;
mod stop_follower;
mod stop_record;
mod stopless;
mod tool_display;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command, HotkeyCommand};

fn main() -> ExitCode {
    malloc_tuning::fix_mmap_threshold();
    panic_release::install_hook();
    let cli = Cli::parse();
    #[cfg(unix)]
    if matches!(cli.command, Some(Command::Mcp(_) | Command::Run | Command::Stop) | None) {
        desktop_find::settle();
    }
    match cli.command {
        Some(Command::Hotkey(HotkeyCommand::Check { spec })) => hotkey_check(&spec),
        Some(Command::Mcp(args)) if args.session => relay::run(args.own_display),
        Some(Command::Mcp(_)) => serve::run(serve::Mode::Stdio),
        None if cli.mcp_flag => serve::run(serve::Mode::Stdio),
        Some(Command::Run) | None => serve::run(serve::Mode::Host),
        Some(Command::Stop) => sessions_cli::run(stop_cmd::stop_cmd),
        Some(Command::Provision(args)) => sessions_cli::run(|| sessions_cli::provision_cmd(args)),
        Some(Command::Completions { shell }) => sessions_cli::run(|| cli_docs::completions(shell)),
        Some(Command::Man) => sessions_cli::run(cli_docs::man_page),
        Some(Command::Config(args)) => sessions_cli::run(|| config_cmd::config_cmd(args)),
        Some(Command::Sessions(command)) => sessions_cli::run(|| sessions_cli::sessions_cmd(command)),
    }
}

fn hotkey_check(spec: &str) -> ExitCode {
    match mcec_rules::hotkey::Hotkey::parse(spec) {
        Ok(hotkey) => {
            println!("{hotkey}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mcec: invalid hotkey {spec:?}: {e}");
            ExitCode::from(2)
        }
    }
}
