//! The operator's side of the desk, brought up before any transport serves: the desktop
//! connection, the emergency stop (provenance monitor → latch), the operator windows, and
//! the two threads that act on the latch: the stop worker (the slow steps of a stop) and
//! the re-arm handler (operator clicks, honoured only on the monitor's attestation).

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, SystemTime};

use mcec_desktop::monitor::x11::X11Monitor;
use mcec_desktop::monitor::{
    LastPhysicalInput, MonitorHandle, MonitorSink, MonitorStatus, ProvenanceMonitor,
};
use mcec_desktop::{DesktopConfig, DesktopTools};
use mcec_mcp::audit::audit;
use mcec_mcp::{Agent, CallObserver};
use mcec_operator::{OperatorEvent, OperatorState, Surfaces};
use mcec_rules::StopFlag;
use mcec_rules::gates::DesktopGate;
use mcec_rules::hotkey::Hotkey;
use mcec_rules::latch::{Latch, StopReason, TripKind};

use crate::agent_tab::{AgentTabConfig, AgentTabCore};
use crate::stopless::{NoStopWatch, stopless_display};

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
}

impl OperatorSide {
    pub fn bring_up(plan: Plan<'_>) -> OperatorSide {
        let latch = Latch::new(StopFlag::new());
        let ledger = LastPhysicalInput::new();
        let desktop =
            match DesktopTools::connect_x11(None, DesktopConfig { artifact_dir: plan.artifacts_dir }) {
                Ok(desktop) => Some(Arc::new(desktop)),
                Err(e) => {
                    tracing::info!(
                        "no desktop: {}; the protocol serves and desktop tools answer no-desktop",
                        e.detail
                    );
                    let gate = DesktopGate::NoDesktop { detail: e.detail };
                    return OperatorSide {
                        latch,
                        desktop: None,
                        gate,
                        ui: None,
                        ui_events: None,
                        monitor: None,
                        ledger,
                    };
                }
            };
        let (monitor, gate) = match stopless_display(plan.unsafe_without_stop_on_wayland) {
            Some(gate) => (None, gate),
            None if plan.arm_stop => arm(&latch, &ledger, plan.hotkey_spec),
            None => {
                tracing::warn!("the emergency stop is not armed (EmergencyStopEnabled is false)");
                (None, DesktopGate::NotArmed { why: "EmergencyStopEnabled is false".into() })
            }
        };
        let (ui, ui_events) = start_ui(plan.surfaces);
        if let Some(ui) = ui.as_ref().filter(|_| !gate.stop_armed()) {
            ui.set_front_door(gate.stop_line());
        }
        OperatorSide { latch, desktop, gate, ui, ui_events, monitor, ledger }
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
        let OperatorSide { latch, desktop, ui, ui_events, monitor, ledger, .. } = self;
        if let Some(events) = ui_events {
            let tab = match (agent_tab, &ui) {
                (Some(config), Some(ui)) => {
                    let core = AgentTabCore::new(
                        config,
                        ui.clone(),
                        ledger.clone(),
                        latch.clone(),
                        monitor.is_some(),
                    );
                    let (tx, rx) = mpsc::channel();
                    spawn("mcec-agent-tab", move || agent_tab_worker(rx, core));
                    Some(tx)
                }
                _ => None,
            };
            let (latch, ui, agent) = (latch.clone(), ui.clone(), agent.clone());
            spawn("mcec-rearm", move || rearm_handler(events, latch, ledger, ui, agent, tab));
        }
        spawn("mcec-stop-worker", move || stop_worker(latch, monitor, desktop, ui, agent));
    }
}

fn arm(latch: &Latch, ledger: &LastPhysicalInput, spec: &str) -> (Option<MonitorHandle>, DesktopGate) {
    let (hotkey, warning) = Hotkey::from_settings(spec);
    if let Some(warning) = warning {
        tracing::warn!("{warning}");
    }
    let started = X11Monitor::new(None)
        .and_then(|monitor| monitor.start(MonitorSink::new(latch.clone(), hotkey, ledger.clone())));
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

fn start_ui(surfaces: Surfaces) -> (Option<OperatorState>, Option<Receiver<OperatorEvent>>) {
    if !(surfaces.overlay || surfaces.prompt || surfaces.host_window) {
        return (None, None);
    }
    let state = OperatorState::new();
    let (tx, rx) = mpsc::channel();
    match mcec_operator::spawn_operator_ui_thread(state.clone(), tx, surfaces) {
        Ok(handle) => {
            spawn("mcec-ui-watch", move || match handle.join() {
                Ok(Ok(())) => tracing::info!("operator windows closed"),
                Ok(Err(e)) => tracing::warn!("operator windows unavailable: {e}"),
                Err(_) => tracing::warn!("operator windows crashed"),
            });
            (Some(state), Some(rx))
        }
        Err(e) => {
            tracing::warn!("operator windows unavailable: {e}");
            (None, None)
        }
    }
}

/// The slow steps of a stop, off the input thread; each step runs whatever the others did.
fn stop_worker(
    latch: Latch,
    monitor: Option<MonitorHandle>,
    desktop: Option<Arc<DesktopTools>>,
    ui: Option<OperatorState>,
    agent: Arc<Agent>,
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
                agent.set_desktop_gate(DesktopGate::NoDesktop {
                    detail: format!("the X display went away: {why}"),
                });
            }
            continue;
        };
        let reason = notice.trip.reason.to_string();
        match notice.kind {
            TripKind::Engaged => {
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

/// Operator clicks from the windows. A re-arm is honoured only when the monitor says the
/// latest press was physical and no tampering was seen recently.
fn rearm_handler(
    events: Receiver<OperatorEvent>,
    latch: Latch,
    ledger: LastPhysicalInput,
    ui: Option<OperatorState>,
    agent: Arc<Agent>,
    agent_tab: Option<Sender<OperatorEvent>>,
) {
    for event in events {
        match event {
            OperatorEvent::RearmClicked { .. } | OperatorEvent::MenuRearm { .. } => {
                // The toolkit saw the press; give the monitor thread a moment to log it too.
                std::thread::sleep(Duration::from_millis(60));
                match latch.rearm(ledger.attest()) {
                    Ok(_) => {
                        audit("emergency-stop", "re-armed by the operator (physical input)");
                        agent.with_record(|r| r.stamp_rearm(SystemTime::now()));
                        if let Some(ui) = &ui {
                            ui.set_rearmed();
                        }
                    }
                    Err(refusal) => {
                        audit("rearm-refused", &refusal.to_string());
                        if let Some(ui) = &ui {
                            ui.show_refusal(format!("Re-arm refused: {refusal}"));
                        }
                    }
                }
            }
            OperatorEvent::LeaveStopped => audit("rearm-prompt", "dismissed; still stopped"),
            OperatorEvent::Quit => {
                tracing::info!("the operator quit mcec from the host window");
                std::process::exit(0);
            }
            // The Agent tab's work (disk, provisioning) runs on its own thread so a re-arm
            // never waits behind a copy of the executable.
            tab_event @ (OperatorEvent::SetProvisioning { .. }
            | OperatorEvent::DeleteSession { .. }
            | OperatorEvent::DeleteAllSessions
            | OperatorEvent::ProvisionNew
            | OperatorEvent::RefreshSessions) => match &agent_tab {
                Some(tab) if tab.send(tab_event).is_ok() => {}
                _ => tracing::warn!("an Agent tab event arrived but this process has no Agent tab"),
            },
        }
    }
}

fn agent_tab_worker(events: Receiver<OperatorEvent>, core: AgentTabCore) {
    for event in events {
        match event {
            OperatorEvent::SetProvisioning { enabled, .. } => core.set_provisioning(enabled),
            OperatorEvent::DeleteSession { id } => core.delete(&id),
            OperatorEvent::DeleteAllSessions => core.delete_all(),
            OperatorEvent::ProvisionNew => core.provision_new(),
            OperatorEvent::RefreshSessions => core.refresh(),
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
