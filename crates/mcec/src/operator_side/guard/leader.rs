//! The guard's side: it holds the display's lock, listens on the socket, keeps each member's
//! state, shows every agent on the one banner (its own windows count its members), opens the
//! one re-arm prompt when a member stops, and after the operator's re-arm in that prompt sends
//! each member the judged event's identity. Its members' consent requests wait in one queue
//! and are put to the operator one at a time in its own consent prompt, each naming its agent;
//! an `Allow` is sent back as the events that pressed it, and the console's End for a member's
//! agent as the events that pressed the End prompt's `End`, to that member only. On sway it
//! also tells its members what its source binds for its prompts (`sway.rs`), and each claim
//! names the binding its press fired. It decides nothing for a member.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use mcec_desktop::monitor::{ChordControls, Vouches};
use mcec_mcp::audit::audit;
use mcec_operator::OperatorState;
use mcec_rules::StopFlag;
use mcec_rules::activation::Activation;
use mcec_rules::consent::{Outcome, sanitize_reason};
use mcec_rules::guard::{
    AgentRow, ConsentAnswer, ConsentQueue, DisplayCount, Hello, MAX_TEXT, MemberState, Queued, ToGuard,
    ToMember, Whose, decode_to_guard, encode,
};
use mcec_rules::text::ellipsize;
use mcec_sessions::InstanceLock;

use super::member::Ended;
use super::place::Place;
use super::sway::{bound_message, claim};
use super::wire::{Lines, Sender, same_user_peer};
use super::{Sides, Who};
use crate::consent::OperatorConsent;

/// The guard's members and what its windows show of them.
pub struct Leader {
    ui: OperatorState,
    /// This process is the host, which never hands the windows over.
    host: bool,
    socket: std::path::PathBuf,
    handing_over: AtomicBool,
    members: Mutex<Members>,
    queue: Mutex<ConsentQueue>,
    queued: Condvar,
    /// The prompts' chords (sway): what the source binds, and which binding each press fired.
    chords: ChordControls,
}

/// How long a new connection may take to say `hello`.
const HELLO_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Longest list of commands a member's request may name.
const MAX_COMMANDS: usize = 32;

#[derive(Default)]
struct Members {
    next: u64,
    by_id: BTreeMap<u64, Member>,
}

struct Member {
    label: String,
    /// Its `hello`, renamed when its client names itself.
    hello: Hello,
    state: MemberState,
    last_action: Option<String>,
    sender: Sender,
}

/// How often the console's rows are rebuilt (ages and this process's own agent change
/// without a message).
const CONSOLE_REFRESH: std::time::Duration = std::time::Duration::from_millis(500);

impl Leader {
    fn members(&self) -> MutexGuard<'_, Members> {
        self.members.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn has_members(&self) -> bool {
        !self.members().by_id.is_empty()
    }

    /// Send every member the identity of the event that pressed `Re-arm` here.
    pub fn claim_rearm(&self, by: &Activation) {
        let Some(claim) = claim(&self.chords, by, Instant::now()) else { return };
        let line = encode(&ToMember::Rearm(claim));
        let mut members = self.members();
        for member in members.by_id.values_mut() {
            if let Err(e) = member.sender.send(&line) {
                tracing::warn!("cannot send the re-arm to {}: {e}", member.label);
            }
        }
        audit("guard-rearm-sent", &format!("to {} members; judged {by}", members.by_id.len()));
    }

    /// Send member `id` the identity of the event that pressed `End` for its agent here; its
    /// label, or `None` when it is not (or no longer) connected.
    pub fn claim_end(&self, id: u64, by: &Activation) -> Option<String> {
        let claim = claim(&self.chords, by, Instant::now())?;
        let mut members = self.members();
        let member = members.by_id.get_mut(&id)?;
        if let Err(e) = member.sender.send(&encode(&ToMember::End(claim))) {
            tracing::warn!("cannot send the End to {}: {e}", member.label);
            return None;
        }
        Some(member.label.clone())
    }

    /// Tell every member what the source binds now (sway).
    fn announce(&self, vouches: &Vouches) {
        let line = encode(&bound_message(vouches));
        for member in self.members().by_id.values_mut() {
            if let Err(e) = member.sender.send(&line) {
                tracing::warn!("cannot tell {} the prompts' bindings: {e}", member.label);
            }
        }
    }

    fn join(&self, hello: &Hello, mut sender: Sender) -> (u64, String) {
        let mut members = self.members();
        // Read under the members' lock: a later announcement reaches this member too.
        let bound = self.chords.announced();
        if bound.iter().any(Option::is_some) {
            let _ = sender.send(&encode(&bound_message(&bound)));
        }
        let id = members.next;
        members.next += 1;
        let label = hello.label();
        let member = Member {
            label: label.clone(),
            hello: hello.clone(),
            state: MemberState::default(),
            last_action: None,
            sender,
        };
        members.by_id.insert(id, member);
        self.show(&members);
        (id, label)
    }

    fn rename(&self, id: u64, hello: &Hello) {
        if let Some(member) = self.members().by_id.get_mut(&id) {
            member.label = hello.label();
            member.hello = hello.clone();
        }
    }

    /// A member's agent acted: the banner's narration and the console's activity.
    fn acted(&self, id: u64, label: &str, line: &str) {
        let line = ellipsize(line, MAX_TEXT);
        if let Some(member) = self.members().by_id.get_mut(&id) {
            member.last_action = Some(line.clone());
        }
        self.ui.narrate(format!("{label}: {line}"));
        self.ui.record_activity(label, &line);
    }

    /// The console's Agents rows: this process's own agent (once its client has named
    /// itself) and every member, each with its state word.
    fn console_rows(
        &self,
        who: &Who,
        client: Option<(String, String)>,
        since: u64,
    ) -> (Vec<AgentRow>, Option<String>) {
        let waiting: Vec<u64> = self.queue().front().map(|q| q.member).into_iter().collect();
        let snap = self.ui.snapshot();
        let mut rows = Vec::new();
        let own_label = client.map(|(name, version)| {
            let own = Hello {
                v: mcec_rules::guard::PROTOCOL,
                pid: std::process::id(),
                client_name: Some(name),
                client_version: Some(version),
                session: who.session.clone(),
                transport: who.transport.into(),
                since,
                host: who.host,
            };
            let state = MemberState {
                stopped: snap.own_stopped(),
                stop_id: None,
                acting: snap.mode == mcec_operator::Mode::Acting,
                calls: Some(self.ui.calls()),
            };
            let last = snap.activity.iter().find(|a| a.agent == own.label()).map(|a| a.line.clone());
            let waiting = snap.consent.is_some() && waiting.is_empty();
            let row = AgentRow::of(Whose::ThisProcess, &own, &state, waiting, last.as_deref());
            let label = row.label.clone();
            rows.push(row);
            label
        });
        for (id, member) in &self.members().by_id {
            let waiting = waiting.contains(id);
            let last = member.last_action.as_deref();
            rows.push(AgentRow::of(Whose::Member(*id), &member.hello, &member.state, waiting, last));
        }
        (rows, own_label)
    }

    fn update(&self, id: u64, state: MemberState) {
        let mut members = self.members();
        let Some(member) = members.by_id.get_mut(&id) else { return };
        let newly_stopped = state.stopped && !member.state.stopped;
        member.state = state;
        self.show(&members);
        drop(members);
        if newly_stopped {
            self.ui.open_prompt();
        }
    }

    fn leave(&self, id: u64) {
        let mut members = self.members();
        members.by_id.remove(&id);
        self.show(&members);
        drop(members);
        self.queue().remove_member(id);
    }

    fn queue(&self) -> MutexGuard<'_, ConsentQueue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queue a member's request (its words cleaned again: a member is not trusted to have).
    fn ask(&self, member: u64, agent: &str, id: u64, reason: &str, commands: Vec<String>) {
        let commands = commands.into_iter().take(MAX_COMMANDS).map(|c| ellipsize(&c, 64)).collect();
        let behind = {
            let mut queue = self.queue();
            queue.push(Queued {
                member,
                id,
                agent: agent.to_owned(),
                reason: sanitize_reason(reason),
                commands,
                withdrawn: StopFlag::new(),
            });
            queue.behind()
        };
        self.ui.set_consent_behind(behind);
        self.queued.notify_all();
    }

    fn answer(&self, member: u64, id: u64, answer: ConsentAnswer) {
        let mut members = self.members();
        if let Some(m) = members.by_id.get_mut(&member)
            && let Err(e) = m.sender.send(&encode(&ToMember::ConsentAnswer { id, answer }))
        {
            tracing::warn!("cannot answer {}'s request: {e}", m.label);
        }
    }

    /// Put the queued requests to the operator, oldest first, one at a time.
    fn put_requests(&self, consent: Option<&OperatorConsent>) {
        loop {
            let (request, behind) = {
                let mut queue = self.queue();
                while queue.front().is_none() {
                    queue = self.queued.wait(queue).unwrap_or_else(PoisonError::into_inner);
                }
                (queue.front().cloned(), queue.behind())
            };
            let Some(q) = request else { continue };
            let (outcome, by) = match consent {
                Some(consent) => {
                    consent.ask_here(Some(q.agent.clone()), behind, &q.reason, &q.commands, &q.withdrawn)
                }
                None => (Outcome::Unavailable("the display's guard has no consent prompt".into()), None),
            };
            let answer = match outcome {
                Outcome::Granted => by.and_then(|by| claim(&self.chords, &by, Instant::now())).map_or_else(
                    || ConsentAnswer::Unavailable("no event pressed Allow".into()),
                    ConsentAnswer::Allowed,
                ),
                Outcome::Denied => ConsentAnswer::Denied,
                Outcome::TimedOut => ConsentAnswer::TimedOut,
                Outcome::Unavailable(why) => ConsentAnswer::Unavailable(why),
                Outcome::Stopped => ConsentAnswer::Unavailable("the request ended".into()),
            };
            if self.queue().remove(q.member, q.id).is_some() {
                self.answer(q.member, q.id, answer);
            }
        }
    }

    /// A host joined: give it the windows. Every member is told to elect again (the host takes
    /// the lock; the others leave it to the host a moment), and the accept loop is woken.
    fn hand_over(&self, to: &str) {
        if self.host || self.handing_over.swap(true, Ordering::SeqCst) {
            return;
        }
        audit("guard-handover", &format!("to the host window ({to})"));
        for member in self.members().by_id.values_mut() {
            let _ = member.sender.send(&encode(&ToMember::Handover));
        }
        let _ = UnixStream::connect(&self.socket);
    }

    fn show(&self, members: &Members) {
        if self.handing_over.load(Ordering::SeqCst) {
            return;
        }
        let others =
            (!members.by_id.is_empty()).then(|| DisplayCount::of(members.by_id.values().map(|m| &m.state)));
        self.ui.set_others(others);
    }
}

/// Be the display's guard while `lock` is held: listen, and serve every member on a thread of
/// its own. Returns only when the socket cannot be set up (the caller then runs alone).
pub fn lead(
    place: &Place,
    sides: &Sides,
    lock: InstanceLock,
    leading: &Mutex<Option<Arc<Leader>>>,
) -> Result<Ended, String> {
    place.remove_stale_socket();
    let listener = UnixListener::bind(&place.socket)
        .map_err(|e| format!("cannot listen on {}: {e}", place.socket.display()))?;
    std::fs::set_permissions(&place.socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot restrict {}: {e}", place.socket.display()))?;
    place.remove_earlier_servers();
    let leader = Arc::new(Leader {
        ui: sides.ui.clone(),
        host: sides.who.host,
        socket: place.socket.clone(),
        handing_over: AtomicBool::new(false),
        members: Mutex::new(Members::default()),
        queue: Mutex::new(ConsentQueue::default()),
        queued: Condvar::new(),
        chords: sides.chords.clone(),
    });
    {
        let told = Arc::downgrade(&leader);
        sides.chords.on_announce(Some(Arc::new(move |vouches: &Vouches| {
            if let Some(leader) = told.upgrade() {
                leader.announce(vouches);
            }
        })));
    }
    {
        let (leader, consent) = (leader.clone(), sides.consent.clone());
        super::super::spawn("mcec-guard-consent", move || leader.put_requests(consent.as_deref()));
    }
    {
        let (leader, sides) = (leader.clone(), sides.clone());
        super::super::spawn("mcec-guard-console", move || refresh_console(&leader, &sides));
    }
    *leading.lock().unwrap_or_else(PoisonError::into_inner) = Some(leader.clone());
    sides.ui.set_others(None);
    sides.ui.set_member(false);
    // Whatever is stopped here is shown at once (a guard that took over from a dead one).
    sides.ui.open_prompt();
    audit(
        "guard",
        &format!(
            "display {}: this process (pid {}) shows the operator's windows",
            place.display,
            std::process::id()
        ),
    );
    for stream in listener.incoming() {
        if leader.handing_over.load(Ordering::SeqCst) {
            break;
        }
        match stream {
            Ok(stream) => match same_user_peer(&stream) {
                Ok(pid) => {
                    let leader = leader.clone();
                    super::super::spawn("mcec-guard-member", move || serve(&leader, stream, pid));
                }
                Err(why) => audit("guard-refused", &format!("a connection to the guard socket: {why}")),
            },
            Err(e) => {
                // Out of descriptors, say: try again in a moment rather than spin.
                tracing::warn!("the guard socket: {e}");
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
    }
    // Handed over: the windows are the host's now.
    sides.chords.on_announce(None);
    *leading.lock().unwrap_or_else(PoisonError::into_inner) = None;
    sides.ui.set_others(None);
    sides.ui.set_member(true);
    drop(listener);
    drop(lock);
    Ok(Ended::HandedOver)
}

/// Keep the console's Agents rows current while this process leads.
fn refresh_console(leader: &Leader, sides: &Sides) {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    while !leader.handing_over.load(Ordering::SeqCst) {
        let (rows, own) = leader.console_rows(&sides.who, sides.rearm.agent.client(), since);
        sides.ui.set_agents(rows, own);
        std::thread::sleep(CONSOLE_REFRESH);
    }
    sides.ui.set_agents(Vec::new(), None);
}

/// One member's connection, until it ends.
fn serve(leader: &Leader, stream: UnixStream, pid: u32) {
    let Ok(sender) = Sender::new(&stream) else { return };
    let mut lines = Lines::new(stream);
    // A connection that never says who it is does not hold a thread for ever.
    lines.set_patience(Some(HELLO_WAIT));
    let hello = match lines.next_line().as_deref().map(decode_to_guard) {
        Some(Ok(ToGuard::Hello(hello))) => hello,
        Some(Ok(_)) => return audit("guard-refused", &format!("pid {pid}: the first message was not hello")),
        Some(Err(why)) => return audit("guard-refused", &format!("pid {pid}: {why}")),
        None => return,
    };
    lines.set_patience(None);
    let (id, mut label) = leader.join(&hello, sender);
    audit("guard-member", &format!("joined: {label} (pid {pid}, {})", ellipsize(&hello.transport, 16)));
    if hello.host {
        leader.hand_over(&label);
    }
    while let Some(line) = lines.next_line() {
        match decode_to_guard(&line) {
            Ok(ToGuard::State(state)) => leader.update(id, state),
            Ok(ToGuard::Action { line }) => leader.acted(id, &label, &line),
            Ok(ToGuard::Client { name, version }) => {
                let named = Hello { client_name: Some(name), client_version: Some(version), ..hello.clone() };
                label = named.label();
                leader.rename(id, &named);
                audit("guard-member", &format!("named: {label} (pid {pid})"));
            }
            Ok(ToGuard::Refused { reason }) => {
                leader.ui.show_refusal(format!("{label} stayed stopped: {}", ellipsize(&reason, MAX_TEXT)));
            }
            Ok(ToGuard::EndRefused { reason }) => {
                let reason = ellipsize(&reason, MAX_TEXT);
                audit("end-refused", &format!("{label} (pid {pid}) was not ended: {reason}"));
                leader.ui.show_refusal(format!("{label} was not ended: {reason}"));
            }
            Ok(ToGuard::Consent { id: asked, reason, commands }) => {
                leader.ask(id, &label, asked, &reason, commands)
            }
            Ok(ToGuard::Withdrawn { id: asked }) => {
                leader.queue().remove(id, asked);
            }
            Ok(ToGuard::Hello(_)) => break,
            Err(why) => {
                audit("guard-refused", &format!("{label} (pid {pid}): {why}"));
                break;
            }
        }
    }
    leader.leave(id);
    audit("guard-member", &format!("left: {label} (pid {pid})"));
}
