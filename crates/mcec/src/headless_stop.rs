//! The stop of a session whose own display is headless (issue 26): an Xvfb on a machine with
//! no operator display (a server, CI, a container).
//!
//! There is no operator keyboard to press the chord on, so the chord is not armed and the
//! gate says so (`NotArmed`: actuation is allowed, audited at its first use per tool, and
//! `session-status` says "NOT armed" with this reason). What stops such a session is the stop
//! record of its own display: `DISPLAY=:<n> mcec stop` (the display `session-status` and
//! `mcec sessions list` name) latches it at its follower's next look, and `mcec sessions end`
//! ends it. No re-arm can follow (no physical click can reach a headless display): a stopped
//! headless session stays stopped until it is ended. The agent reaches nothing of the
//! operator's: its input, launches, clipboard and accessibility are all on its own server.
//!
//! Display numbers are reused: a record left for `:<n>` by an earlier server of that number
//! (a session killed before it could clear it) is not about this brand-new server, and is
//! removed when it starts; the session's own record is removed when it ends.

use mcec_mcp::audit::audit;
use mcec_rules::gates::DesktopGate;

use crate::stop_record::StopRecords;

/// The stop records of the headless `display`, with a record of an earlier server of that
/// number removed.
pub fn records(own: &str) -> StopRecords {
    let records = StopRecords::for_display(own);
    if records.observe().is_stop() {
        match records.clear() {
            Ok(()) => tracing::info!("removed the stop record of an earlier X server numbered {own}"),
            Err(e) => tracing::warn!("a stop record of an earlier X server numbered {own} stays: {e}"),
        }
    }
    records
}

/// The gate of a headless own display: acting, with no chord armed, and how to stop it.
pub fn gate(display: &str) -> DesktopGate {
    let why = format!(
        "this session's own display {display} is headless (there is no operator display, so no \
         keyboard to watch); `DISPLAY={display} mcec stop` stops it and `mcec sessions end` ends it"
    );
    tracing::warn!("emergency stop: NOT armed: {why}");
    audit("headless-own-display", &format!("display={display} stop=record-only"));
    DesktopGate::NotArmed { why }
}

/// At the session's end: its display is gone, so is any record for it.
#[cfg_attr(not(unix), allow(dead_code, reason = "own displays are X servers, started on Unix only"))]
pub fn forget(own: &str) {
    if let Err(e) = StopRecords::for_display(own).clear() {
        tracing::warn!("the stop record of {own} stays after its server ended: {e}");
    }
}
