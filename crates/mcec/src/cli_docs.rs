//! Shell completions and the man page, both generated from the clap definition in `cli.rs`,
//! so they can never list a command or flag the binary does not have. `mcec completions
//! SHELL` and `mcec man` print them; the Debian package (scripts/build-deb) installs them.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::{Cli, Shell};

pub fn completions(shell: Shell) -> Result<ExitCode> {
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(generator, &mut command, "mcec", &mut out);
    std::io::stdout().write_all(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// The man page of `mcec` and, one section each, of every subcommand.
pub fn man_page() -> Result<ExitCode> {
    let command = Cli::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut out)?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("mcec {}", sub.get_name());
        writeln!(out, ".SH \"{}\"", name.to_uppercase())?;
        let sub = sub.clone().display_name(name.clone()).bin_name(name);
        let man = clap_mangen::Man::new(sub);
        man.render_synopsis_section(&mut out)?;
        man.render_description_section(&mut out)?;
        man.render_options_section(&mut out)?;
    }
    std::io::stdout().write_all(&out)?;
    Ok(ExitCode::SUCCESS)
}
