//! `launch`: the one place the desktop layer starts a process, then a bounded wait for a
//! window owned by it (or by a process it started).

use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcec_rules::{ErrorCode, StopFlag, ToolError, progress};
use serde::Serialize;

use super::{DesktopTools, stopped_after};
use crate::requests::LaunchRequest;
use crate::seams::Backend;
use crate::types::WindowInfo;

const DEFAULT_TIMEOUT_MS: u64 = 10_000;
const MAX_TIMEOUT_MS: u64 = super::MAX_CALL_MS;
const POLL: Duration = Duration::from_millis(20);
/// How many parent links are followed to see whether a window's process descends from ours.
const MAX_ANCESTRY: usize = 16;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LaunchResult {
    /// The process started.
    pub pid: u32,
    /// Its first window.
    pub window: WindowInfo,
    /// How long the window took to appear, in ms.
    pub waited_ms: u64,
}

/// Where the reaper thread puts the child's exit status.
type ExitSlot = Arc<Mutex<Option<ExitStatus>>>;

/// Start `program` with `args` in `dir` on `desktop`, detached from our stdio. A thread
/// reaps it, recording its exit status.
fn spawn(
    program: &str,
    args: &[String],
    dir: Option<&Path>,
    desktop: &dyn Backend,
) -> Result<(u32, ExitSlot), std::io::Error> {
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    desktop.prepare_program(&mut cmd);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let status = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&status);
    let reaper = std::thread::Builder::new().name(format!("mcec-reap-{pid}")).spawn(move || {
        if let Ok(s) = child.wait() {
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(s);
        }
    });
    if let Err(e) = reaper {
        tracing::warn!("no reaper thread for pid {pid}: {e}");
    }
    Ok((pid, status))
}

/// Whether `pid` is `root` or descends from it, following `parent` (the platform's process
/// table) at most [`MAX_ANCESTRY`] links up.
fn descends_from(mut pid: u32, root: u32, parent: impl Fn(u32) -> Option<u32>) -> bool {
    for _ in 0..MAX_ANCESTRY {
        if pid == root {
            return true;
        }
        match parent(pid) {
            // 0 and 1 are the roots of every process table (Windows' idle process, init).
            Some(p) if p > 1 && p != pid => pid = p,
            _ => return false,
        }
    }
    false
}

impl DesktopTools {
    /// `launch`.
    pub fn launch(&self, req: &LaunchRequest, stop: &StopFlag) -> Result<LaunchResult, ToolError> {
        if req.path.trim().is_empty() {
            return Err(ToolError::bad_argument("path", "is empty"));
        }
        let timeout = req.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout > MAX_TIMEOUT_MS {
            return Err(ToolError::bad_argument("timeoutMs", format!("must be at most {MAX_TIMEOUT_MS}")));
        }
        let dir = req.working_directory.as_deref().map(Path::new);
        if let Some(d) = dir
            && !d.is_dir()
        {
            return Err(ToolError::bad_argument(
                "workingDirectory",
                format!("{} is not a directory", d.display()),
            ));
        }
        let args = req.args.clone().unwrap_or_default();
        // Starting a program acts on the desktop: it queues on the input lock like any
        // actuation and is never done once the stop has engaged.
        let (pid, status) = self.actuate(stop, |b| {
            spawn(&req.path, &args, dir, b).map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    ToolError::bad_argument("path", format!("no program `{}` was found", req.path))
                } else {
                    ToolError::bad_argument("path", format!("could not start `{}`: {e}", req.path))
                }
            })
        })?;
        let start = Instant::now();
        loop {
            let windows = self.backend.list_windows()?;
            let parent = |p| self.backend.parent_process(p);
            if let Some(w) =
                windows.into_iter().find(|w| w.pid.is_some_and(|p| descends_from(p, pid, parent)))
            {
                return Ok(LaunchResult { pid, window: w, waited_ms: start.elapsed().as_millis() as u64 });
            }
            if stop.is_set() {
                return Err(stopped_after(format!(
                    "The program was started (pid {pid}) and keeps running; mcec stopped waiting for its window."
                )));
            }
            let exited = *status.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(s) = exited {
                return Err(ToolError::new(
                    ErrorCode::NoTarget,
                    format!("`{}` (pid {pid}) exited ({s}) before it opened a window.", req.path),
                ));
            }
            let waited = start.elapsed();
            progress::report(waited.as_millis() as u64, timeout, "ms waited");
            if waited >= Duration::from_millis(timeout) {
                return Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!(
                        "`{}` started (pid {pid}) but opened no window within {timeout} ms; it is still running.",
                        req.path
                    ),
                ));
            }
            std::thread::sleep(POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestry_follows_the_parent_links() {
        // 40 <- 30 <- 20 <- 10, and 10's parent is unknown.
        let parent = |p: u32| match p {
            40 => Some(30),
            30 => Some(20),
            20 => Some(10),
            _ => None,
        };
        assert!(descends_from(40, 40, parent));
        assert!(descends_from(40, 20, parent));
        assert!(!descends_from(20, 40, parent));
        assert!(!descends_from(40, 99, parent));
        // A process table that names a process as its own parent ends the walk.
        assert!(!descends_from(7, 8, |_| Some(7)));
    }
}
