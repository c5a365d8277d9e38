//! The operator's side of `request-command-access`: the consent prompt, and the check that a
//! hand clicked `Allow`.
//!
//! The prompt is an operator window like the re-arm prompt; it only reports clicks and the
//! events that made them. `Allow` is honoured only when the provenance monitor saw that very
//! click (or key) come from a physical device (`crate::attest`, the rule of the re-arm and
//! the opt-in): anything else is refused, audited and shown in the prompt, which keeps waiting. `Deny`,
//! Enter, Esc and closing the window deny. The emergency stop or the client's cancel closes
//! the prompt with nothing granted; so does the timeout. Without an operator window or a
//! provenance monitor no prompt is shown at all: nothing could be attested (fail closed).

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcec_mcp::ConsentAsker;
use mcec_mcp::audit::audit;
use mcec_operator::OperatorState;
use mcec_rules::StopFlag;
use mcec_rules::activation::Activation;
use mcec_rules::consent::{CONSENT_TIMEOUT, Outcome};

use crate::attest::Attestor;
use crate::operator_side::{GuardLink, UiShutdown};

/// Test-only: a shorter consent timeout in milliseconds (never a longer one).
pub const TIMEOUT_ENV: &str = "MCEC_TEST_CONSENT_TIMEOUT_MS";

/// How often the waiting prompt looks at the stop flag and the clock.
const TICK: Duration = Duration::from_millis(50);

/// A click in the consent prompt, forwarded by the operator-event handler.
#[derive(Debug, Clone, Copy)]
pub enum ConsentClick {
    /// `Allow`, pressed by the events named.
    Allow(Activation),
    Deny,
}

/// Puts requests to the operator through the consent prompt.
pub struct OperatorConsent {
    pub ui: Option<(OperatorState, UiShutdown)>,
    pub clicks: Mutex<Receiver<ConsentClick>>,
    pub attestor: Attestor,
    /// This process's place in its display's guard: a member's requests go to the guard's
    /// one prompt.
    pub guard: GuardLink,
}

/// The agent's handle on the one [`OperatorConsent`] the display's guard also asks through.
pub struct SharedConsent(pub Arc<OperatorConsent>);

/// A receiver and the sender the operator-event handler forwards consent clicks to.
pub fn channel() -> (Sender<ConsentClick>, Receiver<ConsentClick>) {
    std::sync::mpsc::channel()
}

/// The consent timeout: [`CONSENT_TIMEOUT`], or shorter when the test-only variable says so.
pub fn timeout() -> Duration {
    std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis)
        .filter(|d| *d < CONSENT_TIMEOUT)
        .unwrap_or(CONSENT_TIMEOUT)
}

impl ConsentAsker for SharedConsent {
    fn ask(&self, reason: &str, commands: &[String], stop: &StopFlag) -> Outcome {
        let consent = &self.0;
        if consent.ui.as_ref().is_some_and(|(ui, _)| ui.snapshot().member) {
            // Another mcec is the display's guard: its one prompt asks for this agent too.
            return consent.guard.ask_guard(reason, commands, stop, &consent.attestor).unwrap_or_else(|| {
                Outcome::Unavailable(
                    "another mcec on this display shows the operator's windows and did not answer".into(),
                )
            });
        }
        consent.ask_here(None, 0, reason, commands, stop).0
    }
}

impl OperatorConsent {
    /// Put a request to the operator in this process's consent prompt, for `agent` (named when
    /// the prompt speaks for the display's other agents) with `behind` more waiting; with
    /// `Granted`, the events that pressed `Allow` (judged physical here).
    pub fn ask_here(
        &self,
        agent: Option<String>,
        behind: usize,
        reason: &str,
        commands: &[String],
        stop: &StopFlag,
    ) -> (Outcome, Option<Activation>) {
        let Some((ui, windows)) = &self.ui else {
            let why = "no operator window: no display, or the windows could not start";
            return (Outcome::Unavailable(why.into()), None);
        };
        if !self.attestor.monitored {
            let why = "the emergency stop's input monitor is not running, so a click in the prompt could not be \
                       told from a program's";
            return (Outcome::Unavailable(why.into()), None);
        }
        if windows.ended() {
            return (Outcome::Unavailable("the operator windows are gone".into()), None);
        }
        let mut allowed_by = None;
        let clicks = self.clicks.lock().unwrap_or_else(PoisonError::into_inner);
        while clicks.try_recv().is_ok() {}
        ui.open_consent_for(agent, behind, reason, commands.to_vec());
        let deadline = Instant::now() + timeout();
        let outcome = loop {
            if stop.is_set() {
                break Outcome::Stopped;
            }
            if windows.ended() {
                break Outcome::Unavailable("the operator windows went away".into());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break Outcome::TimedOut;
            }
            match clicks.recv_timeout(left.min(TICK)) {
                Ok(ConsentClick::Deny) => break Outcome::Denied,
                Ok(ConsentClick::Allow(by)) => {
                    let judgement = self.attestor.judge(&by);
                    match judgement.verdict {
                        Ok(_) if !stop.is_set() => {
                            audit("consent-allowed", &judgement.detail);
                            allowed_by = Some(by);
                            break Outcome::Granted;
                        }
                        Ok(_) => break Outcome::Stopped,
                        Err(refusal) => {
                            audit("consent-refused", &format!("{}: {}", refusal.code(), judgement.detail));
                            ui.refuse_consent(format!("Not allowed: {refusal}."));
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    break Outcome::Unavailable("the operator windows stopped answering".into());
                }
            }
        };
        ui.close_consent();
        (outcome, allowed_by)
    }
}
