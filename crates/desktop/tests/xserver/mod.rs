//! Starting private X servers for tests. The server picks a free display number itself
//! (`-displayfd`) and writes it to its stdout, so tests running in parallel processes (as
//! nextest runs them) never collide on a number.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Start `program` (`Xvfb`, `Xephyr`) with `args`; returns the child and its display (`:N`).
/// `env` is added to the child's environment (e.g. `DISPLAY` for Xephyr's host).
pub fn spawn_server(program: &str, args: &[&str], env: &[(&str, &str)]) -> Result<(Child, String), String> {
    let (reader, writer) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let child = {
        let mut command = Command::new(program);
        command
            .args(args)
            .args(["-displayfd", "1"])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::null());
        command.spawn().map_err(|e| format!("{program} could not start (is it installed?): {e}"))?
        // `command` (and our copy of the pipe's write end) is dropped here, so a server that
        // dies before writing its number gives end-of-file instead of a hang.
    };
    let mut line = String::new();
    let read = BufReader::new(reader).read_line(&mut line);
    let number = line.trim();
    if read.is_err() || number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("{program} did not report a display number"));
    }
    Ok((child, format!(":{number}")))
}
