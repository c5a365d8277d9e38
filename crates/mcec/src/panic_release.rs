//! What a panic does before the process goes.
//!
//! A release build aborts on panic (`panic = "abort"`: the unwinding tables and landing pads
//! were 1.7 MB of the binary every session copies, issue 30). Nothing unwinds to the desktop
//! backend's `Drop` then, so whatever the agent held down would stay down. The hook installed
//! here releases it first: the backend's last-resort release (a fresh connection, the
//! system's own view of what is down), run on a thread of its own because the panicking
//! thread may hold the backend's locks (or the logger's), and given at most [`PATIENCE`]
//! before the process ends anyway. It audits the panic by its location only: a panic's
//! message may quote data.
//! A debug build unwinds as before, and the hook runs there too (a panicking call releases
//! what is held, then fails alone).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use mcec_mcp::audit::audit;

/// How long the release may take before the process ends without it.
const PATIENCE: Duration = Duration::from_secs(1);

type Release = Box<dyn Fn() -> Result<(), String> + Send + Sync>;

static RELEASE: OnceLock<Release> = OnceLock::new();

static RELEASING: AtomicBool = AtomicBool::new(false);

/// Chains the hook in front of the one in place. Once, at start.
pub fn install_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        // A panic in the release itself must not start another one.
        if RELEASING.swap(true, Ordering::SeqCst) {
            return;
        }
        let at = info.location().map_or_else(|| "an unknown place".to_owned(), ToString::to_string);
        let (done, finished) = mpsc::channel();
        let spawned = std::thread::Builder::new().name("panic-release".into()).spawn(move || {
            let outcome = match RELEASE.get().map(|release| release()) {
                None => "nothing to release".to_owned(),
                Some(Ok(())) => "held input released".to_owned(),
                Some(Err(e)) => format!("release failed: {e}"),
            };
            audit("panic", &format!("at={at}; {outcome}"));
            let _ = done.send(());
        });
        if spawned.is_ok() {
            let _ = finished.recv_timeout(PATIENCE);
        }
        RELEASING.store(false, Ordering::SeqCst);
    }));
}

/// Names the backend's last-resort release (the first one set stays: one desktop a process).
pub fn set_release(release: impl Fn() -> Result<(), String> + Send + Sync + 'static) {
    let _ = RELEASE.set(Box::new(release));
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[test]
    fn a_panic_runs_the_release_before_it_unwinds() {
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        install_hook();
        set_release(|| {
            CALLS.fetch_add(1, Ordering::SeqCst);
            Ok(())
        });
        let caught = std::panic::catch_unwind(|| panic!("on purpose"));
        assert!(caught.is_err());
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
        let _ = std::panic::take_hook();
    }
}
