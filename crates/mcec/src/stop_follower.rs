//! The running side of the durable stop record: what this process remembers about it (the id
//! of the stop it holds, the stops the operator re-armed it from, whether a record can be
//! written), the thin runner that applies `mcec_rules::stop_record::follow` to what the disk
//! shows, and the desktop gate that an unusable record place takes actuation away from.
//!
//! Every decision is the rules crate's; this file reads, writes, trips the latch and tells
//! the operator. One mutex covers the memory, so the follower, the stop worker and the
//! operator's re-arm (which removes the record) never interleave their looks and writes.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use mcec_mcp::Agent;
use mcec_mcp::audit::audit;
use mcec_operator::OperatorState;
use mcec_rules::gates::DesktopGate;
use mcec_rules::latch::{Latch, StopReason};
use mcec_rules::stop_record::{self, FollowerAction, Observation, Standing, StopId};

use crate::record_watch::RecordWatch;
use crate::stop_record::{StopRecords, fresh_stop_id};

/// How many stops a process remembers being re-armed from.
const RELEASED_CAP: usize = 64;

/// The record, this process's memory of it, and where changes are shown. Clones share one.
#[derive(Clone)]
pub struct Keeper {
    files: Arc<StopRecords>,
    memory: Arc<Mutex<Memory>>,
}

struct Memory {
    /// The process is ending: the record is no longer followed or written back.
    retired: bool,
    /// The stop this process holds while stopped (`None` until assigned or adopted).
    stop_id: Option<StopId>,
    /// Every id the current stop has held; all are released together at the re-arm.
    held: Vec<StopId>,
    /// The stops the operator re-armed this process from, oldest first.
    released: VecDeque<StopId>,
    /// Why no record can be written now; `None` when one can (or is written).
    problem: Option<String>,
    /// The desktop gate before the record's place is considered.
    base_gate: DesktopGate,
    agent: Option<Arc<Agent>>,
    ui: Option<OperatorState>,
}

/// [`Keeper::hold`]: the memory locked, for a re-arm that removes the record.
pub struct Held<'a> {
    files: &'a StopRecords,
    memory: MutexGuard<'a, Memory>,
}

impl Keeper {
    /// Before anything serves: a stop recorded for this display (or a record that cannot be
    /// read) latches this process, so a restart never clears a stop; a place where no record
    /// can be written keeps actuation refused ([`Keeper::gate`]).
    pub fn seed(latch: &Latch) -> Keeper {
        Keeper::seed_from(StopRecords::for_this_process(), latch)
    }

    /// [`Keeper::seed`] for the records of `files`' display.
    pub fn seed_from(files: StopRecords, latch: &Latch) -> Keeper {
        let keeper = Keeper {
            files: Arc::new(files),
            memory: Arc::new(Mutex::new(Memory {
                retired: false,
                stop_id: None,
                held: Vec::new(),
                released: VecDeque::new(),
                problem: None,
                base_gate: DesktopGate::Ready,
                agent: None,
                ui: None,
            })),
        };
        let seen = keeper.files.look();
        let mut memory = keeper.lock();
        match stop_record::follow(&seen, Standing::Armed { released: &[] }) {
            FollowerAction::Latch { reason, id } => {
                tracing::warn!(
                    "{reason}: starting stopped until the operator re-arms ({}; stop record {})",
                    keeper.files.scope(),
                    keeper.files.path().map_or_else(|| "unavailable".into(), |p| p.display().to_string())
                );
                latch.trip(StopReason::Recorded(reason));
                memory.hold_id(id);
            }
            FollowerAction::RefuseActuation(why) => {
                tracing::error!("no stop can be recorded ({why}); actuation is refused until one can");
                audit("emergency-stop-unavailable", &format!("no stop can be recorded: {why}"));
                memory.problem = Some(why);
            }
            FollowerAction::Ignore | FollowerAction::WriteBack | FollowerAction::Adopt(_) => {}
        }
        drop(memory);
        keeper
    }

    fn lock(&self) -> MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The stop this process holds while stopped (the display's guard shows it).
    #[cfg_attr(not(unix), allow(dead_code, reason = "the guard of a display is Unix-only"))]
    pub fn stop_id(&self) -> Option<String> {
        self.lock().stop_id.map(|id| id.to_string())
    }

    /// The file this display's record lives in, for the watch.
    pub fn record_path(&self) -> Option<std::path::PathBuf> {
        self.files.path()
    }

    /// The gate for `base` (what arming the stop gave) with the record's place considered;
    /// `base` is remembered for later changes.
    pub fn gate(&self, base: DesktopGate) -> DesktopGate {
        let mut memory = self.lock();
        memory.base_gate = base;
        memory.gate()
    }

    /// Where changes of the gate and of the record are shown from now on.
    pub fn attach(&self, agent: Arc<Agent>, ui: Option<OperatorState>) {
        let mut memory = self.lock();
        agent.set_desktop_gate(memory.gate());
        memory.agent = Some(agent);
        if let Some(ui) = &ui {
            ui.set_stop_unrecorded(memory.problem.clone());
        }
        memory.ui = ui;
    }

    /// The desktop went away (or came back): the new base gate.
    pub fn set_base_gate(&self, base: DesktopGate) {
        let mut memory = self.lock();
        memory.base_gate = base;
        memory.publish();
    }

    /// This process's own stop engaged (chord, tampering): record it under its id, first. A
    /// failure is logged, audited, put on the banner ("not recorded") and into the gate, and
    /// returned; the stop stays latched.
    pub fn record_own_stop(&self, reason: &str, wall: SystemTime) -> Result<(), String> {
        let mut memory = self.lock();
        let id = memory.current_id();
        let written = self.files.record(reason, wall, id);
        if let Err(e) = &written {
            tracing::error!("the stop could not be recorded ({e}); a restarted mcec would not know of it");
            audit("stop-record-unwritten", e);
        }
        memory.set_problem(written.clone().err());
        written
    }

    /// Lock the memory for a re-arm (see [`Held::release_and_clear`]).
    pub fn hold(&self) -> Held<'_> {
        Held { files: &self.files, memory: self.lock() }
    }

    /// One look at the record's place and what follows from it.
    /// The process is ending: stop following the record and writing it back (a headless own
    /// display's record is removed with its server, `headless_stop::forget`, and must stay so).
    pub fn retire(&self) {
        self.lock().retired = true;
    }

    fn tick(&self, latch: &Latch) {
        let mut memory = self.lock();
        if memory.retired {
            return;
        }
        let seen = self.files.look();
        let action = if latch.is_stopped() {
            stop_record::follow(&seen, Standing::Stopped { id: memory.stop_id })
        } else {
            stop_record::follow(&seen, Standing::Armed { released: memory.released.make_contiguous() })
        };
        match action {
            FollowerAction::Ignore => memory.set_problem(None),
            FollowerAction::Adopt(id) => {
                memory.hold_id(Some(id));
                memory.set_problem(None);
            }
            FollowerAction::Latch { reason, id } => {
                latch.trip(StopReason::Recorded(reason));
                memory.hold_id(id);
                memory.set_problem(None);
            }
            FollowerAction::RefuseActuation(why) => memory.set_problem(Some(why)),
            FollowerAction::WriteBack => {
                let id = memory.current_id();
                let reason = latch
                    .current()
                    .map_or_else(|| "stopped".to_string(), |stop| stop.engaged.reason.to_string());
                match self.files.record(&reason, SystemTime::now(), id) {
                    Ok(()) => {
                        audit("stop-record-written", &format!("stop {id}; found {}", found(&seen)));
                        memory.set_problem(None);
                    }
                    Err(e) => memory.set_problem(Some(e)),
                }
            }
        }
    }
}

impl Memory {
    /// The id of the stop held now, assigning a fresh one when there is none yet.
    fn current_id(&mut self) -> StopId {
        let id = *self.stop_id.get_or_insert_with(fresh_stop_id);
        if !self.held.contains(&id) {
            self.held.push(id);
        }
        id
    }

    fn hold_id(&mut self, id: Option<StopId>) {
        self.stop_id = id;
        if let Some(id) = id.filter(|id| !self.held.contains(id)) {
            self.held.push(id);
        }
    }

    fn gate(&self) -> DesktopGate {
        stop_record::gate_with_record(&self.base_gate, self.problem.as_deref())
    }

    fn publish(&self) {
        if let Some(agent) = &self.agent {
            agent.set_desktop_gate(self.gate());
        }
    }

    /// Whether a record can be written; a change is logged, audited, put on the banner and
    /// into the gate.
    fn set_problem(&mut self, problem: Option<String>) {
        if self.problem == problem {
            return;
        }
        match &problem {
            Some(why) => {
                tracing::error!(
                    "no stop record can be written ({why}); stopped stays stopped, armed may not act"
                );
                audit("stop-record-unusable", why);
            }
            None => {
                tracing::info!("a stop record can be written again");
                audit("stop-record-usable", "a stop record can be written again");
            }
        }
        self.problem = problem;
        if let Some(ui) = &self.ui {
            ui.set_stop_unrecorded(self.problem.clone());
        }
        self.publish();
    }
}

impl Held<'_> {
    /// The operator's attested re-arm was accepted: every id this stop held, and the one the
    /// record names now, are released (their records no longer latch this process), and the
    /// record is removed. Processes still stopped write it back; that is their stop.
    pub fn release_and_clear(&mut self) -> Result<(), String> {
        if let Observation::Stopped { id: Some(id), .. } = self.files.observe() {
            self.memory.hold_id(Some(id));
        }
        let memory = &mut *self.memory;
        for id in memory.held.drain(..) {
            if !memory.released.contains(&id) {
                if memory.released.len() == RELEASED_CAP {
                    memory.released.pop_front();
                }
                memory.released.push_back(id);
            }
        }
        memory.stop_id = None;
        self.files.clear()
    }
}

fn found(seen: &Observation) -> String {
    match seen {
        Observation::Absent => "no record".into(),
        Observation::Stopped { id: Some(id), .. } => format!("a record of stop {id}"),
        Observation::Stopped { id: None, .. } => "a record without a stop id".into(),
        Observation::Unreadable(why) => format!("an unreadable record ({why})"),
        Observation::Unusable(why) => why.clone(),
    }
}

/// The follower thread: looks at the record whenever its directory changes and at least
/// every `poll`, for as long as the process lives.
pub fn follow_record(keeper: Keeper, latch: Latch, poll: Duration) {
    if *keeper.files.scope() == mcec_rules::stop_record::Scope::NoDisplay {
        return; // no desktop, no record applies
    }
    let mut watch = RecordWatch::new(keeper.record_path());
    loop {
        let _woke = watch.wait(poll);
        keeper.tick(&latch);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use mcec_rules::StopFlag;
    use mcec_rules::latch::RearmAttestation;
    use mcec_rules::stop_record::Scope;

    fn process(dir: &std::path::Path) -> (Keeper, Latch) {
        let latch = Latch::new(StopFlag::new());
        (Keeper::seed_from(StopRecords::at(dir.to_path_buf(), Scope::Display(9)), &latch), latch)
    }

    fn chord(keeper: &Keeper, latch: &Latch) {
        latch.trip(StopReason::Chord("Ctrl+Alt+Shift+S".into()));
        let _recorded_or_marked =
            keeper.record_own_stop("operator pressed Ctrl+Alt+Shift+S", SystemTime::now());
    }

    fn rearm(keeper: &Keeper, latch: &Latch) {
        let mut held = keeper.hold();
        let physical = RearmAttestation {
            input_physical: true,
            input_at: Some(std::time::Instant::now()),
            last_tamper_at: None,
        };
        latch.rearm(physical).expect("an attested re-arm");
        held.release_and_clear().expect("clear");
    }

    /// Two processes latch on one chord; the operator re-arms one; the other keeps the record
    /// (written back however often it is deleted) and the re-armed one is not stopped by it;
    /// a relaunch is; a new stop stops the re-armed one again.
    #[test]
    fn one_rearm_frees_one_process_and_the_record_follows_the_other() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("stop");
        let record = dir.join("display-9");
        let (a, a_latch) = process(&dir);
        let (b, b_latch) = process(&dir);
        chord(&a, &a_latch);
        chord(&b, &b_latch);
        for _ in 0..2 {
            a.tick(&a_latch);
            b.tick(&b_latch);
        }
        rearm(&a, &a_latch);
        assert!(!record.exists(), "the re-arm removed the record");
        for round in 0..3 {
            b.tick(&b_latch);
            assert!(record.exists(), "round {round}: the stopped process did not write it back");
            a.tick(&a_latch);
            assert!(
                !a_latch.is_stopped(),
                "round {round}: the same stop's record stopped the re-armed process"
            );
            std::fs::remove_file(&record).expect("rm");
            std::fs::remove_file(&record).expect_err("absent after absent");
        }
        b.tick(&b_latch);
        assert!(b_latch.is_stopped() && record.exists());
        let (_c, c_latch) = process(&dir);
        assert!(c_latch.is_stopped(), "a relaunch while the record exists is stopped");

        chord(&b, &b_latch); // pressed again while stopped: the same stop, nothing for `a`
        a.tick(&a_latch);
        assert!(!a_latch.is_stopped());
        std::fs::write(&record, "mcec-stop v1\nreason: another stop\nstop-id: 00000000000000aa\n")
            .expect("write");
        a.tick(&a_latch);
        assert!(a_latch.is_stopped(), "a record of another stop latches the re-armed process");
    }

    #[test]
    fn a_stop_that_cannot_be_recorded_stays_latched_and_the_gate_refuses_actuation() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("stop");
        let (a, latch) = process(&dir);
        assert_eq!(a.gate(DesktopGate::Ready), DesktopGate::Ready, "the positive control");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::create_dir(dir.join("display-9")).expect("a directory in the record's place");
        a.tick(&latch);
        assert!(!latch.is_stopped());
        assert!(!a.gate(DesktopGate::Ready).actuation_allowed(), "an armed process may not act");
        chord(&a, &latch);
        a.tick(&latch);
        assert!(latch.is_stopped());
        assert!(a.lock().problem.as_deref().is_some_and(|why| why.contains("display-9")));
        let (_b, b_latch) = process(&dir);
        assert!(!b_latch.is_stopped());
        std::fs::remove_dir(dir.join("display-9")).expect("rmdir");
        a.tick(&latch);
        assert!(dir.join("display-9").is_file(), "once it can, the stopped process records its stop");
        assert_eq!(a.gate(DesktopGate::Ready), DesktopGate::Ready);
        assert!(a.lock().problem.is_none());
    }
}
