//! The guard's side: it holds the display's lock, listens on the socket, keeps each member's
//! state, shows every agent on the one banner (its own windows count its members), opens the
//! one re-arm prompt when a member stops, and after the operator's re-arm in that prompt sends
//! each member the judged event's identity. It decides nothing for a member.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use mcec_mcp::audit::audit;
use mcec_operator::OperatorState;
use mcec_rules::activation::Activation;
use mcec_rules::guard::{
    DisplayCount, Hello, MAX_TEXT, MemberState, ToGuard, ToMember, claim_of, decode_to_guard, encode,
};
use mcec_rules::text::ellipsize;
use mcec_sessions::InstanceLock;

use super::Sides;
use super::place::Place;
use super::wire::{Lines, Sender, same_user_peer};

/// The guard's members and what its windows show of them.
pub struct Leader {
    ui: OperatorState,
    members: Mutex<Members>,
}

#[derive(Default)]
struct Members {
    next: u64,
    by_id: BTreeMap<u64, Member>,
}

struct Member {
    label: String,
    state: MemberState,
    sender: Sender,
}

impl Leader {
    fn members(&self) -> MutexGuard<'_, Members> {
        self.members.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn has_members(&self) -> bool {
        !self.members().by_id.is_empty()
    }

    /// Send every member the identity of the event that pressed `Re-arm` here.
    pub fn claim_rearm(&self, by: &Activation) {
        let Some(claim) = claim_of(by, Instant::now()) else { return };
        let mut members = self.members();
        for member in members.by_id.values_mut() {
            if let Err(e) = member.sender.send(&encode(&ToMember::Rearm(claim))) {
                tracing::warn!("cannot send the re-arm to {}: {e}", member.label);
            }
        }
        audit("guard-rearm-sent", &format!("to {} members; judged {by}", members.by_id.len()));
    }

    fn join(&self, hello: &Hello, sender: Sender) -> (u64, String) {
        let mut members = self.members();
        let id = members.next;
        members.next += 1;
        let label = hello.label();
        members.by_id.insert(id, Member { label: label.clone(), state: MemberState::default(), sender });
        self.show(&members);
        (id, label)
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
    }

    fn show(&self, members: &Members) {
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
) -> Result<(), String> {
    place.remove_stale_socket();
    let listener = UnixListener::bind(&place.socket)
        .map_err(|e| format!("cannot listen on {}: {e}", place.socket.display()))?;
    std::fs::set_permissions(&place.socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot restrict {}: {e}", place.socket.display()))?;
    let leader = Arc::new(Leader { ui: sides.ui.clone(), members: Mutex::new(Members::default()) });
    *leading.lock().unwrap_or_else(PoisonError::into_inner) = Some(leader.clone());
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
        match stream {
            Ok(stream) => match same_user_peer(&stream) {
                Ok(pid) => {
                    let leader = leader.clone();
                    super::super::spawn("mcec-guard-member", move || serve(&leader, stream, pid));
                }
                Err(why) => audit("guard-refused", &format!("a connection to the guard socket: {why}")),
            },
            Err(e) => tracing::warn!("the guard socket: {e}"),
        }
    }
    drop(lock);
    Ok(())
}

/// One member's connection, until it ends.
fn serve(leader: &Leader, stream: UnixStream, pid: u32) {
    let Ok(sender) = Sender::new(&stream) else { return };
    let mut lines = Lines::new(stream);
    let hello = match lines.next_line().as_deref().map(decode_to_guard) {
        Some(Ok(ToGuard::Hello(hello))) => hello,
        Some(Ok(_)) => return audit("guard-refused", &format!("pid {pid}: the first message was not hello")),
        Some(Err(why)) => return audit("guard-refused", &format!("pid {pid}: {why}")),
        None => return,
    };
    let (id, label) = leader.join(&hello, sender);
    audit("guard-member", &format!("joined: {label} (pid {pid}, {})", ellipsize(&hello.transport, 16)));
    while let Some(line) = lines.next_line() {
        match decode_to_guard(&line) {
            Ok(ToGuard::State(state)) => leader.update(id, state),
            Ok(ToGuard::Action { line }) => leader.ui.narrate(format!("{label}: {line}")),
            Ok(ToGuard::Refused { reason }) => {
                leader.ui.show_refusal(format!("{label} stayed stopped: {}", ellipsize(&reason, MAX_TEXT)));
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
