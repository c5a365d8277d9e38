//! The stop on sway: per-device key bindings, learned of through sway's IPC.
//!
//! sway tells the operator's keyboards from injected input by device: a binding restricted
//! with `--input-device` fires only for keys from that device, and keys from the
//! virtual-keyboard protocol (what every injecting Wayland client, mcec's own injector
//! included, uses) come from a `virtual keyboard` device of their own. So at start mcec binds
//! its chord, with a `nop` carrying a random nonce, on every keyboard sway lists that is not a
//! virtual one, and subscribes to sway's events: a `binding` event with the nonce is the
//! operator's chord and latches the stop; an `input` event makes it bind new keyboards and
//! forget removed ones; a `mode` event makes it bind in the new binding mode too.
//!
//! Any process of the same user can change bindings over sway's IPC, and sway announces no
//! such change. So every 500 ms, and after every event, the guard (`monitor/guard.rs`) removes
//! and re-adds each binding in one IPC message (sway runs it with no input handled between
//! the two commands): a removal that sway answers "no such binding" means someone took it
//! away, and that latches the stop as tampering. A lost IPC connection latches too: the
//! bindings could no longer be checked. At exit the bindings are removed.
//!
//! The operator's prompts are answered the same way (`monitor/prompts.rs`): while one is
//! shown, its chord (`Ctrl+Alt+Shift+R` re-arms) is bound on the physical keyboards with a
//! nonce of its own, and the `binding` event with that nonce is the press of its control,
//! handed to the core through `mcec_desktop::monitor::ChordControls` and judged there.
//! A member of a display's guard binds none: its guard announces commitments to its bindings'
//! markers, and a fired binding of the guard whose marker matches one is recorded here as a
//! press of that control, physical or injected as announced (`ChordControls::pressed_vouched`);
//! the guard's claim names the marker, and the member judges its own record of the press.
//!
//! What it cannot see: a keyboard created below the compositor (a uinput device) looks
//! physical to sway, as it does to X; a binding replaced by one with another command for the
//! same chord and device is restored at the next check but not detected.

mod guard;
mod prompts;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mcec_desktop::monitor::{
    Control, Coverage, MonitorError, MonitorHandle, MonitorSink, MonitorStatus, ProvenanceMonitor, StatusCell,
};
use mcec_rules::latch::StopReason;
use serde_json::Value;

use crate::chord::{Binding, commitment, marker_of};
use crate::ipc::{EventKind, Frame, Ipc, Message};
use guard::Guard;
use prompts::{Binder, Marks};

/// How often the bindings are checked when no event arrives.
pub const CHECK_EVERY: Duration = Duration::from_millis(500);

/// What the status line says the stop can and cannot vouch for on sway.
const COVERAGE: &str = "sway per-device bindings; another program of this user can remove them, which stops";

/// The sway source, for the compositor at `$SWAYSOCK`.
#[derive(Debug, Clone)]
pub struct SwayMonitor {
    socket: PathBuf,
}

impl SwayMonitor {
    /// The monitor for the sway of this session (`$SWAYSOCK`).
    pub fn from_env() -> Result<SwayMonitor, MonitorError> {
        match std::env::var_os("SWAYSOCK").filter(|s| !s.is_empty()) {
            Some(socket) => Ok(SwayMonitor::new(PathBuf::from(socket))),
            None => Err(MonitorError::NoDisplay("SWAYSOCK is not set".into())),
        }
    }

    pub fn new(socket: PathBuf) -> SwayMonitor {
        SwayMonitor { socket }
    }

    fn connect(&self) -> Result<Ipc, MonitorError> {
        Ipc::connect(&self.socket)
            .map_err(|e| MonitorError::NoDisplay(format!("{}: {e}", self.socket.display())))
    }
}

impl ProvenanceMonitor for SwayMonitor {
    fn start(self, sink: MonitorSink) -> Result<MonitorHandle, MonitorError> {
        let binding = Binding::stop(&sink.hotkey, &nonce()?);
        let mut events = self.connect()?;
        let subscribed = events
            .request(Message::Subscribe, r#"["binding","input","mode"]"#)
            .map_err(|e| MonitorError::Setup(e.to_string()))?;
        if subscribed.get("success").and_then(Value::as_bool) != Some(true) {
            return Err(MonitorError::Unsupported(format!("sway refused the subscription: {subscribed}")));
        }
        let mut guard = Guard::new(self.connect()?, vec![binding.clone()]);
        guard.sync_devices().map_err(MonitorError::Setup)?;
        if guard.devices().is_empty() {
            guard.remove_all();
            return Err(MonitorError::Unsupported(
                "sway lists no keyboard that is not a virtual one: nothing could press the stop".into(),
            ));
        }
        if let Err(why) = guard.check() {
            guard.remove_all();
            return Err(MonitorError::Setup(why));
        }
        let status = StatusCell::default();
        status.set(MonitorStatus::Running(Coverage::BestEffort(COVERAGE.into())));
        let stopping = Arc::new(AtomicBool::new(false));
        let marks = Arc::new(Marks::default());
        let binder = Binder {
            guard: Guard::new(self.connect()?, Vec::new()),
            sink: sink.clone(),
            marks: marks.clone(),
            stopping: stopping.clone(),
        };
        let run =
            Run { sink: sink.clone(), status: status.clone(), stopping: stopping.clone(), binding, marks };
        let thread = std::thread::Builder::new()
            .name("mcec-sway-stop".into())
            .spawn(move || run.serve(events, guard))
            .map_err(|e| MonitorError::Thread(e.to_string()))?;
        let mut threads = vec![thread];
        match std::thread::Builder::new().name("mcec-sway-prompts".into()).spawn(move || binder.serve()) {
            Ok(prompts) => {
                threads.push(prompts);
                for control in Control::ALL {
                    sink.controls.offer(control, control.chord(&sink.hotkey));
                }
            }
            Err(e) => {
                tracing::warn!("sway: no thread for the prompts' chords ({e}); a stop cannot be re-armed")
            }
        }
        let controls = sink.controls.clone();
        // The threads look at `stopping` at least every CHECK_EVERY; the binder is woken.
        Ok(MonitorHandle::new(
            status,
            sink.stats.clone(),
            stopping,
            Box::new(move || controls.wake()),
            threads,
        ))
    }
}

/// The monitor thread's state.
struct Run {
    sink: MonitorSink,
    status: StatusCell,
    stopping: Arc<AtomicBool>,
    binding: Binding,
    /// The shown prompts' bindings.
    marks: Arc<Marks>,
}

impl Run {
    fn serve(self, mut events: Ipc, mut guard: Guard) {
        let mut last_check = Instant::now();
        while !self.stopping.load(Ordering::SeqCst) {
            let wait = CHECK_EVERY.saturating_sub(last_check.elapsed()).max(Duration::from_millis(1));
            let frame = match events.read_frame(Some(wait)) {
                Ok(frame) => frame,
                Err(e) => {
                    self.lost(format!("the event connection failed: {e}"));
                    return;
                }
            };
            let started = Instant::now();
            if let Some(Frame::Event(kind, value)) = &frame {
                match kind {
                    EventKind::Binding => self.binding_fired(value),
                    EventKind::Input => {
                        if let Err(why) = guard.sync_devices() {
                            self.lost(why);
                            return;
                        }
                    }
                    EventKind::Mode => guard.mode_changed(),
                    EventKind::Other(_) => {}
                }
                self.sink.stats.add(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
            }
            if frame.is_some() || last_check.elapsed() >= CHECK_EVERY {
                last_check = Instant::now();
                match guard.check() {
                    Ok(()) => {}
                    Err(why) if guard.connected() => self.sink.tampering(why),
                    Err(why) => {
                        self.lost(why);
                        return;
                    }
                }
            }
        }
        guard.remove_all();
    }

    /// A binding fired: the stop's is the operator's chord; a shown prompt's presses its
    /// control (physical or not, as the binding's keyboard was).
    fn binding_fired(&self, event: &Value) {
        let command = event.pointer("/binding/command").and_then(Value::as_str).unwrap_or("");
        let code = event.pointer("/binding/input_code").and_then(Value::as_u64).unwrap_or(0);
        let code = u32::try_from(code).unwrap_or(0);
        let controls = &self.sink.controls;
        if self.binding.is_ours(command) {
            self.sink.latch.trip(StopReason::Chord(self.sink.hotkey.to_string()));
        } else if let Some((control, generation, provenance)) = self.marks.find(command) {
            let marker = marker_of(command).unwrap_or("");
            if !controls.pressed(control, generation, marker, code, provenance, &self.sink.ledger) {
                tracing::debug!("sway: a {control} chord of a prompt no longer shown");
            }
        } else if let Some(marker) = marker_of(command)
            && controls.pressed_vouched(&commitment(marker), marker, code, &self.sink.ledger)
        {
            tracing::debug!("sway: a press of a binding the display's guard announced");
        }
    }

    /// The IPC connection is gone: the bindings cannot be checked any more, so the stop latches.
    fn lost(&self, why: String) {
        self.sink.latch.trip(StopReason::Tampering(format!(
            "sway IPC lost, the stop's bindings cannot be checked: {why}"
        )));
        self.status.set(MonitorStatus::DisplayLost(why.clone()));
        self.sink.display_lost(why);
    }
}

/// A fresh random nonce for a binding.
fn nonce() -> Result<String, MonitorError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes)
        .map_err(|e| MonitorError::Setup(format!("no randomness for the nonce: {e}")))?;
    Ok(hex::encode(bytes))
}
