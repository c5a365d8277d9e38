//! `mcec sessions list` and the host's Agent tab: what is in the sessions root, for the
//! operator, each copy with the state its own files show ([`SessionState`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::id::SessionId;
use crate::lock::is_locked;
use crate::paths::{LOCK_FILE, session_id_of_dir};
use crate::reaper::REAP_AGE;
use crate::relay_mark::relay_gone;
use crate::stamp::read_created;

/// What a session copy is doing, from its files: its instance lock (held while it runs, the
/// file left behind once it ran), its relay mark, and its age against the reaper's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionState {
    /// An instance holds the copy's lock.
    Running,
    /// Provisioned and never started: no instance ever took its lock.
    NotStarted,
    /// It ran and exited; it can be started again.
    NotRunning,
    /// A per-connection copy whose connection is over: the next reaper pass removes it.
    Ended,
    /// Not running and older than the reaper's limit: the next reaper pass removes it.
    Stale,
}

impl SessionState {
    /// The state in the operator's words (the Agent tab's and `mcec sessions list`'s column).
    pub fn words(self) -> &'static str {
        match self {
            SessionState::Running => "running",
            SessionState::NotStarted => "not started",
            SessionState::NotRunning => "not running",
            SessionState::Ended => "ended",
            SessionState::Stale => "stale",
        }
    }
}

/// The state of the session in `dir`, `age` old. A doubtful lock probe counts as running
/// ([`is_locked`]), so a copy that may run is never called stale.
pub fn session_state(dir: &Path, age: Duration) -> SessionState {
    if is_locked(dir) {
        SessionState::Running
    } else if relay_gone(dir) {
        SessionState::Ended
    } else if age >= REAP_AGE {
        SessionState::Stale
    } else if std::fs::symlink_metadata(dir.join(LOCK_FILE)).is_ok() {
        SessionState::NotRunning
    } else {
        SessionState::NotStarted
    }
}

/// One session copy as the operator sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub id: SessionId,
    pub directory: PathBuf,
    /// Creation time, unix seconds (0 when the stamp is unreadable).
    pub created: u64,
    pub age_secs: u64,
    /// Bytes in regular files and links below the directory (links are not followed).
    pub size_bytes: u64,
    /// Whether an instance holds the session's lock.
    pub running: bool,
    /// What the copy's own files say of it (running, not started, stale, …).
    pub state: SessionState,
    /// The size (`"WxH"`) of the session's own X display; `None`: it acts on the operator's.
    pub own_display: Option<String>,
}

/// Every session in `sessions_root`, oldest first. Entries that are not session directories
/// are skipped; a missing or unreadable root gives an empty list.
pub fn list_sessions(sessions_root: &Path) -> Vec<SessionSummary> {
    list_sessions_at(sessions_root, SystemTime::now())
}

/// [`list_sessions`] with ages measured from `now`.
pub fn list_sessions_at(sessions_root: &Path, now: SystemTime) -> Vec<SessionSummary> {
    let Ok(entries) = std::fs::read_dir(sessions_root) else {
        return Vec::new();
    };
    let mut out: Vec<SessionSummary> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let dir = entry.path();
            let id = session_id_of_dir(&dir)?;
            let created = read_created(&dir);
            let age = created.map_or(Duration::ZERO, |c| now.duration_since(c).unwrap_or_default());
            let state = session_state(&dir, age);
            Some(SessionSummary {
                id,
                created: created.and_then(|c| c.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs()),
                age_secs: age.as_secs(),
                size_bytes: tree_size(&dir),
                running: state == SessionState::Running,
                state,
                own_display: crate::own_display::own_display_of(&dir),
                directory: dir,
            })
        })
        .collect();
    out.sort_by(|a, b| a.created.cmp(&b.created).then(a.id.cmp(&b.id)));
    out
}

/// Total size of the files under `dir`, never following a symlink; unreadable parts count 0.
fn tree_size(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
            if meta.file_type().is_dir() {
                pending.push(entry.path());
            } else {
                total = total.saturating_add(meta.len());
            }
        }
    }
    total
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::lock::InstanceLock;
    use crate::stamp::write_stamp;

    #[test]
    fn lists_sessions_with_age_size_and_running() {
        let root = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("big"), vec![0u8; 10_000]).expect("write");
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let a = root.path().join("00000000000a");
        let b = root.path().join("00000000000b");
        for (dir, age) in [(&a, 100u64), (&b, 50)] {
            std::fs::create_dir(dir).expect("mkdir");
            write_stamp(dir, now - Duration::from_secs(age)).expect("stamp");
        }
        std::fs::create_dir(a.join("sub")).expect("mkdir");
        std::fs::write(a.join("sub").join("f"), vec![1u8; 1000]).expect("write");
        std::os::unix::fs::symlink(outside.path(), a.join("link")).expect("symlink");
        std::fs::create_dir(root.path().join("junk")).expect("mkdir");
        let held = InstanceLock::acquire(&b).expect("lock");

        let list = list_sessions_at(root.path(), now);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].id.as_str(), "00000000000a");
        assert_eq!(list[0].age_secs, 100);
        assert!(!list[0].running);
        assert_eq!(list[0].state, SessionState::NotStarted, "provisioned, never started: not stale");
        assert!(list[0].size_bytes >= 1000 && list[0].size_bytes < 10_000, "{}", list[0].size_bytes);
        assert_eq!(list[1].id.as_str(), "00000000000b");
        assert!(list[1].running);
        assert_eq!(list[1].state, SessionState::Running);
        drop(held);
        let list = list_sessions_at(root.path(), now);
        assert_eq!(list[1].state, SessionState::NotRunning, "it ran (its lock file is there) and exited");
        assert!(list_sessions(&root.path().join("missing")).is_empty());
    }

    #[test]
    fn the_state_comes_from_the_lock_the_relay_mark_and_the_age() {
        let dir = tempfile::tempdir().expect("tempdir");
        let young = Duration::from_secs(60);
        assert_eq!(session_state(dir.path(), young), SessionState::NotStarted);
        assert_eq!(session_state(dir.path(), REAP_AGE), SessionState::Stale, "old and never started");
        let held = InstanceLock::acquire(dir.path()).expect("lock");
        assert_eq!(session_state(dir.path(), young), SessionState::Running);
        assert_eq!(session_state(dir.path(), REAP_AGE * 2), SessionState::Running, "running is never stale");
        drop(held);
        assert_eq!(session_state(dir.path(), young), SessionState::NotRunning);
        assert_eq!(session_state(dir.path(), REAP_AGE), SessionState::Stale);
        let mark = crate::relay_mark::RelayMark::take(dir.path()).expect("mark");
        assert_eq!(session_state(dir.path(), young), SessionState::NotRunning, "its relay lives");
        drop(mark);
        assert_eq!(session_state(dir.path(), young), SessionState::Ended, "its connection is over");
        let words: Vec<_> = [
            SessionState::Running,
            SessionState::NotStarted,
            SessionState::NotRunning,
            SessionState::Ended,
            SessionState::Stale,
        ]
        .map(SessionState::words)
        .to_vec();
        assert_eq!(words, ["running", "not started", "not running", "ended", "stale"]);
    }
}
