//! The operator's side of the desk, brought up before any transport serves: the desktop
//! connection, the emergency stop (provenance monitor → latch, seeded from the durable stop
//! record), the operator windows, and the threads that act on the latch: the stop worker
//! (the slow steps of a stop, the record first), the re-arm handler (operator clicks,
//! honoured only when the monitor saw the event that pressed the control come from a
//! physical device, `crate::attest`) and the record follower (`stop_follower.rs`: stops made
//! by other mcec processes on the same display, deleted records written back).

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use mcec_desktop::monitor::{LastPhysicalInput, MonitorHandle, MonitorSink, MonitorStatus};
use mcec_desktop::{CaptureDefaults, DesktopConfig, DesktopTools};
use mcec_mcp::audit::audit;
use mcec_mcp::{Agent, CallObserver, ConsentAsker};
use mcec_operator::{OperatorEvent, OperatorState, Surfaces};
use mcec_rules::StopFlag;
use mcec_rules::activation::Activation;
use mcec_rules::gates::DesktopGate;
use mcec_rules::hotkey::Hotkey;
use mcec_rules::latch::{Latch, StopReason, TripKind};

use crate::agent_tab::{AgentTabConfig, AgentTabCore};
use crate::attest::Attestor;
use crate::consent::{self, ConsentClick, OperatorConsent};
use crate::stop_follower::{Keeper, follow_record};
use crate::stopless::{NoStopWatch, stopless_display};

/// How often a running process looks at the stop record when nothing woke it earlier.
pub const RECORD_POLL: Duration = Duration::from_millis(200);

/// What was brought up; the agent is built from it, then [`OperatorSide::run`] starts the
/// threads that need the agent.
pub struct OperatorSide {
    pub latch: Latch,
    pub desktop: Option<Arc<DesktopTools>>,
    pub gate: DesktopGate,
    ui: Option<OperatorState>,
    ui_events: Option<Receiver<OperatorEvent>>,
    monitor: Option<MonitorHandle>,
    ledger: LastPhysicalInput,
    record: Keeper,
    ui_thread: Option<UiShutdown>,
    /// Where consent-prompt clicks go, once [`OperatorSide::consent_asker`] made the asker.
    consent_clicks: Option<Sender<ConsentClick>>,
}

/// What to bring up.
pub struct Plan<'a> {
    pub artifacts_dir: std::path::PathBuf,
    /// Arm the stop chord (the settings and the mode decide).
    pub arm_stop: bool,
    pub hotkey_spec: &'a str,
    pub surfaces: Surfaces,
    /// `UnsafeAllowActuationWithoutStopOnWayland`: act on a display where the stop cannot be armed.
    pub unsafe_without_stop_on_wayland: bool,
    /// The `Capture*` settings.
    pub capture: CaptureDefaults,
}

impl OperatorSide {
    pub fn bring_up(plan: Plan<'_>) -> OperatorSide {
        let latch = Latch::new(StopFlag::new());
        let record = Keeper::seed(&latch);
        let ledger = LastPhysicalInput::new();
        let desktop =
            match crate::desktop_backend::connect_desktop(DesktopConfig { artifact_dir: plan.artifacts_dir })
            {
                Ok(mut desktop) => {
                    desktop.set_capture_defaults(plan.capture);
                    Some(Arc::new(desktop))
                }
                Err(e) => {
                    tracing::info!(
                        "no desktop: {}; the protocol serves and desktop tools answer no-desktop",
                        e.detail
                    );
                    let gate = record.gate(DesktopGate::NoDesktop { detail: e.detail });
                    return OperatorSide {
                        latch,
                        desktop: None,
                        gate,
                        ui: None,
                        ui_events: None,
                        monitor: None,
                        ledger,
                        record,
                        ui_thread: None,
                        consent_clicks: None,
                    };
                }
            };
        let (monitor, gate) = match stopless_display(plan.unsafe_without_stop_on_wayland) {
            Some(gate) => (None, gate),
            None if plan.arm_stop => arm(&latch, &ledger, plan.hotkey_spec),
            None => {
                tracing::warn!("the emergency stop is not armed (EmergencyStopEnabled is false)");
                audit(
                    "emergency-stop-disabled",
                    "EmergencyStopEnabled = false: the operator turned the stop off; actuation runs with no stop, no chord, no prompt",
                );
                (None, DesktopGate::NotArmed { why: "EmergencyStopEnabled is false".into() })
            }
        };
        let gate = record.gate(gate);
        let (ui, ui_events, ui_thread) = start_ui(plan.surfaces);
        if let Some(ui) = ui.as_ref().filter(|_| !gate.stop_armed()) {
            ui.set_front_door(gate.stop_line());
            ui.set_stop_unarmed();
        }
        OperatorSide {
            latch,
            desktop,
            gate,
            ui,
            ui_events,
            monitor,
            ledger,
            record,
            ui_thread,
            consent_clicks: None,
        }
    }

    /// What puts `request-command-access` to the operator (the consent prompt, checked
    /// against this side's provenance monitor).
    pub fn consent_asker(&mut self) -> Box<dyn ConsentAsker> {
        let (tx, rx) = consent::channel();
        self.consent_clicks = Some(tx);
        Box::new(OperatorConsent {
            ui: self.ui.clone().zip(self.ui_thread.clone()),
            clicks: Mutex::new(rx),
            attestor: Attestor {
                ledger: self.ledger.clone(),
                latch: self.latch.clone(),
                monitored: self.monitor.is_some(),
            },
        })
    }

    /// The handle that ends the operator windows before the process exits.
    pub fn ui_shutdown(&self) -> Option<UiShutdown> {
        self.ui_thread.clone()
    }

    pub fn stop_flag(&self) -> StopFlag {
        self.latch.flag().clone()
    }

    /// Narrates each admitted call on the overlay (and watches actuation without a stop).
    pub fn observer(&self) -> Option<Box<dyn CallObserver>> {
        let no_stop = NoStopWatch::for_gate(&self.gate);
        (self.ui.is_some() || no_stop.is_some())
            .then(|| Box::new(Narrator { ui: self.ui.clone(), no_stop }) as Box<dyn CallObserver>)
    }

    /// Start the stop worker and the re-arm handler (and, with `agent_tab`, the thread behind
    /// the host settings window's Agent tab); they live as long as the process.
    pub fn run(self, agent: Arc<Agent>, agent_tab: Option<AgentTabConfig>) {
        let OperatorSide {
            latch,
            desktop,
            ui,
            ui_events,
            monitor,
            ledger,
            record,
            ui_thread,
            consent_clicks,
            ..
        } = self;
        record.attach(agent.clone(), ui.clone());
        let rearm = Rearm {
            latch: latch.clone(),
            attestor: Attestor { ledger, latch: latch.clone(), monitored: monitor.is_some() },
            ui: ui.clone(),
            agent: agent.clone(),
            record: record.clone(),
        };
        {
            let (record, latch) = (record.clone(), latch.clone());
            spawn("mcec-stop-record", move || follow_record(record, latch, RECORD_POLL));
        }
        if let Some(events) = ui_events {
            let tab = match (agent_tab, &ui) {
                (Some(config), Some(ui)) => {
                    let core = AgentTabCore::new(config, ui.clone(), rearm.attestor.clone());
                    let (tx, rx) = mpsc::channel();
                    spawn("mcec-agent-tab", move || agent_tab_worker(rx, core));
                    Some(tx)
                }
                _ => None,
            };
            spawn("mcec-rearm", move || rearm_handler(events, rearm, tab, consent_clicks, ui_thread));
        }
        spawn("mcec-stop-worker", move || stop_worker(latch, monitor, desktop, ui, agent, record));
    }
}

fn arm(latch: &Latch, ledger: &LastPhysicalInput, spec: &str) -> (Option<MonitorHandle>, DesktopGate) {
    let (hotkey, warning) = Hotkey::from_settings(spec);
    if let Some(warning) = warning {
        tracing::warn!("{warning}");
    }
    let started = crate::desktop_backend::start_provenance_monitor(MonitorSink::new(
        latch.clone(),
        hotkey,
        ledger.clone(),
    ));
    match started {
        Ok(handle) => {
            tracing::info!("{} (chord {hotkey})", handle.status());
            audit("emergency-stop-armed", &format!("chord={hotkey} status={}", handle.status()));
            (Some(handle), DesktopGate::Ready)
        }
        Err(e) => {
            tracing::error!("the emergency stop could not be armed: {e}; actuation tools are refused");
            audit("emergency-stop-unavailable", &e.to_string());
            (None, DesktopGate::StopUnavailable { why: e.to_string() })
        }
    }
}

fn start_ui(
    surfaces: Surfaces,
) -> (Option<OperatorState>, Option<Receiver<OperatorEvent>>, Option<UiShutdown>) {
    if !(surfaces.overlay || surfaces.prompt || surfaces.host_window) {
        return (None, None, None);
    }
    let state = OperatorState::new();
    let (tx, rx) = mpsc::channel();
    match mcec_operator::spawn_operator_ui_thread(state.clone(), tx, surfaces) {
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
            (Some(state), Some(rx), Some(shutdown))
        }
        Err(e) => {
            tracing::warn!("operator windows unavailable: {e}");
            (None, None, None)
        }
    }
}

/// Ends the operator windows' thread before the process exits.
///
/// Exiting runs the C libraries' exit-time destructors (libglvnd's GLX dispatch, Mesa, Xlib)
/// while the UI thread may still be inside them, setting up its OpenGL context or drawing a
/// frame: that crashed `mcec mcp` now and then when its client closed stdin (SIGSEGV in
/// `mcec-operator-ui`, or libGLX's `__glXFetchDispatchEntry` assertion). So the process first
/// asks the windows to close and waits for the thread to return from the event loop; only
/// then does it exit.
#[derive(Clone)]
pub struct UiShutdown {
    state: OperatorState,
    ended: Arc<(Mutex<bool>, Condvar)>,
}

impl UiShutdown {
    /// Whether the windows' thread has ended (or parked after losing its display).
    pub fn ended(&self) -> bool {
        *self.ended.0.lock().unwrap_or_else(PoisonError::into_inner) || mcec_operator::ui_display_lost()
    }

    /// Ask the windows to close and wait up to `within` for their thread to end. False when
    /// it is still running.
    /// A thread parked after losing its display never returns, so it counts as ended (but it
    /// holds Xlib's display lock: see [`exit_after_ui`]).
    pub fn close(&self, within: Duration) -> bool {
        self.state.request_quit();
        let deadline = Instant::now() + within;
        let (flag, cvar) = &*self.ended;
        let mut ended = flag.lock().unwrap_or_else(PoisonError::into_inner);
        while !*ended && !mcec_operator::ui_display_lost() {
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
/// in time, or their display went away, at once, without the exit-time destructors.
///
/// After a display loss the windows' thread is parked inside Xlib's I/O-error handler, and
/// Xlib called that handler with the display's lock held, for good. libGLX's destructor
/// (run by `exit`) takes that lock to unhook the display, so a normal exit would wait forever.
pub fn exit_after_ui(ui: Option<&UiShutdown>, code: u8) -> ! {
    if let Some(ui) = ui {
        if !ui.close(UI_CLOSE_WAIT) {
            tracing::warn!(
                "the operator windows did not close within {UI_CLOSE_WAIT:?}; exiting without them"
            );
            exit_now(code);
        }
        if mcec_operator::ui_display_lost() {
            tracing::info!("exiting without exit-time destructors: the operator windows' display went away");
            exit_now(code);
        }
    }
    std::process::exit(i32::from(code))
}

#[cfg(windows)]
fn exit_now(code: u8) -> ! {
    // ExitProcess ends every other thread (the operator windows' among them) before the DLLs'
    // detach routines run, so nothing races the exit the way Xlib and Mesa do on Unix.
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

/// The slow steps of a stop, off the input thread; each step runs whatever the others did.
fn stop_worker(
    latch: Latch,
    monitor: Option<MonitorHandle>,
    desktop: Option<Arc<DesktopTools>>,
    ui: Option<OperatorState>,
    agent: Arc<Agent>,
    record: Keeper,
) {
    let mut display_lost = false;
    loop {
        let Some(notice) = latch.wait_for_trip_timeout(Duration::from_millis(500)) else {
            if let Some(MonitorStatus::DisplayLost(why)) = monitor.as_ref().map(MonitorHandle::status)
                && !display_lost
            {
                display_lost = true;
                tracing::error!("the display went away ({why}); desktop tools now answer no-desktop");
                audit("display-lost", &why);
                record.set_base_gate(DesktopGate::NoDesktop {
                    detail: format!("the X display went away: {why}"),
                });
            }
            continue;
        };
        let reason = notice.trip.reason.to_string();
        match notice.kind {
            TripKind::Engaged => {
                // First, before the audit line, the release and the banner: the stop must
                // survive this process even if it dies in the very next instant.
                if !matches!(notice.trip.reason, StopReason::Recorded(_)) {
                    record.record_own_stop(&reason, notice.trip.wall);
                }
                audit("emergency-stop", &format!("engaged; reason={reason}"));
                if let Some(desktop) = &desktop
                    && let Err(e) = desktop.emergency_release()
                {
                    tracing::error!("releasing held input after the stop failed: {e}");
                }
                if let Some(ui) = &ui {
                    ui.set_stopped(reason.clone());
                }
                agent.with_record(|r| r.stamp_stop(notice.trip.wall, reason));
            }
            // Forged input can reach the chord detector before the tamper check sees the
            // request, so the stop may have engaged as a "chord": correct the record.
            TripKind::Retriggered if matches!(notice.trip.reason, StopReason::Tampering(_)) => {
                audit("emergency-stop", &format!("tampering while stopped; reason={reason}"));
                agent.with_record(|r| r.amend_open_stop("input tampering detected"));
            }
            TripKind::Retriggered => {
                audit("emergency-stop", &format!("pressed again while stopped; reason={reason}"));
                if let Some(ui) = &ui {
                    ui.open_prompt();
                }
            }
        }
    }
}

/// What the operator's re-arm touches.
#[derive(Clone)]
struct Rearm {
    latch: Latch,
    attestor: Attestor,
    ui: Option<OperatorState>,
    agent: Arc<Agent>,
    record: Keeper,
}

impl Rearm {
    /// Ask the latch to re-arm on the judgement of the events `event` names (the click or
    /// key that pressed `Re-arm`); an accepted re-arm releases this stop's ids and removes the
    /// durable record. The events are judged first (that may wait for the monitor); then the
    /// record lock is held throughout, so the follower cannot write the record back between
    /// the verdict and the removal.
    fn attempt(&self, by: &str, event: &Activation) -> bool {
        let judgement = self.attestor.judge(event);
        let mut held = self.record.hold();
        let rearmed = match judgement.verdict {
            Ok(judged) => {
                let tamper = self.attestor.ledger.last_tamper();
                self.latch.rearm(judged.attestation(tamper)).map_err(|r| r.to_string())
            }
            Err(refusal) => Err(refusal.to_string()),
        };
        match rearmed {
            Ok(_) => {
                audit("emergency-stop", &format!("re-armed {by}; {}", judgement.detail));
                self.agent.with_record(|r| r.stamp_rearm(SystemTime::now()));
                match held.release_and_clear() {
                    Ok(()) => {
                        if let Some(ui) = &self.ui {
                            ui.set_rearmed();
                        }
                    }
                    // The record still holds the stop: latch again at once, and say why.
                    Err(e) => {
                        let why = format!("the stop record could not be cleared: {e}");
                        self.latch.trip(StopReason::Recorded(why));
                        tracing::error!("the stop record could not be cleared: {e}");
                        audit("rearm-refused", &format!("the stop record could not be cleared: {e}"));
                        if let Some(ui) = &self.ui {
                            ui.show_refusal(format!(
                                "Still stopped: the stop record could not be cleared: {e}"
                            ));
                        }
                    }
                }
                true
            }
            Err(refusal) => {
                audit("rearm-refused", &format!("{refusal} ({by}); {}", judgement.detail));
                if let Some(ui) = &self.ui {
                    ui.show_refusal(format!("Re-arm refused: {refusal}"));
                }
                false
            }
        }
    }
}

/// Operator clicks from the windows. A re-arm is honoured only when the monitor saw the very
/// click (or key) that pressed `Re-arm` come from a physical device, the prompt had been on
/// screen a moment before it, and no tampering was seen recently.
fn rearm_handler(
    events: Receiver<OperatorEvent>,
    rearm: Rearm,
    agent_tab: Option<Sender<OperatorEvent>>,
    consent: Option<Sender<ConsentClick>>,
    ui_thread: Option<UiShutdown>,
) {
    for event in events {
        match event {
            OperatorEvent::RearmClicked { by } | OperatorEvent::MenuRearm { by } => {
                rearm.attempt("by the operator", &by);
            }
            OperatorEvent::LeaveStopped => audit("rearm-prompt", "dismissed; still stopped"),
            OperatorEvent::ConsentAllow { .. } | OperatorEvent::ConsentDeny => {
                let click = match event {
                    OperatorEvent::ConsentAllow { by } => ConsentClick::Allow(by),
                    _ => ConsentClick::Deny,
                };
                if consent.as_ref().is_none_or(|tx| tx.send(click).is_err()) {
                    tracing::warn!("a consent prompt click arrived but no request is waiting");
                }
            }
            OperatorEvent::Quit => {
                tracing::info!("the operator quit mcec from the host window");
                exit_after_ui(ui_thread.as_ref(), 0);
            }
            // The Agent tab's work (disk, provisioning) runs on its own thread so a re-arm
            // never waits behind a copy of the executable.
            tab_event @ (OperatorEvent::SetProvisioning { .. }
            | OperatorEvent::DeleteSession { .. }
            | OperatorEvent::DeleteAllSessions
            | OperatorEvent::ProvisionNew
            | OperatorEvent::RefreshSessions
            | OperatorEvent::CopyHandoff { .. }) => match &agent_tab {
                Some(tab) if tab.send(tab_event).is_ok() => {}
                _ => tracing::warn!("an Agent tab event arrived but this process has no Agent tab"),
            },
        }
    }
}

fn agent_tab_worker(events: Receiver<OperatorEvent>, core: AgentTabCore) {
    for event in events {
        match event {
            OperatorEvent::SetProvisioning { enabled, by } => core.set_provisioning(enabled, &by),
            OperatorEvent::DeleteSession { id } => core.delete(&id),
            OperatorEvent::DeleteAllSessions => core.delete_all(),
            OperatorEvent::ProvisionNew => core.provision_new(),
            OperatorEvent::RefreshSessions => core.refresh(),
            OperatorEvent::CopyHandoff { client, part } => core.copy(&client, part),
            _ => {}
        }
    }
}

struct Narrator {
    ui: Option<OperatorState>,
    no_stop: Option<NoStopWatch>,
}

impl CallObserver for Narrator {
    fn on_call(&self, tool: &str, summary: &str) {
        if let Some(ui) = &self.ui {
            ui.set_acting(true);
        }
        if let Some(watch) = &self.no_stop {
            watch.on_call(tool, self.ui.as_ref());
        }
        if let Some(ui) = &self.ui {
            ui.narrate(if summary.is_empty() { tool.to_string() } else { summary.to_string() });
        }
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) {
    if let Err(e) = std::thread::Builder::new().name(name.into()).spawn(f) {
        tracing::error!("cannot start thread {name}: {e}");
    }
}
