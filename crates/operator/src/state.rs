//! The view model shared by the core and the operator's windows.
//!
//! The core owns every safety verdict; this model only holds what the windows should show
//! (mode, narration, the re-arm prompt and its refusal text) and is cheap to clone across
//! threads. Each setter asks the UI to repaint through a hook the UI installs at start-up, so
//! a change made on a protocol thread shows on screen at once.

use std::collections::VecDeque;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::agent_model::{AgentTab, HandoffPart};
use crate::consent_view::ConsentView;
use crate::console_model::{Console, now_secs};
use crate::end_prompt::EndAsk;
use mcec_rules::activation::Activation;
use mcec_rules::guard::{ActivityLine, AgentRow, DisplayCount, Whose};

/// How many narrated tool calls the overlay keeps.
pub const NARRATION_LINES: usize = 5;

/// Longest narrated line, in characters; longer lines end with an ellipsis.
pub const NARRATION_MAX_CHARS: usize = 80;

/// How long the `✔ Re-armed` line stays on the overlay.
pub const REARMED_FADE: Duration = Duration::from_secs(3);

/// What the agent side is doing, as far as the operator's windows are concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Armed, nothing acting.
    Idle,
    /// An agent is driving the desktop.
    Acting,
    /// The emergency stop is latched.
    Stopped { since: Instant, reason: String },
    /// The operator re-armed at `at`; the overlay shows `✔ Re-armed` for [`REARMED_FADE`].
    Rearmed { at: Instant },
}

/// What the operator did in one of the windows. The core checks the provenance of the event
/// that activated a safety control before it honours it; the UI never decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperatorEvent {
    /// `Re-arm` was activated in the prompt (a click, or Space on the focused button), by the
    /// events `by` names. The core honours it only when the provenance monitor saw those very
    /// events come from a physical device (`mcec_rules::activation`). On sway the core sends
    /// it itself for a press of the re-arm chord the monitor bound while the prompt was shown
    /// (`PromptChords`), `by` naming that press.
    RearmClicked { by: Activation },
    /// The prompt was dismissed with `Leave stopped`, Enter, Esc or the window's close button.
    LeaveStopped,
    /// A host menu's re-arm item was activated by `by`. On X11 the host's menu opens the
    /// attested re-arm prompt instead and never sends this; a surface that names its events
    /// (Windows, once bound) may send it, judged like [`OperatorEvent::RearmClicked`].
    MenuRearm { by: Activation },
    /// The host window's `Stop` button was pressed. Stopping is always allowed, so nothing
    /// about the press is judged: the core trips the latch.
    StopPressed,
    /// The host window's `Quit` item or close button was used; the UI is shutting down.
    Quit,
    /// `Allow` was clicked in the consent prompt (`request-command-access`) by `by` (on sway:
    /// the allow chord was pressed while it was shown); judged like
    /// [`OperatorEvent::RearmClicked`].
    ConsentAllow { by: Activation },
    /// The consent prompt was answered `Deny`, with Enter, Esc or the window's close button.
    ConsentDeny,
    /// The provisioning opt-in's confirmation was activated by `by`, asking for `enabled`;
    /// judged like [`OperatorEvent::RearmClicked`].
    SetProvisioning { enabled: bool, by: Activation },
    /// A session row's `Delete`.
    DeleteSession { id: String },
    /// The Agent tab's `Delete all`.
    DeleteAllSessions,
    /// The Agent tab's `Provision new…`.
    ProvisionNew,
    /// The settings window opened or `Refresh` was clicked: list the sessions again.
    RefreshSessions,
    /// A handoff `Copy` button: put that entry of the client labelled `client` on the
    /// clipboard. The text holds a token, so the event names it instead of carrying it.
    CopyHandoff { client: String, part: HandoffPart },
    /// The token reveal's confirmation (`reveal_prompt.rs`) was activated by `by`; judged like
    /// [`OperatorEvent::RearmClicked`] before the core shows the handoff's token.
    RevealToken { by: Activation },
    /// `End` was activated in the console's End prompt (`end_prompt.rs`) for the agent
    /// `whose` by `by`; judged like [`OperatorEvent::RearmClicked`] (and, for a member, again
    /// by the member's own monitor) before anything ends.
    EndAgent { whose: Whose, by: Activation },
}

/// A prompt the core may take the answer of from a chord the compositor binds on the physical
/// keyboards while it is shown (sway: [`OperatorState::set_prompt_chords`]), with what its
/// answer would do: a press is taken for what the prompt said when it was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChordPrompt {
    /// The re-arm prompt (its `Re-arm`).
    Rearm,
    /// The consent prompt (its `Allow`).
    Consent,
    /// The provisioning opt-in's confirmation, asking for `enabled` (its `Confirm`).
    OptIn { enabled: bool },
    /// The console's End prompt for the agent `whose` (its `End`).
    End { whose: Whose },
    /// The token reveal's confirmation (its `Reveal`).
    Reveal,
}

/// The chords that answer the prompts, where a window cannot name the event that pressed
/// its button (sway); `None` where the buttons are judged (X11, Windows).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptChords {
    /// Presses `Re-arm`, e.g. `Ctrl+Alt+Shift+R`.
    pub rearm: Option<String>,
    /// Presses `Allow`.
    pub allow: Option<String>,
    /// Presses the provisioning opt-in confirmation's `Confirm`.
    pub opt_in: Option<String>,
    /// Presses the console End prompt's `End`.
    pub end: Option<String>,
    /// Presses the token reveal confirmation's `Reveal`.
    pub reveal: Option<String>,
}

/// A copy of everything the windows draw, taken under the lock in one go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub mode: Mode,
    /// Oldest first.
    pub narration: Vec<String>,
    pub prompt_open: bool,
    pub refusal: Option<String>,
    /// A re-arm was requested and the core has not answered yet.
    pub rearm_pending: bool,
    /// The chords that answer the prompts on this desktop, if any.
    pub chords: PromptChords,
    /// What the front door is doing (host window status line).
    pub front_door: String,
    /// Why the stop could not be recorded on disk (the STOPPED banner says so), if it could not.
    pub stop_unrecorded: Option<String>,
    /// False when this display has no armed stop (stop turned off, a Wayland session): the
    /// host window must not say "Armed".
    pub stop_armed: bool,
    pub quit_requested: bool,
    /// The host's settings window is open.
    pub settings_open: bool,
    /// What the settings window's Agent tab shows.
    pub agent: AgentTab,
    /// The open consent prompt (`request-command-access`), if any.
    pub consent: Option<ConsentView>,
    /// The opt-in's confirmation prompt is open, asking for this value.
    pub opt_in_confirm: Option<bool>,
    /// The token reveal's confirmation prompt was asked for (open while the token is hidden).
    pub reveal_confirm: bool,
    /// The console's End prompt is open for this agent.
    pub end_confirm: Option<EndAsk>,
    /// How many times something (the tray's Open console) asked to bring the host window up.
    pub console_raise: u64,
    /// Another mcec on this display is its guard and shows the operator's windows: this
    /// process shows none of its own.
    pub member: bool,
    /// This process is the display's guard: the other agents there (its members), counted.
    pub others: Option<DisplayCount>,
    /// The host console's Agents pane: every mcec serving an agent on this display, as the
    /// guard knows them (empty when this process is not the guard).
    pub agents: Vec<AgentRow>,
    /// The host console's Activity pane: the last actions of all agents, newest first.
    pub activity: Vec<ActivityLine>,
}

type RepaintHook = Arc<dyn Fn() + Send + Sync>;
type ShownHook = Arc<dyn Fn(ChordPrompt, Option<Instant>) + Send + Sync>;

struct Inner {
    mode: Mode,
    narration: VecDeque<String>,
    prompt_open: bool,
    refusal: Option<String>,
    rearm_pending: bool,
    chords: PromptChords,
    front_door: String,
    stop_unrecorded: Option<String>,
    stop_unarmed: bool,
    quit_requested: bool,
    settings_open: bool,
    agent: AgentTab,
    consent: Option<ConsentView>,
    opt_in_confirm: Option<bool>,
    reveal_confirm: bool,
    end_confirm: Option<EndAsk>,
    console_raise: u64,
    member: bool,
    others: Option<DisplayCount>,
    console: Console,
    /// One per painter (one per process since the host window is painted on the CPU too).
    repaint: Vec<RepaintHook>,
    /// Told when a prompt answered by chord appears on screen or goes.
    shown: Option<ShownHook>,
}

/// Thread-safe, cheaply cloned view model. All clones share one state.
#[derive(Clone)]
pub struct OperatorState {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for OperatorState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperatorState").field("snapshot", &self.snapshot()).finish()
    }
}

impl Default for OperatorState {
    fn default() -> Self {
        Self::new()
    }
}

impl OperatorState {
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Mutex::new(Inner {
                mode: Mode::Idle,
                narration: VecDeque::with_capacity(NARRATION_LINES),
                prompt_open: false,
                refusal: None,
                rearm_pending: false,
                chords: PromptChords::default(),
                front_door: String::new(),
                stop_unrecorded: None,
                stop_unarmed: false,
                quit_requested: false,
                settings_open: false,
                agent: AgentTab::default(),
                consent: None,
                opt_in_confirm: None,
                reveal_confirm: false,
                end_confirm: None,
                console_raise: 0,
                member: false,
                others: None,
                console: Console::default(),
                repaint: Vec::new(),
                shown: None,
            })),
        }
    }

    /// A poisoned lock only means a panic elsewhere mid-update; the data is still plain
    /// values, so keep showing it rather than lose the stop banner.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Apply `change` under the lock, then call the repaint hooks outside it.
    fn update<R>(&self, change: impl FnOnce(&mut Inner) -> R) -> R {
        let (result, hooks) = {
            let mut inner = self.lock();
            let result = change(&mut inner);
            (result, inner.repaint.clone())
        };
        for hook in hooks {
            hook();
        }
        result
    }

    /// Installed by each painter so setters wake it.
    pub fn set_repaint_hook(&self, hook: impl Fn() + Send + Sync + 'static) {
        self.lock().repaint.push(Arc::new(hook));
    }

    /// Ask the UI to draw again without changing anything.
    pub fn request_repaint(&self) {
        self.update(|_| ());
    }

    pub fn snapshot(&self) -> Snapshot {
        let inner = self.lock();
        Snapshot {
            mode: inner.mode.clone(),
            narration: inner.narration.iter().cloned().collect(),
            prompt_open: inner.prompt_open,
            refusal: inner.refusal.clone(),
            rearm_pending: inner.rearm_pending,
            chords: inner.chords.clone(),
            front_door: inner.front_door.clone(),
            stop_unrecorded: inner.stop_unrecorded.clone(),
            stop_armed: !inner.stop_unarmed,
            quit_requested: inner.quit_requested,
            settings_open: inner.settings_open,
            agent: inner.agent.clone(),
            consent: inner.consent.clone(),
            opt_in_confirm: inner.opt_in_confirm,
            reveal_confirm: inner.reveal_confirm,
            end_confirm: inner.end_confirm.clone(),
            console_raise: inner.console_raise,
            member: inner.member,
            others: inner.others,
            agents: inner.console.agents.clone(),
            activity: inner.console.newest_first(),
        }
    }

    /// This process's own agent made a call, narrated as `line`: count it and add it to the
    /// console's activity.
    pub fn count_call(&self, line: &str) {
        let line = shorten(line);
        self.update(|inner| {
            inner.console.calls += 1;
            let agent = inner.console.own_label.clone().unwrap_or_else(|| "this mcec".into());
            inner.console.record(now_secs(), agent, line);
        });
    }

    /// Calls this process's own agent made.
    pub fn calls(&self) -> u64 {
        self.lock().console.calls
    }

    /// A member's agent acted (`line` from `mcec_rules::narration`, as the member sent it).
    pub fn record_activity(&self, agent: &str, line: &str) {
        let line = shorten(line);
        self.update(|inner| inner.console.record(now_secs(), agent.to_owned(), line));
    }

    /// The guard's rows for the console and the name of this process's own agent; repaints
    /// only on a change.
    pub fn set_agents(&self, rows: Vec<AgentRow>, own_label: Option<String>) {
        let changed = {
            let inner = self.lock();
            inner.console.agents != rows || inner.console.own_label != own_label
        };
        if changed {
            self.update(|inner| {
                inner.console.agents = rows;
                inner.console.own_label = own_label;
            });
        }
    }

    pub fn mode(&self) -> Mode {
        self.lock().mode.clone()
    }

    /// Add one narrated tool call in plain words (`mcec_rules::narration::describe`), e.g.
    /// `clicked at (412, 300)`. Keeps the last [`NARRATION_LINES`].
    pub fn narrate(&self, line: impl AsRef<str>) {
        let line = shorten(line.as_ref());
        self.update(|inner| {
            if inner.narration.len() == NARRATION_LINES {
                inner.narration.pop_front();
            }
            inner.narration.push_back(line);
        });
    }

    /// Mark an agent as acting or done. Ignored while stopped: the stop outranks everything.
    /// Returns whether the mode changed.
    pub fn set_acting(&self, acting: bool) -> bool {
        self.update(|inner| {
            let next = match (&inner.mode, acting) {
                (Mode::Stopped { .. }, _) => return false,
                (Mode::Acting, true) => return false,
                (_, true) => Mode::Acting,
                (Mode::Acting, false) => Mode::Idle,
                (_, false) => return false,
            };
            inner.mode = next;
            true
        })
    }

    /// The stop engaged: show the red banner and open the prompt. A second stop while already
    /// stopped keeps the first time and reason and just reopens the prompt.
    pub fn set_stopped(&self, reason: impl Into<String>) {
        let reason = reason.into();
        self.update(|inner| {
            if !matches!(inner.mode, Mode::Stopped { .. }) {
                inner.mode = Mode::Stopped { since: Instant::now(), reason };
            }
            inner.prompt_open = true;
            inner.refusal = None;
            inner.rearm_pending = false;
        });
    }

    /// The core honoured a re-arm. Closes the prompt. Returns false (and changes nothing)
    /// when not stopped.
    pub fn set_rearmed(&self) -> bool {
        self.update(|inner| {
            if !matches!(inner.mode, Mode::Stopped { .. }) {
                return false;
            }
            inner.mode = Mode::Rearmed { at: Instant::now() };
            // A guard whose members are still stopped keeps their prompt.
            inner.prompt_open = inner.others.is_some_and(|o| o.stopped > 0);
            inner.refusal = None;
            inner.rearm_pending = false;
            true
        })
    }

    /// Reopen the prompt (the chord was pressed again while stopped, or a guard's member
    /// stopped). Returns false when nothing is stopped, in which case there is nothing to
    /// re-arm and the prompt stays shut.
    pub fn open_prompt(&self) -> bool {
        self.update(|inner| {
            if !matches!(inner.mode, Mode::Stopped { .. }) && inner.others.is_none_or(|o| o.stopped == 0) {
                return false;
            }
            inner.prompt_open = true;
            inner.refusal = None;
            inner.rearm_pending = false;
            true
        })
    }

    /// The core refused a re-arm; the prompt (and host window) show `message`.
    pub fn show_refusal(&self, message: impl Into<String>) {
        let message = message.into();
        self.update(|inner| {
            inner.refusal = Some(message);
            inner.rearm_pending = false;
        });
    }

    /// Status text for the host window, e.g. `MCP on 127.0.0.1:8765`.
    pub fn set_front_door(&self, status: impl Into<String>) {
        let status = status.into();
        self.update(|inner| inner.front_door = status);
    }

    /// Whether the stop could be recorded on disk (`Some(why)` when it could not); the
    /// STOPPED banner carries a line saying so.
    pub fn set_stop_unrecorded(&self, why: Option<String>) {
        self.update(|inner| inner.stop_unrecorded = why);
    }

    /// Core side: the prompts are answered by these chords (the prompts say so), and `shown`
    /// is told when one of them appears on screen (`Some`: since when) or goes (`None`).
    pub fn set_prompt_chords(
        &self,
        chords: PromptChords,
        shown: impl Fn(ChordPrompt, Option<Instant>) + Send + Sync + 'static,
    ) {
        self.update(|inner| {
            inner.chords = chords;
            inner.shown = Some(Arc::new(shown));
        });
    }

    /// UI side: `prompt` is on screen since `at`, or gone (`None`). Tells the core's hook, if
    /// any; nothing is repainted.
    pub(crate) fn prompt_shown(&self, prompt: ChordPrompt, at: Option<Instant>) {
        let hook = self.lock().shown.clone();
        if let Some(hook) = hook {
            hook(prompt, at);
        }
    }

    /// Say that this display has no armed stop, so the host window never shows "Armed".
    pub fn set_stop_unarmed(&self) {
        self.update(|inner| inner.stop_unarmed = true);
    }

    /// Whether another mcec on the display shows the operator's windows (this one then
    /// shows none of its own, whatever its state).
    pub fn set_member(&self, member: bool) {
        self.update(|inner| inner.member = member);
    }

    /// As the display's guard: the other agents there, counted (`None`: there are none).
    pub fn set_others(&self, others: Option<DisplayCount>) {
        self.update(|inner| inner.others = others);
    }

    /// Ask the UI to close all its windows and return from `run_operator_ui`. Returns false
    /// when a quit was already requested.
    pub fn request_quit(&self) -> bool {
        self.update(|inner| !std::mem::replace(&mut inner.quit_requested, true))
    }

    /// Change what the Agent tab shows (core side).
    pub fn update_agent_tab(&self, change: impl FnOnce(&mut AgentTab)) {
        self.update(|inner| {
            change(&mut inner.agent);
            // The value the confirmation asked for has arrived: it is done, and must not
            // reopen when the value later changes some other way.
            if inner.opt_in_confirm == Some(inner.agent.allow_provisioning) {
                inner.opt_in_confirm = None;
            }
            // Likewise the reveal, once the token shows (or there is no hidden token left).
            if !inner.agent.handoff.as_ref().is_some_and(|h| h.token_hidden) {
                inner.reveal_confirm = false;
            }
        });
    }

    /// Open the host's settings window (the host menu's `Settings…`).
    pub fn open_settings(&self) {
        self.update(|inner| inner.settings_open = true);
    }

    /// Change the consent prompt's model (`consent_prompt.rs` owns its setters).
    pub(crate) fn update_consent<R>(&self, change: impl FnOnce(&mut Option<ConsentView>) -> R) -> R {
        self.update(|inner| change(&mut inner.consent))
    }

    /// UI side: the opt-in checkbox was clicked; open its attested confirmation asking for
    /// `enabled` (`None` closes it).
    pub(crate) fn set_opt_in_confirm(&self, enabled: Option<bool>) {
        self.update(|inner| {
            inner.opt_in_confirm = enabled;
            if enabled.is_some() {
                inner.agent.message = None;
            }
        });
    }

    /// UI side: `Reveal token…` was clicked (`true`) or its confirmation cancelled (`false`).
    pub(crate) fn set_reveal_confirm(&self, open: bool) {
        self.update(|inner| {
            inner.reveal_confirm = open;
            if open {
                inner.agent.message = None;
            }
        });
    }

    /// UI side: a row's `End` was clicked (`Some`: open the End prompt for it) or the prompt
    /// was cancelled (`None`).
    pub(crate) fn set_end_confirm(&self, row: Option<AgentRow>) {
        self.update(|inner| inner.end_confirm = row.map(EndAsk::new));
    }

    /// UI side: the End prompt's `End` was sent to the core; show that it is being checked.
    pub(crate) fn mark_end_pending(&self) {
        self.update(|inner| {
            if let Some(ask) = &mut inner.end_confirm {
                ask.pending = true;
                ask.refusal = None;
            }
        });
    }

    /// Core side: the core answered the End prompt: `None` closes it (the End was counted
    /// and sent on), `Some` says in it why nothing ended.
    pub fn end_answered(&self, refusal: Option<String>) {
        self.update(|inner| match refusal {
            None => inner.end_confirm = None,
            Some(why) => {
                if let Some(ask) = &mut inner.end_confirm {
                    ask.pending = false;
                    ask.refusal = Some(why);
                }
            }
        });
    }

    /// Bring the host window up (the tray's Open console).
    pub(crate) fn raise_console(&self) {
        self.update(|inner| inner.console_raise += 1);
    }

    /// UI side: the settings window was closed.
    pub fn close_settings(&self) {
        self.update(|inner| inner.settings_open = false);
    }

    /// UI side: an Agent tab request was sent to the core; show that it is being handled.
    pub(crate) fn mark_agent_pending(&self) {
        self.update(|inner| inner.agent.pending = true);
    }

    /// UI side: a re-arm was sent to the core; show that it is being checked.
    pub(crate) fn mark_rearm_pending(&self) {
        self.update(|inner| {
            inner.rearm_pending = true;
            inner.refusal = None;
        });
    }

    /// UI side: the operator dismissed the prompt. Returns whether it was open, so one
    /// dismissal is reported once.
    pub(crate) fn close_prompt(&self) -> bool {
        self.update(|inner| {
            let was_open = inner.prompt_open;
            inner.prompt_open = false;
            inner.rearm_pending = false;
            was_open
        })
    }
}

impl Snapshot {
    /// Whether this process's own stop is latched.
    pub fn own_stopped(&self) -> bool {
        matches!(self.mode, Mode::Stopped { .. })
    }

    /// Whether anything the windows speak for is stopped: this process, or (as the display's
    /// guard) one of its members.
    pub fn is_stopped(&self) -> bool {
        self.own_stopped() || self.others.is_some_and(|o| o.stopped > 0)
    }

    /// As the display's guard with members: every agent there, this process's included.
    pub fn display_count(&self) -> Option<DisplayCount> {
        self.others.map(|o| o.with(self.own_stopped(), self.mode == Mode::Acting))
    }

    /// Whether the `✔ Re-armed` line is still within its fade time at `now`, and how far
    /// through the fade it is (0.0 fresh, 1.0 gone).
    pub fn rearmed_fade(&self, now: Instant) -> Option<f32> {
        match self.mode {
            Mode::Rearmed { at } => {
                let age = now.saturating_duration_since(at);
                (age < REARMED_FADE).then(|| age.as_secs_f32() / REARMED_FADE.as_secs_f32())
            }
            _ => None,
        }
    }
}

fn shorten(line: &str) -> String {
    let line = line.trim();
    let one_line: String = line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    mcec_rules::text::ellipsize(&one_line, NARRATION_MAX_CHARS - 1)
}

/// Report `event` to the core; a core that stopped listening is only logged.
pub(crate) fn send(events: &Sender<OperatorEvent>, event: OperatorEvent) {
    if events.send(event).is_err() {
        tracing::warn!("operator event dropped: the core no longer listens");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn starts_idle_with_nothing_to_show() {
        let s = OperatorState::new().snapshot();
        assert_eq!(s.mode, Mode::Idle);
        assert!(s.narration.is_empty());
        assert!(!s.prompt_open);
        assert_eq!(s.refusal, None);
    }

    #[test]
    fn acting_toggles_between_idle_and_acting() {
        let st = OperatorState::new();
        assert!(st.set_acting(true));
        assert_eq!(st.mode(), Mode::Acting);
        assert!(!st.set_acting(true));
        assert!(st.set_acting(false));
        assert_eq!(st.mode(), Mode::Idle);
        assert!(!st.set_acting(false));
    }

    #[test]
    fn stop_outranks_acting_and_opens_the_prompt() {
        let st = OperatorState::new();
        st.set_acting(true);
        st.set_stopped("chord Ctrl+Alt+Shift+S");
        assert!(!st.set_acting(true));
        assert!(!st.set_acting(false));
        let s = st.snapshot();
        assert!(s.is_stopped());
        assert!(s.prompt_open);
        match s.mode {
            Mode::Stopped { reason, .. } => assert_eq!(reason, "chord Ctrl+Alt+Shift+S"),
            other => panic!("expected stopped, got {other:?}"),
        }
    }

    #[test]
    fn second_stop_keeps_first_reason_and_reopens_prompt() {
        let st = OperatorState::new();
        st.set_stopped("chord");
        let first = st.mode();
        st.close_prompt();
        st.set_stopped("tampering");
        let s = st.snapshot();
        assert_eq!(s.mode, first);
        assert!(s.prompt_open);
    }

    #[test]
    fn rearm_only_from_stopped_and_closes_prompt() {
        let st = OperatorState::new();
        assert!(!st.set_rearmed());
        assert_eq!(st.mode(), Mode::Idle);
        st.set_stopped("chord");
        st.show_refusal("Re-arm refused: the click was not physical input");
        assert!(st.set_rearmed());
        let s = st.snapshot();
        assert!(matches!(s.mode, Mode::Rearmed { .. }));
        assert!(!s.prompt_open);
        assert_eq!(s.refusal, None);
        assert!(st.set_acting(true));
        assert_eq!(st.mode(), Mode::Acting);
    }

    #[test]
    fn prompt_reopens_only_while_stopped() {
        let st = OperatorState::new();
        assert!(!st.open_prompt());
        assert!(!st.snapshot().prompt_open);
        st.set_stopped("chord");
        st.close_prompt();
        assert!(!st.snapshot().prompt_open);
        assert!(st.open_prompt());
        assert!(st.snapshot().prompt_open);
    }

    #[test]
    fn refusal_text_is_shown_and_clears_pending() {
        let st = OperatorState::new();
        st.set_stopped("chord");
        st.mark_rearm_pending();
        assert!(st.snapshot().rearm_pending);
        st.show_refusal("Re-arm refused: the click was not physical input");
        let s = st.snapshot();
        assert!(!s.rearm_pending);
        assert_eq!(s.refusal.as_deref(), Some("Re-arm refused: the click was not physical input"));
        assert!(s.is_stopped());
        st.mark_rearm_pending();
        assert_eq!(st.snapshot().refusal, None);
    }

    #[test]
    fn narration_keeps_the_last_five_in_order() {
        let st = OperatorState::new();
        for i in 0..8 {
            st.narrate(format!("clicked at ({i}, 0)"));
        }
        let lines = st.snapshot().narration;
        assert_eq!(lines.len(), NARRATION_LINES);
        assert_eq!(lines.first().map(String::as_str), Some("clicked at (3, 0)"));
        assert_eq!(lines.last().map(String::as_str), Some("clicked at (7, 0)"));
    }

    #[test]
    fn narration_is_one_short_line() {
        let st = OperatorState::new();
        st.narrate("clicked Save\nin Editor");
        st.narrate("é".repeat(200));
        let lines = st.snapshot().narration;
        assert_eq!(lines[0], "clicked Save in Editor");
        assert_eq!(lines[1].chars().count(), NARRATION_MAX_CHARS);
        assert!(lines[1].ends_with('…'));
    }

    #[test]
    fn setters_call_the_repaint_hook() {
        let st = OperatorState::new();
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = calls.clone();
        st.set_repaint_hook(move || {
            seen.fetch_add(1, Ordering::SeqCst);
        });
        st.narrate("pressed Ctrl+S");
        st.set_acting(true);
        st.set_stopped("chord");
        st.show_refusal("no");
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn hook_may_read_the_state_without_deadlock() {
        let st = OperatorState::new();
        let reader = st.clone();
        st.set_repaint_hook(move || {
            let _ = reader.snapshot();
        });
        st.narrate("scrolled down 3");
        assert_eq!(st.snapshot().narration.len(), 1);
    }

    #[test]
    fn a_guard_shows_its_members_stop_and_keeps_their_prompt_after_its_own_rearm() {
        let st = OperatorState::new();
        let stopped_member = DisplayCount { agents: 1, acting: 0, stopped: 1 };
        assert!(!st.open_prompt());
        st.set_others(Some(stopped_member));
        assert!(st.snapshot().is_stopped(), "a stopped member is a stop on the guard's windows");
        assert!(st.open_prompt());
        st.set_stopped("chord");
        assert!(st.set_rearmed());
        let s = st.snapshot();
        assert!(s.prompt_open && s.is_stopped(), "the member is still stopped");
        assert_eq!(s.display_count(), Some(DisplayCount { agents: 2, acting: 0, stopped: 1 }));
        st.set_others(Some(DisplayCount { agents: 1, acting: 0, stopped: 0 }));
        assert!(!st.snapshot().is_stopped());
    }

    #[test]
    fn rearmed_line_fades_after_three_seconds() {
        let st = OperatorState::new();
        st.set_stopped("chord");
        st.set_rearmed();
        let s = st.snapshot();
        let Mode::Rearmed { at } = s.mode else {
            panic!("expected rearmed");
        };
        assert_eq!(s.rearmed_fade(at), Some(0.0));
        assert!(s.rearmed_fade(at + REARMED_FADE / 2).is_some());
        assert_eq!(s.rearmed_fade(at + REARMED_FADE), None);
    }

    #[test]
    fn clones_share_state() {
        let a = OperatorState::new();
        let b = a.clone();
        b.set_front_door("MCP on stdio");
        assert!(a.request_quit());
        assert!(!b.request_quit());
        let s = b.snapshot();
        assert_eq!(s.front_door, "MCP on stdio");
        assert!(s.quit_requested);
    }

    #[test]
    fn the_opt_in_confirmation_ends_when_its_value_arrives_and_never_reopens_by_itself() {
        let st = OperatorState::new();
        st.set_opt_in_confirm(Some(true));
        assert_eq!(st.snapshot().opt_in_confirm, Some(true));
        st.update_agent_tab(|tab| tab.pending = false);
        assert_eq!(st.snapshot().opt_in_confirm, Some(true), "still asking: the value has not changed");
        st.update_agent_tab(|tab| tab.allow_provisioning = true);
        assert_eq!(st.snapshot().opt_in_confirm, None, "done once the core reports the asked value");
        st.update_agent_tab(|tab| tab.allow_provisioning = false);
        assert_eq!(st.snapshot().opt_in_confirm, None, "a later change elsewhere opens nothing");
    }

    #[test]
    fn the_reveal_confirmation_ends_when_the_token_shows() {
        let st = OperatorState::new();
        let hidden = crate::agent_model::HandoffView { token_hidden: true, ..Default::default() };
        st.update_agent_tab(|tab| tab.handoff = Some(hidden.clone()));
        st.set_reveal_confirm(true);
        st.update_agent_tab(|tab| tab.pending = false);
        assert!(st.snapshot().reveal_confirm, "still asking: the token is still hidden");
        st.update_agent_tab(|tab| tab.handoff = Some(crate::agent_model::HandoffView::default()));
        assert!(!st.snapshot().reveal_confirm, "done once the core shows the token");
        st.update_agent_tab(|tab| tab.handoff = Some(hidden));
        assert!(!st.snapshot().reveal_confirm, "hidden again later: nothing reopens by itself");
    }

    #[test]
    fn own_calls_are_counted_and_listed_under_the_guards_name_for_them() {
        let st = OperatorState::new();
        st.count_call("captured the screen");
        st.set_agents(Vec::new(), Some("claude-code".into()));
        st.count_call("clicked Save\nin Editor");
        st.record_activity("codex", "typed 3 characters");
        assert_eq!(st.calls(), 2);
        let who_what: Vec<(String, String)> =
            st.snapshot().activity.into_iter().map(|a| (a.agent, a.line)).collect();
        let pairs = [
            ("codex", "typed 3 characters"),
            ("claude-code", "clicked Save in Editor"),
            ("this mcec", "captured the screen"),
        ];
        assert_eq!(who_what, pairs.map(|(a, l)| (a.to_string(), l.to_string())), "newest first");
    }
}
