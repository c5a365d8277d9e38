//! The one way an operator's click in an mcec window is checked for a hand behind it, for
//! the provisioning opt-in and the consent prompt's `Allow` (the re-arm asks the latch, with
//! the same ledger): the provenance monitor's record of the latest click and the latest press
//! of any kind, with the latch's own record of tampering folded in.

use std::time::Duration;

use mcec_desktop::monitor::LastPhysicalInput;
use mcec_rules::latch::{Latch, RearmAttestation};
use mcec_rules::opt_in::OptInEvidence;

/// How long the toolkit's view of a click may be ahead of the monitor thread's.
const MONITOR_SETTLE: Duration = Duration::from_millis(60);

/// What the monitor says about the input that just clicked; `None` when no monitor feeds
/// the ledger (then nothing can be attested). Waits [`MONITOR_SETTLE`] first: the toolkit
/// saw the press, and the monitor thread needs a moment to log it too.
pub fn click_evidence(ledger: &LastPhysicalInput, latch: &Latch, monitored: bool) -> Option<OptInEvidence> {
    std::thread::sleep(MONITOR_SETTLE);
    monitored.then(|| {
        let latch_tamper = latch.last_tamper();
        let with_latch = |mut att: RearmAttestation| {
            att.last_tamper_at = att.last_tamper_at.max(latch_tamper);
            att
        };
        OptInEvidence { click: with_latch(ledger.attest_click()), latest_press: with_latch(ledger.attest()) }
    })
}
