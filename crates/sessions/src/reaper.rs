//! The reaper: the belt-and-braces clean-up of sessions nobody ended.
//!
//! It runs on every launch of `mcec`/`mcec mcp` and before every provision, and removes each
//! session directory whose creation stamp is older than the limit (12 h), unless its instance
//! holds the lock. Anything in the sessions root that is not a session directory is left alone
//! and named in the report. It never panics and never returns an error: every failure becomes
//! a line in [`ReapReport::errors`]. Removal goes through [`crate::remove_session_dir`].

use std::path::Path;
use std::time::{Duration, SystemTime};

use mcec_rules::audit::audit;
use serde::Serialize;

use crate::id::SessionId;
use crate::paths::session_id_of_dir;
use crate::relay_mark::relay_gone;
use crate::remove::{
    BUILDING_PREFIX, ROOT_LOCK_FILE, Removal, RemoveError, is_scratch_name, remove_scratch_dir,
    remove_session_dir,
};
use crate::stamp::read_created;

/// Sessions older than this are reaped.
pub const REAP_AGE: Duration = Duration::from_secs(12 * 60 * 60);
/// A directory being built that nobody holds and nobody touched for this long is abandoned.
pub const ABANDONED_BUILD_AGE: Duration = Duration::from_secs(60);

/// What one reaper pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReapReport {
    /// Stale sessions removed.
    pub removed: Vec<SessionId>,
    /// Stale sessions kept because their instance holds the lock.
    pub skipped_running: Vec<SessionId>,
    /// Names of entries in the root that are not session directories.
    pub skipped_not_session: Vec<String>,
    /// Leftovers of interrupted deletions and provisions that were removed.
    pub removed_leftovers: Vec<String>,
    /// Failures, one sentence each.
    pub errors: Vec<String>,
}

/// Removes sessions in `sessions_root` created more than `max_age` before `now`.
pub fn reap(sessions_root: &Path, max_age: Duration, now: SystemTime) -> ReapReport {
    let mut report = ReapReport::default();
    match std::fs::read_dir(sessions_root) {
        Ok(entries) => {
            for entry in entries {
                match entry {
                    Ok(entry) => reap_entry(sessions_root, &entry.path(), max_age, now, &mut report),
                    Err(e) => report.errors.push(format!("cannot read an entry: {e}")),
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            report.errors.push(format!("cannot read the sessions root {}: {e}", sessions_root.display()))
        }
    }
    report.removed.sort();
    report.skipped_running.sort();
    report.skipped_not_session.sort();
    report.removed_leftovers.sort();
    audit(
        "reap-summary",
        &format!(
            "removed={} skipped_running={} skipped_not_session={} errors={}",
            report.removed.len(),
            report.skipped_running.len(),
            report.skipped_not_session.len(),
            report.errors.len()
        ),
    );
    for e in &report.errors {
        tracing::warn!("reaper: {e}");
    }
    report
}

fn reap_entry(root: &Path, path: &Path, max_age: Duration, now: SystemTime, report: &mut ReapReport) {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if name == ROOT_LOCK_FILE || name == crate::own_display::ROOM_LOCK_FILE {
        return;
    }
    if is_scratch_name(&name) {
        reap_leftover(root, path, &name, now, report);
        return;
    }
    let Some(id) = session_id_of_dir(path) else {
        report.skipped_not_session.push(name);
        return;
    };
    let Some(created) = read_created(path) else {
        report.errors.push(format!("session {id}: cannot read its creation stamp"));
        return;
    };
    // A stamp in the future (clock change) counts as age zero: never reaped early.
    let age = now.duration_since(created).unwrap_or(Duration::ZERO);
    // A per-connection session whose relay is gone is over, whatever its age.
    if age <= max_age && !relay_gone(path) {
        return;
    }
    match remove_session_dir(root, &id) {
        Ok(Removal::Removed) => {
            audit("session-reaped", &format!("session={id} age_secs={}", age.as_secs()));
            report.removed.push(id);
        }
        Ok(Removal::AlreadyGone) => {}
        Err(RemoveError::Running(id)) => report.skipped_running.push(id),
        Err(RemoveError::NotASession(_)) => report.skipped_not_session.push(name),
        Err(e) => report.errors.push(e.to_string()),
    }
}

fn reap_leftover(root: &Path, path: &Path, name: &str, now: SystemTime, report: &mut ReapReport) {
    if name.starts_with(BUILDING_PREFIX) {
        let touched = std::fs::symlink_metadata(path).and_then(|m| m.modified()).unwrap_or(now);
        if now.duration_since(touched).unwrap_or(Duration::ZERO) < ABANDONED_BUILD_AGE {
            return;
        }
    }
    match remove_scratch_dir(root, name) {
        Ok(Removal::Removed) => {
            audit("leftover-reaped", &format!("name={name}"));
            report.removed_leftovers.push(name.to_string());
        }
        Ok(Removal::AlreadyGone) => {}
        // A provision is still building it.
        Err(e) if e.contains("being built") => {}
        Err(e) => report.errors.push(e),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::lock::InstanceLock;
    use crate::stamp::write_stamp;
    use std::time::UNIX_EPOCH;

    fn session(root: &Path, id: &str, created: SystemTime) -> std::path::PathBuf {
        let dir = root.join(id);
        std::fs::create_dir(&dir).expect("mkdir");
        write_stamp(&dir, created).expect("stamp");
        dir
    }

    #[test]
    fn reaps_only_stale_stopped_sessions() {
        let root = tempfile::tempdir().expect("tempdir");
        let now = UNIX_EPOCH + Duration::from_secs(2_000_000_000);
        let old = now - REAP_AGE - Duration::from_secs(60);
        let stale = session(root.path(), "00000000000a", old);
        let fresh = session(root.path(), "00000000000b", now - Duration::from_secs(60));
        let running = session(root.path(), "00000000000c", old);
        let future = session(root.path(), "00000000000d", now + Duration::from_secs(3600));
        std::fs::create_dir(root.path().join("not-a-session")).expect("mkdir");
        std::fs::create_dir(root.path().join("00000000000e")).expect("mkdir (no stamp)");
        std::fs::write(root.path().join("stray-file"), b"").expect("file");
        let held = InstanceLock::acquire(&running).expect("lock");

        let report = reap(root.path(), REAP_AGE, now);
        assert_eq!(report.removed, vec![SessionId::parse("00000000000a").expect("id")]);
        assert_eq!(report.skipped_running, vec![SessionId::parse("00000000000c").expect("id")]);
        assert_eq!(report.skipped_not_session, vec!["00000000000e", "not-a-session", "stray-file"]);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert!(!stale.exists());
        assert!(fresh.exists() && running.exists() && future.exists());

        drop(held);
        let again = reap(root.path(), REAP_AGE, now);
        assert_eq!(again.removed, vec![SessionId::parse("00000000000c").expect("id")]);
    }

    #[test]
    fn a_young_session_is_reaped_once_its_relay_is_gone() {
        let root = tempfile::tempdir().expect("tempdir");
        let now = SystemTime::now();
        let relayed = session(root.path(), "00000000001a", now);
        let ended = session(root.path(), "00000000001b", now);
        let live = crate::relay_mark::RelayMark::take(&relayed).expect("mark");
        drop(crate::relay_mark::RelayMark::take(&ended).expect("mark"));

        let report = reap(root.path(), REAP_AGE, now);
        assert_eq!(report.removed, vec![SessionId::parse("00000000001b").expect("id")]);
        assert!(relayed.exists(), "a session whose relay lives is kept");
        drop(live);
        let again = reap(root.path(), REAP_AGE, now);
        assert_eq!(again.removed, vec![SessionId::parse("00000000001a").expect("id")]);
    }

    #[test]
    fn missing_root_is_quiet_and_file_root_is_an_error() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let none = reap(&tmp.path().join("missing"), REAP_AGE, SystemTime::now());
        assert_eq!(none, ReapReport::default());
        let file = tmp.path().join("file");
        std::fs::write(&file, b"").expect("write");
        let r = reap(&file, REAP_AGE, SystemTime::now());
        assert_eq!(r.errors.len(), 1);
    }

    #[test]
    fn leftovers_are_reaped_but_a_build_in_progress_is_not() {
        let root = tempfile::tempdir().expect("tempdir");
        let now = SystemTime::now();
        let tomb = root.path().join(".mcec-removing-0123456789ab-00ff");
        std::fs::create_dir_all(tomb.join("sub")).expect("mkdir");
        std::fs::write(tomb.join("mcec.settings"), b"McpAuthToken = \"x\"").expect("write");
        let abandoned = root.path().join(".mcec-building-0a0b");
        std::fs::create_dir(&abandoned).expect("mkdir");
        let held_dir = root.path().join(".mcec-building-0c0d");
        std::fs::create_dir(&held_dir).expect("mkdir");
        let held = crate::remove::lock_building_dir(&held_dir).expect("lock");
        let fresh = root.path().join(".mcec-building-0e0f");
        std::fs::create_dir(&fresh).expect("mkdir");

        // Measured a little later than the build dirs' age limit.
        let later = now + ABANDONED_BUILD_AGE + Duration::from_secs(5);
        let report = reap(root.path(), REAP_AGE, later);
        assert_eq!(
            report.removed_leftovers,
            vec![".mcec-building-0a0b", ".mcec-building-0e0f", ".mcec-removing-0123456789ab-00ff"]
        );
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert!(held_dir.exists(), "a held build is never reaped");
        drop(held);

        let young = root.path().join(".mcec-building-1a1b");
        std::fs::create_dir(&young).expect("mkdir");
        let report = reap(root.path(), REAP_AGE, SystemTime::now());
        assert!(young.exists() && report.removed_leftovers.is_empty(), "a build touched just now is kept");
    }
}
