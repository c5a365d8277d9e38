//! The operator's side of the desk, brought up before any transport serves: the desktop
//! connection, the emergency stop (provenance monitor → latch, seeded from the durable stop
//! record), the operator windows, and the threads that act on the latch: the stop worker
//! (`stop_worker.rs`: the slow steps of a stop, the record first), the re-arm
//! (`rearm.rs`, reached through the windows' events in `events.rs`: honoured only when the
//! monitor saw the event that pressed the control come from a physical device,
//! `crate::attest`), the console's End (`end.rs`, judged the same way) and the record
//! follower (`crate::stop_follower`: stops made by other mcec processes on the same display,
//! deleted records written back). Which steps a stop and a
//! re-arm take is `mcec_rules::stop_steps`; `sides.rs` is what they act through. Where the
//! monitor answers the prompts with chords of its own (sway), `chords.rs` wires them to the
//! windows and to the same re-arm and consent paths.

mod chords;
mod end;
mod events;
mod guard;
mod rearm;
mod sides;
mod stop_worker;
mod ui;

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcec_desktop::monitor::{ChordControls, LastPhysicalInput, MonitorHandle, MonitorSink};
use mcec_desktop::{CaptureDefaults, DesktopConfig, DesktopTools};
use mcec_mcp::audit::audit;
use mcec_mcp::{Agent, CallObserver, ConsentAsker};
use mcec_operator::{OperatorEvent, OperatorState, Surfaces};
use mcec_rules::StopFlag;
use mcec_rules::gates::DesktopGate;
use mcec_rules::hotkey::Hotkey;
use mcec_rules::latch::Latch;
use mcec_rules::stop_plan::StopPlan;

use crate::agent_tab::{AgentTabConfig, AgentTabCore};
use crate::attest::Attestor;
use crate::consent::{self, ConsentClick, OperatorConsent, SharedConsent};
use crate::stop_follower::{Keeper, follow_record};
use crate::stopless::{NoStopWatch, stopless_display};
pub use end::AgentEnd;
use events::{agent_tab_worker, rearm_handler};
pub use guard::{GuardLink, Who};
use rearm::Rearm;
use stop_worker::stop_worker;
use ui::start_ui;
pub use ui::{UiShutdown, exit_after_ui};

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
    /// Who this process is to its display's guard; `None` when it takes no part (no windows,
    /// or no armed stop whose monitor could judge a re-arm).
    guard: Option<Who>,
    /// Its place in the guard, shared with the consent asker before the guard starts.
    guard_link: GuardLink,
    /// The consent prompt's asker, which the guard also puts its members' requests through.
    consent: Option<Arc<OperatorConsent>>,
    /// Set when the operator's attested End reaches this process (`end.rs`).
    end: Arc<AgentEnd>,
    /// The prompts' chords, where the monitor answers them (sway); the guard's members learn
    /// of the guard's bindings through them.
    controls: ChordControls,
}

/// What to bring up.
pub struct Plan<'a> {
    pub artifacts_dir: std::path::PathBuf,
    /// Whether to arm the stop chord, or why not (the settings and the mode decide).
    pub stop: StopPlan,
    pub hotkey_spec: &'a str,
    pub surfaces: Surfaces,
    /// `UnsafeAllowActuationWithoutStopOnWayland`: act on a display where the stop cannot be armed.
    pub unsafe_without_stop_on_wayland: bool,
    /// The `Capture*` settings.
    pub capture: CaptureDefaults,
    /// The display the tools act on (the stop always watches the operator's).
    pub tools: crate::tool_display::ToolDisplay,
    /// Who this process is to the display's guard.
    pub who: Who,
}

impl OperatorSide {
    pub fn bring_up(plan: Plan<'_>) -> OperatorSide {
        let latch = Latch::new(StopFlag::new());
        // A headless own display has no operator keyboard: its stop is its own display's record.
        let headless = match &plan.tools {
            crate::tool_display::ToolDisplay::Own(desk) if desk.headless() => Some(desk.display.clone()),
            _ => None,
        };
        let record = match &headless {
            Some(display) => Keeper::seed_from(crate::headless_stop::records(display), &latch),
            None => Keeper::seed(&latch),
        };
        let ledger = LastPhysicalInput::new();
        let controls = ChordControls::default();
        let desktop = match crate::platform::connect_desktop(
            DesktopConfig { artifact_dir: plan.artifacts_dir },
            &plan.tools,
        ) {
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
                    guard: None,
                    guard_link: GuardLink::default(),
                    consent: None,
                    end: Arc::default(),
                    controls,
                };
            }
        };
        let stopless = match &headless {
            Some(display) => Some(crate::headless_stop::gate(display)),
            None => stopless_display(plan.unsafe_without_stop_on_wayland),
        };
        let (monitor, gate) = match stopless {
            Some(gate) => (None, gate),
            None => match plan.stop.gate() {
                None => arm(&latch, &ledger, &controls, plan.hotkey_spec),
                Some(gate) => {
                    match plan.stop {
                        StopPlan::NotNeeded => tracing::info!("{}", gate.stop_line()),
                        _ => tracing::warn!("{}", gate.stop_line()),
                    }
                    if let Some((event, detail)) = plan.stop.audit() {
                        audit(event, detail);
                    }
                    (None, gate)
                }
            },
        };
        let gate = record.gate(gate);
        // Only a process whose monitor can judge a re-arm takes part in the display's guard;
        // its windows stay hidden until it knows whether it is the guard.
        let guard = (monitor.is_some() && guard::hide_until_elected()).then_some(plan.who);
        let (ui, ui_events, ui_thread) = start_ui(plan.surfaces, guard.is_some());
        if let Some(ui) = ui.as_ref().filter(|_| !gate.stop_armed()) {
            ui.set_front_door(gate.stop_line());
            ui.set_stop_unarmed();
        }
        let ui_events = ui_events.map(|(events, sender)| {
            if let Some(ui) = &ui {
                chords::answer_by_chord(&controls, ui, sender);
            }
            events
        });
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
            guard,
            guard_link: GuardLink::default(),
            consent: None,
            end: Arc::default(),
            controls,
        }
    }

    /// What puts `request-command-access` to the operator (the consent prompt, checked
    /// against this side's provenance monitor).
    pub fn consent_asker(&mut self) -> Box<dyn ConsentAsker> {
        let (tx, rx) = consent::channel();
        self.consent_clicks = Some(tx);
        let consent = Arc::new(OperatorConsent {
            ui: self.ui.clone().zip(self.ui_thread.clone()),
            clicks: Mutex::new(rx),
            attestor: Attestor {
                ledger: self.ledger.clone(),
                latch: self.latch.clone(),
                monitored: self.monitor.is_some(),
            },
            guard: self.guard_link.clone(),
        });
        self.consent = Some(consent.clone());
        Box::new(SharedConsent(consent))
    }

    /// The keeper of this process's stop record (retired as the process ends).
    pub fn stop_record(&self) -> Keeper {
        self.record.clone()
    }

    /// What the serving loop waits on beside the signals: the operator's End for this
    /// process's agent.
    pub fn agent_end(&self) -> Arc<AgentEnd> {
        self.end.clone()
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
            guard,
            guard_link,
            consent,
            end,
            controls,
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
        let guard = match (guard, &ui) {
            (Some(who), Some(ui)) => guard::take_part(
                guard::Sides {
                    ui: ui.clone(),
                    latch: latch.clone(),
                    rearm: rearm.clone(),
                    who,
                    consent,
                    end: end.clone(),
                    chords: controls,
                },
                guard_link,
            ),
            _ => None,
        };
        if let (None, Some(ui)) = (&guard, &ui) {
            ui.set_member(false);
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
            spawn("mcec-rearm", move || {
                rearm_handler(events, rearm, guard, tab, consent_clicks, ui_thread, end);
            });
        }
        spawn("mcec-stop-worker", move || stop_worker(latch, monitor, desktop, ui, agent, record));
    }
}

fn arm(
    latch: &Latch,
    ledger: &LastPhysicalInput,
    controls: &ChordControls,
    spec: &str,
) -> (Option<MonitorHandle>, DesktopGate) {
    let (hotkey, warning) = Hotkey::from_settings(spec);
    if let Some(warning) = warning {
        tracing::warn!("{warning}");
    }
    let sink = MonitorSink::new(latch.clone(), hotkey, ledger.clone()).with_controls(controls.clone());
    let started = crate::platform::start_provenance_monitor(sink);
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
            ui.narrate(summary);
            ui.count_call(summary);
        }
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) {
    if let Err(e) = std::thread::Builder::new().name(name.into()).spawn(f) {
        tracing::error!("cannot start thread {name}: {e}");
    }
}
