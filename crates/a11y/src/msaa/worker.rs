//! The thread every MSAA call runs on, and the bound on each call. COM objects belong to the
//! thread that made them, and a provider that never answers (a hung application's
//! `WM_GETOBJECT`, a stuck out-of-process `IAccessible`) blocks its caller for good. So the
//! calls go to one worker thread, the caller waits at most its timeout, and a worker that
//! did not answer in time is abandoned (it ends by itself if its call ever returns) and the
//! next call starts a fresh one. At most [`MAX_STUCK`] abandoned workers may be alive: past
//! that every call answers `unavailable` at once instead of piling up threads.
//!
//! Platform-neutral (the thread's start-up hook initialises COM on Windows), so the
//! bounding is tested on every platform.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcec_rules::{ErrorCode, ToolError};

type Job = Box<dyn FnOnce() + Send>;

/// Abandoned workers alive at once, at most.
pub const MAX_STUCK: usize = 4;

/// One worker thread at a time, replaced when it stops answering.
pub struct Worker {
    current: Mutex<Option<(u64, Sender<Job>)>>,
    /// Workers started so far: which one a slot holds.
    started: AtomicUsize,
    stuck: Arc<AtomicUsize>,
    init: fn(),
    name: &'static str,
}

impl Worker {
    /// A worker whose threads run `init` first (COM's apartment set-up).
    pub fn new(name: &'static str, init: fn()) -> Worker {
        Worker {
            current: Mutex::new(None),
            started: AtomicUsize::new(0),
            stuck: Arc::new(AtomicUsize::new(0)),
            init,
            name,
        }
    }

    fn spawn(&self) -> Result<(u64, Sender<Job>), ToolError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let init = self.init;
        std::thread::Builder::new()
            .name(self.name.into())
            .spawn(move || {
                init();
                for job in rx {
                    job();
                }
            })
            .map_err(|e| {
                ToolError::new(ErrorCode::Internal, format!("cannot start the {} thread: {e}", self.name))
            })?;
        Ok((self.started.fetch_add(1, Ordering::SeqCst) as u64, tx))
    }

    /// Run `f` on the worker, waiting at most `timeout` for its answer.
    pub fn run<T: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ToolError> {
        if self.stuck.load(Ordering::SeqCst) >= MAX_STUCK {
            return Err(ToolError::new(
                ErrorCode::Unavailable,
                "Applications are not answering accessibility calls (several calls are still stuck); \
                 try again later.",
            ));
        }
        let (reply, answer) = mpsc::sync_channel::<T>(1);
        let stuck = Arc::clone(&self.stuck);
        let gave_up = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let gave_up_job = Arc::clone(&gave_up);
        let job: Job = Box::new(move || {
            let out = f();
            // A late answer frees the abandoned worker's slot.
            if gave_up_job.load(Ordering::SeqCst) {
                stuck.fetch_sub(1, Ordering::SeqCst);
            }
            let _ = reply.send(out);
        });
        let sender = {
            let mut slot = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            let (n, tx) = match slot.take() {
                Some(current) => current,
                None => self.spawn()?,
            };
            match tx.send(job) {
                Ok(()) => {
                    *slot = Some((n, tx));
                    n
                }
                Err(mpsc::SendError(job)) => {
                    // The worker is gone (a job panicked): a fresh one.
                    let (n, fresh) = self.spawn()?;
                    fresh
                        .send(job)
                        .map_err(|_| ToolError::new(ErrorCode::Internal, "the accessibility thread ended"))?;
                    *slot = Some((n, fresh));
                    n
                }
            }
        };
        match answer.recv_timeout(timeout) {
            Ok(v) => Ok(v),
            Err(RecvTimeoutError::Timeout) => {
                // Count it stuck unless it answered meanwhile (then the job never decrements).
                gave_up.store(true, Ordering::SeqCst);
                if let Ok(v) = answer.try_recv() {
                    return Ok(v);
                }
                self.stuck.fetch_add(1, Ordering::SeqCst);
                let mut slot = self.current.lock().unwrap_or_else(PoisonError::into_inner);
                if slot.as_ref().is_some_and(|(n, _)| *n == sender) {
                    *slot = None;
                }
                tracing::warn!(
                    "an accessibility call took over {} ms; its thread is abandoned",
                    timeout.as_millis()
                );
                Err(ToolError::new(
                    ErrorCode::Unavailable,
                    format!(
                        "The application did not answer the accessibility call within {} ms.",
                        timeout.as_millis()
                    ),
                ))
            }
            Err(RecvTimeoutError::Disconnected) => {
                Err(ToolError::new(ErrorCode::Internal, "the accessibility call failed (its thread ended)"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hung_call_costs_its_timeout_and_the_next_call_answers() {
        let w = Worker::new("test-worker", || {});
        assert_eq!(w.run(Duration::from_secs(5), || 7).unwrap(), 7);
        let (release, hold) = mpsc::channel::<()>();
        let err = w
            .run(Duration::from_millis(50), move || {
                let _ = hold.recv();
            })
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Unavailable);
        // A fresh worker answers while the first is still stuck.
        assert_eq!(w.run(Duration::from_secs(5), || 8).unwrap(), 8);
        assert_eq!(w.stuck.load(Ordering::SeqCst), 1);
        drop(release);
    }

    #[test]
    fn too_many_stuck_workers_refuse_at_once() {
        let w = Worker::new("test-worker", || {});
        let (_release, hold) = mpsc::channel::<()>();
        let hold = Arc::new(Mutex::new(hold));
        for _ in 0..MAX_STUCK {
            let h = Arc::clone(&hold);
            let _ = w.run(Duration::from_millis(20), move || {
                let _ = h.lock().map(|r| r.recv());
            });
        }
        let err = w.run(Duration::from_secs(5), || ()).unwrap_err();
        assert!(err.detail.contains("not answering"), "{}", err.detail);
    }
}
