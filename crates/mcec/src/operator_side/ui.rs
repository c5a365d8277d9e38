//! The operator windows' thread from the binary's side: starting it (and a watcher that
//! notes when it ends), and ending it before the process exits, which the C libraries under
//! the windows need (see [`UiShutdown`]).

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcec_operator::{OperatorEvent, OperatorState, Surfaces};

use super::spawn;

/// The operator windows as started: their state, their events (and a sender of more, for
/// what answers a prompt outside its window), and the handle that ends them.
pub(super) type Started =
    (Option<OperatorState>, Option<(Receiver<OperatorEvent>, Sender<OperatorEvent>)>, Option<UiShutdown>);

/// Start the operator windows for `surfaces` on a thread of their own; all `None` when no
/// surface is wanted or none starts. With `hidden`, the banner and prompts show nothing until
/// the display's guard is elected.
pub(super) fn start_ui(surfaces: Surfaces, hidden: bool) -> Started {
    if !(surfaces.overlay || surfaces.prompt || surfaces.host_window) {
        return (None, None, None);
    }
    let state = OperatorState::new();
    state.set_member(hidden);
    let (tx, rx) = mpsc::channel();
    match mcec_operator::spawn_operator_ui_thread(state.clone(), tx.clone(), surfaces) {
        Ok(handle) => {
            let shutdown =
                UiShutdown { state: state.clone(), ended: Arc::new((Mutex::new(false), Condvar::new())) };
            let ended = shutdown.ended.clone();
            spawn("mcec-ui-watch", move || {
                match handle.join() {
                    Ok(Ok(())) => tracing::info!("operator windows closed"),
                    Ok(Err(e)) => tracing::warn!("operator windows unavailable: {e}"),
                    Err(_) => tracing::warn!("operator windows crashed"),
                }
                let (flag, cvar) = &*ended;
                *flag.lock().unwrap_or_else(PoisonError::into_inner) = true;
                cvar.notify_all();
            });
            (Some(state), Some((rx, tx)), Some(shutdown))
        }
        Err(e) => {
            tracing::warn!("operator windows unavailable: {e}");
            (None, None, None)
        }
    }
}

/// Ends the operator windows' thread before the process exits.
///
/// The windows' thread may be in the middle of a frame when the process decides to exit (an
/// OpenGL host window once crashed in exit-time destructors that way). So the process first
/// asks the windows to close and waits for the thread to return from its loop, which also
/// unmaps them cleanly; only then does it exit.
#[derive(Clone)]
pub struct UiShutdown {
    state: OperatorState,
    ended: Arc<(Mutex<bool>, Condvar)>,
}

impl UiShutdown {
    /// Whether the windows' thread has ended.
    pub fn ended(&self) -> bool {
        *self.ended.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ask the windows to close and wait up to `within` for their thread to end. False when
    /// it is still running.
    pub fn close(&self, within: Duration) -> bool {
        self.state.request_quit();
        let deadline = Instant::now() + within;
        let (flag, cvar) = &*self.ended;
        let mut ended = flag.lock().unwrap_or_else(PoisonError::into_inner);
        while !*ended {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            ended = cvar
                .wait_timeout(ended, left.min(Duration::from_millis(50)))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }
}

/// How long an exiting process waits for the operator windows to close.
pub const UI_CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Exit with `code`: after the operator windows closed, normally; when they did not close
/// in time, at once, without the exit-time destructors.
pub fn exit_after_ui(ui: Option<&UiShutdown>, code: u8) -> ! {
    if let Some(ui) = ui
        && !ui.close(UI_CLOSE_WAIT)
    {
        tracing::warn!("the operator windows did not close within {UI_CLOSE_WAIT:?}; exiting without them");
        exit_now(code);
    }
    std::process::exit(i32::from(code))
}

#[cfg(windows)]
fn exit_now(code: u8) -> ! {
    // ExitProcess ends every other thread (the operator windows' among them) before the DLLs'
    // detach routines run, so nothing races the exit.
    std::process::exit(i32::from(code))
}

#[cfg(unix)]
#[allow(unsafe_code, reason = "_exit: end the process without running C exit-time destructors")]
fn exit_now(code: u8) -> ! {
    use std::io::Write as _;
    // The log writes each line through at once; stdout is Rust's own buffer.
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process immediately; nothing in this process runs afterwards.
    unsafe { libc::_exit(i32::from(code)) }
}
