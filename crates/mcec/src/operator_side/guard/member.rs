//! The election and the member's side. A process takes the display's guard lock when it can
//! (then it leads, `leader.rs`); otherwise it connects to the guard, says who it is, shows none
//! of its own windows, reports its stop and its agent's actions, and judges every re-arm and
//! End claim itself (on sway against its own record of the press of the guard's binding the
//! claim names, `sway.rs`). When the guard goes away it elects again; while no guard answers for
//! [`ALONE_GRACE`] it shows its own windows, so nothing stopped is ever left without a prompt.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcec_desktop::monitor::{ChordControls, Control};
use mcec_mcp::audit::audit;
use mcec_operator::Mode;
use mcec_rules::StopFlag;
use mcec_rules::consent::Outcome;
use mcec_rules::guard::{
    ConsentAnswer, Hello, MemberState, PROTOCOL, PressClaim, ToGuard, ToMember, claim_activation,
    decode_to_member, encode,
};
use mcec_sessions::{InstanceLock, LockError};

use super::leader::lead;
use super::place::Place;
use super::sway::{adopted, own_activation};
use super::wire::{Lines, Sender, same_user_peer};
use super::{GuardLink, Sides};
use crate::attest::Attestor;

/// How often a member waiting for the guard's answer to a request looks at its stop flag.
const CONSENT_TICK: Duration = Duration::from_millis(50);

/// A member's connection to its guard, as its consent asker uses it.
pub struct Connection {
    sender: Arc<Mutex<Sender>>,
    guard_pid: u32,
    lock: PathBuf,
    next: AtomicU64,
    pending: Mutex<HashMap<u64, mpsc::Sender<ConsentAnswer>>>,
    chords: ChordControls,
}

impl Connection {
    /// Put `reason` and `commands` to the guard's one prompt and wait for the operator, this
    /// process's stop, or the timeout. An `Allow` counts only when it came from the lock's holder
    /// and this process's own monitor saw the events that pressed it, as for its own prompt.
    pub fn ask(&self, reason: &str, commands: &[String], stop: &StopFlag, attestor: &Attestor) -> Outcome {
        let (tx, rx) = mpsc::channel();
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).insert(id, tx);
        let asked = ToGuard::Consent { id, reason: reason.into(), commands: commands.to_vec() };
        let outcome = if send(&self.sender, &asked).is_err() {
            Outcome::Unavailable("the display's guard went away".into())
        } else {
            self.wait(id, &rx, stop, attestor)
        };
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
        outcome
    }

    fn wait(
        &self,
        id: u64,
        rx: &mpsc::Receiver<ConsentAnswer>,
        stop: &StopFlag,
        attestor: &Attestor,
    ) -> Outcome {
        let deadline = Instant::now() + crate::consent::timeout();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if stop.is_set() || left.is_zero() {
                let _ = send(&self.sender, &ToGuard::Withdrawn { id });
                return if stop.is_set() { Outcome::Stopped } else { Outcome::TimedOut };
            }
            match rx.recv_timeout(left.min(CONSENT_TICK)) {
                Ok(ConsentAnswer::Allowed(claim)) => return self.judge_allow(&claim, stop, attestor),
                Ok(ConsentAnswer::Denied) => return Outcome::Denied,
                Ok(ConsentAnswer::TimedOut) => return Outcome::TimedOut,
                Ok(ConsentAnswer::Unavailable(why)) => return Outcome::Unavailable(why),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Outcome::Unavailable("the display's guard went away while asking".into());
                }
            }
        }
    }

    fn judge_allow(&self, claim: &PressClaim, stop: &StopFlag, attestor: &Attestor) -> Outcome {
        let holder = mcec_sessions::lock::holder_pid(&self.lock);
        let act = claim_activation(claim, Some(self.guard_pid), holder, Instant::now())
            .and_then(|act| own_activation(&self.chords, claim, act, Control::Allow));
        match act {
            Err(refusal) => {
                audit(
                    "consent-refused",
                    &format!("{}: an Allow message on the guard socket: {refusal}", refusal.code()),
                );
                Outcome::Unavailable(format!("the Allow could not be confirmed: {refusal}"))
            }
            Ok(act) => {
                let judgement = attestor.judge(&act);
                match judgement.verdict {
                    Ok(_) if !stop.is_set() => {
                        audit(
                            "consent-allowed",
                            &format!("in the guard's prompt (pid {}); {}", self.guard_pid, judgement.detail),
                        );
                        Outcome::Granted
                    }
                    Ok(_) => Outcome::Stopped,
                    Err(refusal) => {
                        audit("consent-refused", &format!("{}: {}", refusal.code(), judgement.detail));
                        Outcome::Unavailable(format!(
                            "the Allow could not be confirmed by this process: {refusal}"
                        ))
                    }
                }
            }
        }
    }
}

/// How long a process without a reachable guard stays hidden before it shows its own windows
/// (an election after a guard's death takes a few of [`RETRY`]).
const ALONE_GRACE: Duration = Duration::from_millis(700);
/// How often a process without a guard tries the lock and the socket again.
const RETRY: Duration = Duration::from_millis(50);
/// How often a member looks at its own state for the guard.
const REPORT: Duration = Duration::from_millis(50);
/// How long a process that is not the host leaves the lock to the host after a hand-over (if
/// the host has not taken it by then, anyone may).
const HANDOVER_GRACE: Duration = Duration::from_secs(1);

/// How a stint as member or guard ended.
pub enum Ended {
    /// The guard went away: elect at once.
    GuardGone,
    /// The windows are being handed to the host: leave the lock to it a moment.
    HandedOver,
}

/// Elect, lead or follow, and elect again, for as long as the process lives.
pub fn elect(place: Place, sides: Sides, link: GuardLink) {
    let leading = &link.leading;
    if let Err(why) = place.prepare() {
        tracing::warn!("no guard for this display ({why}); this process shows its own windows");
        sides.ui.set_member(false);
        return;
    }
    let mut alone_since = Instant::now();
    let mut leave_lock_until: Option<Instant> = None;
    loop {
        let taken = if leave_lock_until.is_some_and(|until| Instant::now() < until) {
            Err(LockError::HeldByOther { path: place.lock.clone(), pid: None })
        } else {
            InstanceLock::acquire_file(&place.lock)
        };
        match taken {
            Ok(lock) => match lead(&place, &sides, lock, leading) {
                Ok(Ended::HandedOver) => {
                    leave_lock_until = Some(Instant::now() + HANDOVER_GRACE);
                    alone_since = Instant::now();
                    continue;
                }
                ended => {
                    if let Err(why) = ended {
                        tracing::warn!(
                            "cannot be this display's guard ({why}); this process shows its own windows"
                        );
                    }
                    *leading.lock().unwrap_or_else(PoisonError::into_inner) = None;
                    sides.ui.set_others(None);
                    sides.ui.set_member(false);
                    return;
                }
            },
            Err(LockError::HeldByOther { .. }) => {
                if let Ok(stream) = std::os::unix::net::UnixStream::connect(&place.socket) {
                    if let Ended::HandedOver = follow(&place, &sides, stream, &link)
                        && !sides.who.host
                    {
                        leave_lock_until = Some(Instant::now() + HANDOVER_GRACE);
                    }
                    alone_since = Instant::now();
                    continue;
                }
            }
            Err(e) => {
                tracing::warn!("no guard for this display ({e}); this process shows its own windows");
                sides.ui.set_member(false);
                return;
            }
        }
        if alone_since.elapsed() >= ALONE_GRACE {
            sides.ui.set_member(false);
        }
        std::thread::sleep(RETRY);
    }
}

/// Be a member of the guard at the other end of `stream` until it goes away or hands over.
fn follow(place: &Place, sides: &Sides, stream: std::os::unix::net::UnixStream, link: &GuardLink) -> Ended {
    let guard_pid = match same_user_peer(&stream) {
        Ok(pid) => pid,
        Err(why) => {
            audit("guard-refused", &format!("the guard socket {}: {why}", place.socket.display()));
            return Ended::GuardGone;
        }
    };
    let Ok(sender) = Sender::new(&stream) else { return Ended::GuardGone };
    let sender = Arc::new(Mutex::new(sender));
    let since = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let client = sides.rearm.agent.client();
    let hello = Hello {
        v: PROTOCOL,
        pid: std::process::id(),
        client_name: client.as_ref().map(|c| c.0.clone()),
        client_version: client.map(|c| c.1),
        session: sides.who.session.clone(),
        transport: sides.who.transport.into(),
        since,
        host: sides.who.host,
    };
    if send(&sender, &ToGuard::Hello(hello)).is_err() {
        return Ended::GuardGone;
    }
    let connection = Arc::new(Connection {
        sender: sender.clone(),
        guard_pid,
        lock: place.lock.clone(),
        next: AtomicU64::new(1),
        pending: Mutex::new(HashMap::new()),
        chords: sides.chords.clone(),
    });
    *link.member.lock().unwrap_or_else(PoisonError::into_inner) = Some(connection.clone());
    sides.ui.set_member(true);
    tracing::info!(
        "display {}: pid {guard_pid} shows the operator's windows; this process shows none",
        place.display
    );
    let alive = Arc::new(AtomicBool::new(true));
    {
        let (sides, sender, alive) = (sides.clone(), sender.clone(), alive.clone());
        super::super::spawn("mcec-guard-report", move || report(&sides, &sender, &alive));
    }
    let mut lines = Lines::new(stream);
    let mut ended = Ended::GuardGone;
    while let Some(line) = lines.next_line() {
        match decode_to_member(&line) {
            Ok(ToMember::Rearm(claim)) => judge_claim(place, sides, &claim, guard_pid, &sender),
            Ok(ToMember::End(claim)) => judge_end(place, sides, &claim, guard_pid, &sender),
            Ok(ToMember::Handover) => {
                ended = Ended::HandedOver;
                break;
            }
            Ok(ToMember::Bound { chords }) => {
                if mcec_sessions::lock::holder_pid(&place.lock) == Some(guard_pid) {
                    sides.chords.adopt(adopted(&chords));
                } else {
                    audit(
                        "guard-refused",
                        &format!(
                            "not-from-guard: chord bindings announced by pid {guard_pid}, not the lock's holder"
                        ),
                    );
                }
            }
            Ok(ToMember::ConsentAnswer { id, answer }) => {
                let waiting = connection.pending.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
                if let Some(waiting) = waiting {
                    let _ = waiting.send(answer);
                }
            }
            Err(why) => audit("guard-refused", &format!("a message from the guard (pid {guard_pid}): {why}")),
        }
    }
    alive.store(false, Ordering::Relaxed);
    sides.chords.adopt(Default::default());
    *link.member.lock().unwrap_or_else(PoisonError::into_inner) = None;
    // A request waiting on the guard's prompt ends: its sender goes.
    connection.pending.lock().unwrap_or_else(PoisonError::into_inner).clear();
    sender.lock().unwrap_or_else(PoisonError::into_inner).close();
    tracing::info!("display {}: the guard (pid {guard_pid}) went away; electing again", place.display);
    ended
}

fn send(sender: &Mutex<Sender>, message: &ToGuard) -> std::io::Result<()> {
    sender.lock().unwrap_or_else(PoisonError::into_inner).send(&encode(message))
}

/// Tell the guard this process's state whenever it changes, and each new narrated action.
fn report(sides: &Sides, sender: &Mutex<Sender>, alive: &AtomicBool) {
    let mut last: Option<MemberState> = None;
    let mut said: Vec<String> = Vec::new();
    let mut named = None;
    while alive.load(Ordering::Relaxed) {
        let client = sides.rearm.agent.client();
        if client.is_some() && client != named {
            if let Some((name, version)) = client.clone()
                && send(sender, &ToGuard::Client { name, version }).is_err()
            {
                return;
            }
            named = client;
        }
        let snap = sides.ui.snapshot();
        let stopped = sides.latch.is_stopped();
        let stop_id = stopped.then(|| sides.rearm.record.stop_id()).flatten();
        let state = MemberState {
            stopped,
            stop_id,
            acting: !stopped && snap.mode == Mode::Acting,
            calls: Some(sides.ui.calls()),
        };
        if last.as_ref() != Some(&state) {
            if send(sender, &ToGuard::State(state.clone())).is_err() {
                return;
            }
            last = Some(state);
        }
        if snap.narration != said {
            if let Some(line) = snap.narration.last()
                && send(sender, &ToGuard::Action { line: line.clone() }).is_err()
            {
                return;
            }
            said = snap.narration;
        }
        std::thread::sleep(REPORT);
    }
}

/// The guard says the operator pressed `Re-arm` in its prompt: re-arm only when the claim
/// came from the lock's holder and this process's own monitor saw that very press, as for a
/// click on its own prompt (`mcec_rules::guard::claim_activation`, then `Rearm::attempt`).
fn judge_claim(place: &Place, sides: &Sides, claim: &PressClaim, guard_pid: u32, sender: &Mutex<Sender>) {
    let received = Instant::now();
    if !sides.latch.is_stopped() {
        return;
    }
    let holder = mcec_sessions::lock::holder_pid(&place.lock);
    let act = claim_activation(claim, Some(guard_pid), holder, received)
        .and_then(|act| own_activation(&sides.chords, claim, act, Control::Rearm));
    let reason = match act {
        Err(refusal) => {
            audit(
                "rearm-refused",
                &format!("{}: a re-arm message on the guard socket: {refusal}", refusal.code()),
            );
            refusal.to_string()
        }
        Ok(act) => {
            let by = format!("by the operator in the guard's prompt (pid {guard_pid})");
            if sides.rearm.attempt(&by, &act) {
                return;
            }
            sides.ui.snapshot().refusal.unwrap_or_else(|| "refused".into())
        }
    };
    let _ = send(sender, &ToGuard::Refused { reason });
}

/// The guard says the operator pressed `End` for this process's agent in its End prompt: end
/// only when the claim came from the lock's holder and this process's own monitor saw that very
/// press come from a physical device (the same judgement as a re-arm claim's, without the
/// latch: ending is allowed stopped or not). A refusal is audited and told to the guard.
fn judge_end(place: &Place, sides: &Sides, claim: &PressClaim, guard_pid: u32, sender: &Mutex<Sender>) {
    let received = Instant::now();
    let holder = mcec_sessions::lock::holder_pid(&place.lock);
    let act = claim_activation(claim, Some(guard_pid), holder, received)
        .and_then(|act| own_activation(&sides.chords, claim, act, Control::End));
    let reason = match act {
        Err(refusal) => {
            audit(
                "end-refused",
                &format!("{}: an End message on the guard socket: {refusal}", refusal.code()),
            );
            refusal.to_string()
        }
        Ok(act) => {
            let judgement = sides.rearm.attestor.judge(&act);
            match judgement.verdict {
                Ok(_) => {
                    audit(
                        "agent-ended",
                        &format!(
                            "by the operator in the guard's console (pid {guard_pid}); {}",
                            judgement.detail
                        ),
                    );
                    sides.end.end();
                    return;
                }
                Err(refusal) => {
                    audit("end-refused", &format!("{}: {}", refusal.code(), judgement.detail));
                    refusal.to_string()
                }
            }
        }
    };
    let _ = send(sender, &ToGuard::EndRefused { reason });
}
