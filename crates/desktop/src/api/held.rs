//! Mouse buttons an agent left down on purpose (`mouse down`), and the watchdog that lets go
//! of each after a bounded time: mcec never leaves a button down behind an agent that forgot
//! it or went away.
//!
//! The stop, a cancelled or abandoned call and the process's exit release every button
//! through [`crate::seams::Injector::release_all`]; this covers the agent that simply never
//! sends `mouse up`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::seams::Backend;
use crate::types::MouseButton;

/// How long a button pressed by `mouse down` may stay down.
pub const MAX_HOLD: Duration = Duration::from_secs(60);
const WATCH_POLL: Duration = Duration::from_millis(100);

/// Which buttons are held, each with the generation of the press that holds it.
#[derive(Default)]
pub(crate) struct HeldButtons {
    held: Arc<Mutex<HashMap<MouseButton, u64>>>,
    next: AtomicU64,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl HeldButtons {
    /// Remember that `button` is down and start its watchdog: after `limit`, unless it was let
    /// go (or pressed anew) meanwhile, it is released under the input lock, with a warning.
    pub(crate) fn pressed(
        &self,
        button: MouseButton,
        backend: Arc<dyn Backend>,
        input_lock: Arc<Mutex<()>>,
        limit: Duration,
    ) {
        let generation = self.next.fetch_add(1, Ordering::SeqCst);
        locked(&self.held).insert(button, generation);
        let held = self.held.clone();
        let still_held =
            move |held: &Mutex<HashMap<MouseButton, u64>>| locked(held).get(&button) == Some(&generation);
        let watch = move || {
            let deadline = Instant::now() + limit;
            while let Some(left) = deadline.checked_duration_since(Instant::now()) {
                if !still_held(&held) {
                    return;
                }
                std::thread::sleep(left.min(WATCH_POLL));
            }
            let _input = locked(&input_lock);
            if !still_held(&held) {
                return;
            }
            locked(&held).remove(&button);
            let released = backend.button(button, false).and_then(|_| backend.settle());
            tracing::warn!(
                "mouse {button:?} was held by `mouse down` for {} s with no `mouse up`; released it ({released:?})",
                limit.as_secs()
            );
        };
        if let Err(e) = std::thread::Builder::new().name("mcec-held-button".into()).spawn(watch) {
            tracing::error!("cannot watch a held mouse button ({e}); it is released at the stop or at exit");
        }
    }

    /// Forget `button`; true when it was held.
    pub(crate) fn let_go(&self, button: MouseButton) -> bool {
        locked(&self.held).remove(&button).is_some()
    }

    /// Whether any button is held by `mouse down`.
    pub(crate) fn any(&self) -> bool {
        !locked(&self.held).is_empty()
    }

    /// Forget every button (the stop released them all).
    pub(crate) fn clear(&self) {
        locked(&self.held).clear();
    }
}
