//! The one way the core checks that the operator's own hand pressed a safety control (the
//! re-arm prompt's `Re-arm`, the consent prompt's `Allow`, the opt-in's `Confirm`): the
//! window names the events that pressed it (`mcec_rules::activation::Activation`), the
//! provenance monitor's ring says what it saw at their time, and
//! `mcec_rules::activation::activation_verdict` decides, with the latch's own record of
//! tampering folded in. [`Judgement::detail`] is what the audit line says about it.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use mcec_desktop::monitor::LastPhysicalInput;
use mcec_rules::activation::{Activation, ActivationRefusal, Judged, Witness, activation_verdict};
use mcec_rules::latch::Latch;

/// How long the monitor thread may take to log an event the window already has.
const MONITOR_WAIT: Duration = Duration::from_millis(250);
const MONITOR_POLL: Duration = Duration::from_millis(5);

/// What the monitor can see: its ledger and the latch, or nothing (no monitor runs).
#[derive(Clone)]
pub struct Attestor {
    pub ledger: LastPhysicalInput,
    pub latch: Latch,
    /// Whether a provenance monitor feeds the ledger.
    pub monitored: bool,
}

/// A verdict and the words the audit line gives it.
pub struct Judgement {
    pub verdict: Result<Judged, ActivationRefusal>,
    /// Which events were judged, what the monitor saw of each, and the outcome.
    pub detail: String,
}

impl Attestor {
    /// Judges `by`. Waits (at most [`MONITOR_WAIT`]) until the monitor has logged every
    /// named event: the window and the monitor read the same input on two connections.
    pub fn judge(&self, by: &Activation) -> Judgement {
        let verdict = if self.monitored {
            self.wait_for_witnesses(by);
            let tamper = self.ledger.last_tamper().max(self.latch.last_tamper());
            activation_verdict(by, |e| self.ledger.witness(e), tamper, Instant::now())
        } else {
            Err(ActivationRefusal::NoMonitor)
        };
        let detail = self.describe(by, &verdict);
        Judgement { verdict, detail }
    }

    fn wait_for_witnesses(&self, by: &Activation) {
        let Some(events) = by.events else { return };
        let deadline = Instant::now() + MONITOR_WAIT;
        while events.events().any(|e| self.ledger.witness(&e) == Witness::default())
            && Instant::now() < deadline
        {
            std::thread::sleep(MONITOR_POLL);
        }
    }

    fn describe(&self, by: &Activation, verdict: &Result<Judged, ActivationRefusal>) -> String {
        let mut out = format!("judged {by}");
        if let Some(events) = by.events {
            for e in events.events() {
                let w = self.ledger.witness(&e);
                let seen = match (w.physical, w.synthetic) {
                    (_, Some(p)) => format!("{p} raw event at that time"),
                    (Some(_), None) => "physical device".to_owned(),
                    (None, None) => "no raw event (synthetic)".to_owned(),
                };
                let _ = write!(out, "; {e}: {seen}");
            }
        }
        match verdict {
            Ok(_) => out.push_str("; counted: the operator's own input"),
            Err(r) => {
                let _ = write!(out, "; refused ({}): {r}", r.code());
            }
        }
        out
    }
}
