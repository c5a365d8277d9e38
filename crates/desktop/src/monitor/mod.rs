//! The input provenance monitor: who pressed that key, a person or a program?
//!
//! The emergency stop and its re-arm rest on one question about every key and button press:
//! did it come from a physical device? A provenance source answers it for one platform and
//! feeds [`ClassifiedEvent`]s into a [`Dispatcher`], which does the platform-neutral part on
//! the source's own thread: it records presses and releases in [`LastPhysicalInput`] (whose
//! ring the operator's safety decisions ask about the one event that pressed a control), runs the [`ChordDetector`], and on a fire does exactly one thing in the callback,
//! [`Latch::engage`]; the source calls [`Dispatcher::announce`] once out of it, which wakes the
//! stop worker. Tampering (forged input aimed at a physical device) trips the latch at once.
//!
//! [`ProvenanceMonitor`] is the seam: the X11 source (`mcec-desktop-x11`'s `X11Monitor`,
//! XInput2 raw events plus a RECORD watch on XTEST) and the Windows one (`mcec-desktop-windows`'
//! `WindowsMonitor`, an `LLKHF_INJECTED` hook) and the sway one (`mcec-desktop-wayland`'s
//! `SwayMonitor`, per-device key bindings) implement it; an evdev source would be another.
//! Where a window cannot name the event that pressed its control (sway), the source answers
//! the operator's prompts with chords of its own instead ([`ChordControls`]). Nothing here
//! logs on the input thread: the latch wakes a worker, and observers read [`MonitorEvent`]s
//! from a bounded channel that never blocks the sender.
//!
//! Privacy: the monitor sees every key the operator types. [`MonitorEvent::Input`] exists for
//! tests and diagnostics; never log its key codes, and keep the observer channel off in
//! production unless something needs it.

mod controls;
mod ledger;
mod sink;
mod vouched;
pub mod wayland;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use controls::{AnnounceHook, CONTROLS, ChordControls, Control, PressHook, Showing};
pub use ledger::{InputSnapshot, LastPhysicalInput, RAW_RING_SIZE, RawInput};
pub use mcec_rules::activation::{InputEventId, Pressed, Provenance, Witness};
pub use mcec_rules::chord::{ChordDetector, Key};
pub use mcec_rules::latch::Latch;
pub use sink::{Dispatcher, MonitorSink, MonitorStats, StatsSnapshot};
pub use vouched::{SeenPress, Vouch, Vouches};
pub use wayland::{WAYLAND_REASON, WaylandSession};

/// A pressed or released thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// A key, with its logical meaning for the chord and its platform key code.
    Key { key: Key, code: u32 },
    /// A pointer button (X11 numbering: 1-3 left/middle/right, 4-7 scroll).
    Button(u32),
}

/// One input event with its provenance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassifiedEvent {
    pub input: Input,
    pub down: bool,
    /// True only when the source attributes the event to a physical device.
    pub physical: bool,
    /// True when the device is a physical one but a forged request produced the event (X11:
    /// a RECORDed `FakeInput` aimed at it); `physical` is then false.
    pub forged: bool,
    /// The device that produced it (X11: the slave `sourceid`).
    pub source_device: u16,
    /// The platform's event time in milliseconds (X11: the server timestamp, which the core
    /// event a window receives carries too), by which an operator window names the event that
    /// activated a control; 0 where the source has none.
    pub time: u32,
    pub at: Instant,
}

impl ClassifiedEvent {
    /// The provenance the ledger records.
    pub fn provenance(&self) -> Provenance {
        match (self.physical, self.forged) {
            (true, _) => Provenance::Physical,
            (false, true) => Provenance::Forged,
            (false, false) => Provenance::Injected,
        }
    }
}

/// What a monitor reports to an optional observer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MonitorEvent {
    Input(ClassifiedEvent),
    /// Forged input was seen; the latch has already been tripped.
    Tampering {
        detail: String,
        at: Instant,
    },
    /// A source device went away; whatever it held is released in the detector.
    DeviceRemoved {
        device: u16,
    },
    /// The display connection failed; the monitor has stopped.
    DisplayLost {
        detail: String,
    },
}

/// How much the monitor can vouch for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coverage {
    /// Device provenance plus a watch on every client's synthetic input.
    Full,
    /// Device provenance only; forged device input cannot be detected (the reason given).
    BestEffort(String),
}

/// The monitor's state as the status line and the gates see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MonitorStatus {
    Starting,
    Running(Coverage),
    /// The display went away; the stop is not armed any more.
    DisplayLost(String),
    Stopped,
}

impl fmt::Display for MonitorStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MonitorStatus::Starting => f.write_str("emergency stop: starting"),
            MonitorStatus::Running(Coverage::Full) => f.write_str("emergency stop: armed"),
            MonitorStatus::Running(Coverage::BestEffort(why)) => {
                write!(f, "emergency stop: armed, best effort ({why})")
            }
            MonitorStatus::DisplayLost(why) => write!(f, "emergency stop: display lost ({why})"),
            MonitorStatus::Stopped => f.write_str("emergency stop: monitor stopped"),
        }
    }
}

/// Why a monitor could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MonitorError {
    /// No display could be opened (the display name and the reason).
    NoDisplay(String),
    /// The server lacks something the monitor cannot work without (e.g. XInput 2.2).
    Unsupported(String),
    /// A request failed while setting up.
    Setup(String),
    /// The monitor thread could not be spawned.
    Thread(String),
    /// The display belongs to a Wayland session: the stop could not see the operator's
    /// keyboard there, so it is not armed.
    Wayland(WaylandSession),
}

impl fmt::Display for MonitorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MonitorError::NoDisplay(d) => write!(f, "cannot open the display: {d}"),
            MonitorError::Unsupported(d) => {
                write!(f, "the display server cannot tell physical input apart: {d}")
            }
            MonitorError::Setup(d) => write!(f, "setting up the input monitor failed: {d}"),
            MonitorError::Thread(d) => write!(f, "cannot start the input monitor thread: {d}"),
            MonitorError::Wayland(w) => write!(f, "{w}"),
        }
    }
}

impl std::error::Error for MonitorError {}

/// A platform source of classified input.
pub trait ProvenanceMonitor {
    /// Starts the source on its own thread(s). Returns once the source is listening, so a
    /// caller that gets `Ok` knows the stop is armed.
    fn start(self, sink: MonitorSink) -> Result<MonitorHandle, MonitorError>;
}

/// The shared status cell a backend writes and the handle reads.
#[derive(Debug, Clone, Default)]
pub struct StatusCell(Arc<Mutex<Option<MonitorStatus>>>);

impl StatusCell {
    pub fn set(&self, s: MonitorStatus) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(s);
    }

    pub fn get(&self) -> MonitorStatus {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone().unwrap_or(MonitorStatus::Starting)
    }
}

/// A backend's way to make its threads return.
pub type Stopper = Box<dyn FnOnce() + Send>;

/// A running monitor. Dropping it stops the monitor and joins its threads.
pub struct MonitorHandle {
    status: StatusCell,
    stats: MonitorStats,
    stopping: Arc<AtomicBool>,
    stopper: Option<Stopper>,
    threads: Vec<JoinHandle<()>>,
}

impl fmt::Debug for MonitorHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MonitorHandle").field("status", &self.status.get()).finish()
    }
}

impl MonitorHandle {
    /// For backends: wraps the threads a backend started.
    pub fn new(
        status: StatusCell,
        stats: MonitorStats,
        stopping: Arc<AtomicBool>,
        stopper: Stopper,
        threads: Vec<JoinHandle<()>>,
    ) -> Self {
        MonitorHandle { status, stats, stopping, stopper: Some(stopper), threads }
    }

    pub fn status(&self) -> MonitorStatus {
        self.status.get()
    }

    /// Time spent per event on the input thread.
    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }

    /// True while the monitor thread is alive.
    pub fn is_running(&self) -> bool {
        self.threads.first().is_some_and(|t| !t.is_finished())
    }

    /// Stops the monitor and waits (bounded, about 2 s) for its threads. True when they all
    /// ended in time; a thread still stuck on a wedged server is left detached.
    pub fn stop(mut self) -> bool {
        self.shutdown()
    }

    fn shutdown(&mut self) -> bool {
        self.stopping.store(true, Ordering::SeqCst);
        if let Some(stop) = self.stopper.take() {
            stop();
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut all_ended = true;
        for t in self.threads.drain(..) {
            while !t.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            if t.is_finished() {
                let _ = t.join();
            } else {
                all_ended = false;
            }
        }
        if matches!(self.status.get(), MonitorStatus::Running(_) | MonitorStatus::Starting) {
            self.status.set(MonitorStatus::Stopped);
        }
        all_ended
    }
}

impl Drop for MonitorHandle {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}
