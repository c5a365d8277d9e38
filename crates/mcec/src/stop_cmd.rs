//! `mcec stop`: the operator's emergency stop from a shell, for every mcec on this display.
//!
//! It writes the display's durable stop record under a fresh stop id, with the writer every
//! stop uses (`StopRecords::record`). A record naming a stop a process was never re-armed from
//! latches it (`mcec_rules::stop_record::follow`), so every mcec running on the display stops
//! at its follower's next look, and every mcec started there later starts stopped. Nothing has
//! to be running for it to work. There is no command that re-arms: only the operator's
//! attested click on Re-arm does, in each process.
//!
//! The display is the one an `mcec mcp` started here would use: in a sway session (where
//! `mcec mcp` runs the sway backend) the Wayland display of `WAYLAND_DISPLAY` and
//! `XDG_RUNTIME_DIR`; otherwise `DISPLAY`, or the one the display search finds (`main` runs
//! `desktop_find::settle` before this).

use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::{Result, anyhow, bail};
use mcec_mcp::audit::audit;
use mcec_rules::stop_record::{Observation, Scope, StopId};
use mcec_sessions::paths::McecPaths;

use crate::logging;
use crate::stop_record::{StopRecords, fresh_stop_id};

/// The stop's reason in its record; the processes that follow it say "a stop is recorded for
/// this display (the operator ran `mcec stop`)" on their banner and in their audit line.
pub const STOP_COMMAND_REASON: &str = "the operator ran `mcec stop`";

/// The audit event of this command (in this copy's `mcec.log`).
const EVENT: &str = "emergency-stop-command";

pub fn stop_cmd() -> Result<ExitCode> {
    // The log is this copy's; a copy that cannot say where its files are still stops.
    if let Ok(paths) = McecPaths::for_current_process()
        && let Some(warning) = logging::init(Some(&paths.log_file()))
    {
        tracing::warn!("{warning}");
    }
    if let Some(detail) = crate::platform::no_desktop() {
        bail!("{detail} Nothing was stopped. {NAME_IT}");
    }
    let records = StopRecords::for_this_process();
    let scope = records.scope().clone();
    if scope == Scope::NoDisplay {
        bail!("no display: DISPLAY is empty. Nothing was stopped. {NAME_IT}");
    }
    let before = records.observe();
    let id = fresh_stop_id();
    records
        .record(STOP_COMMAND_REASON, SystemTime::now(), id)
        .map_err(|e| anyhow!("the stop could not be recorded ({e}). Nothing was stopped."))?;
    // Written, so its place is known.
    let path = records.path().unwrap_or_default();
    audit(EVENT, &format!("stop {id} recorded for {scope} in {}", path.display()));
    let report = report(&scope, &path, id, &before);
    println!("{}", report.text);
    if let Some(warning) = &report.warning {
        eprintln!("mcec: {warning}");
    }
    Ok(if report.warning.is_some() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// What to do when no display is known.
const NAME_IT: &str = "Name the display whose mcec processes should stop: `DISPLAY=:0 mcec stop`.";

/// What the command tells the operator once the record is written.
#[derive(Debug)]
struct Report {
    text: String,
    /// Set when the stop cannot reach every mcec of the display (exit 1).
    warning: Option<String>,
}

fn report(scope: &Scope, path: &Path, id: StopId, before: &Observation) -> Report {
    let mut text = match scope {
        Scope::Display(_) | Scope::Wayland(_) => format!(
            "Stopped every mcec on {scope} (stop {id}): the stop is recorded in {}.\n\
             Each mcec running there stops within a moment, and one started later starts stopped.",
            path.display()
        ),
        Scope::AnyDisplay | Scope::NoDisplay => format!(
            "Stopped every mcec whose own display could not be identified (stop {id}): the stop is recorded in {}.",
            path.display()
        ),
    };
    match before {
        Observation::Stopped { reason, .. } => {
            text.push_str(&format!("\nIt replaces the stop recorded there before ({reason})."));
        }
        Observation::Unreadable(_) => text.push_str("\nIt replaces an unreadable record."),
        Observation::Absent | Observation::Unusable(_) => {}
    }
    text.push_str(
        "\nOnly your own click on Re-arm in each mcec's prompt (or the host's menu) re-arms it; no command does.",
    );
    let warning = (!matches!(scope, Scope::Display(_) | Scope::Wayland(_))).then(|| {
        if crate::platform::wayland_backend() {
            "WAYLAND_DISPLAY and XDG_RUNTIME_DIR do not name a Wayland display's socket, so mcec processes \
             that know their display were not stopped; run `mcec stop` with the session's WAYLAND_DISPLAY \
             and XDG_RUNTIME_DIR"
                .to_string()
        } else {
            "DISPLAY does not name a local display, so mcec processes that know their display were not stopped; \
             run `DISPLAY=:N mcec stop` with that display"
                .to_string()
        }
    });
    Report { text, warning }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcec_rules::stop_record::{self, Standing};

    fn id() -> StopId {
        StopId::from_bytes([7; 8])
    }

    #[test]
    fn the_report_names_the_display_and_the_record_and_no_way_to_rearm_by_command() {
        let path = Path::new("/home/op/.local/state/mcec/stop/display-3");
        let done = report(&Scope::Display(3), path, id(), &Observation::Absent);
        assert!(done.warning.is_none());
        for words in
            ["display :3", "0707070707070707", "/home/op/.local/state/mcec/stop/display-3", "no command"]
        {
            assert!(done.text.contains(words), "{words}: {}", done.text);
        }
        let earlier = Observation::Stopped { reason: "operator pressed Pause".into(), id: None };
        let replaced = report(&Scope::Display(3), path, id(), &earlier);
        assert!(replaced.text.contains("replaces the stop recorded there before (operator pressed Pause)"));
        let odd = report(&Scope::AnyDisplay, path, id(), &Observation::Absent);
        assert!(odd.warning.as_deref().is_some_and(|w| w.contains("DISPLAY=:N")), "{odd:?}");
    }

    /// The record this command writes stops every process on the display: an armed one, one
    /// re-armed from an earlier stop, and one stopped by another stop (which takes this one on).
    #[test]
    fn the_record_written_stops_every_process_whatever_it_held() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let records = StopRecords::at(tmp.path().join("stop"), Scope::Display(5));
        let new = fresh_stop_id();
        records.record(STOP_COMMAND_REASON, SystemTime::now(), new).expect("record");
        let seen = records.look();
        assert_eq!(seen, Observation::Stopped { reason: STOP_COMMAND_REASON.into(), id: Some(new) });
        let earlier = [fresh_stop_id()];
        for me in [Standing::Armed { released: &[] }, Standing::Armed { released: &earlier }] {
            assert!(
                matches!(stop_record::follow(&seen, me), stop_record::FollowerAction::Latch { reason, id: Some(i) }
                    if i == new && reason.contains(STOP_COMMAND_REASON)),
                "{me:?}"
            );
        }
        let stopped = Standing::Stopped { id: Some(earlier[0]) };
        assert_eq!(stop_record::follow(&seen, stopped), stop_record::FollowerAction::Adopt(new));
    }
}
