//! Starting private X servers for tests. The server picks a free display number itself
//! (`-displayfd`) and writes it to its stdout, so tests running in parallel processes (as
//! nextest runs them) never collide on a number.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// End a server by PID the way it cleans up after itself (SIGTERM: it removes its lock file
/// and socket); SIGKILL only if it has not gone within a few seconds.
pub fn stop_server(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

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
