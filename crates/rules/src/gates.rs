//! The gate order of a `tools/call`, in one place. The first gate that matches answers;
//! every refusal is audited by the caller before it answers.
//!
//! 1. latch set → `emergency-stopped`, for every name, known or not;
//! 2. installed copy and not a meta tool → `bootstrap-only`;
//!    a consent prompt open and an actuation tool, `provision-session` or a second
//!    `request-command-access` → `consent-pending` ([`frozen_while_asking`]);
//! 3. meta tools (`provision-session`, `end-session`) pass to their own gates;
//! 4. `AgentCommandsEnabled` false → `agent-commands-disabled`;
//! 5. unknown tool → `unknown-tool`; disabled command → `command-disabled`;
//! 6. arguments (checked by the tool's typed parser, between [`admit`] and [`desktop_gate`]);
//! 7. no desktop → `no-desktop`; desktop but stop not armed → `emergency-stop-unavailable`
//!    for actuation, unless the operator's own setting runs without it ([`DesktopGate::NotArmed`]).
//!
//! `tools/list` shows a tool when [`listed`] says so: the same [`withheld`] that gates 2, 4
//! and 5 refuse with, so the list and the gates cannot disagree.

use crate::catalog::{self, ToolKind, ToolSpec};
use crate::settings::{Commands, UNSAFE_WAYLAND_KEY};
use crate::{ErrorCode, ToolError};

/// What gates 1–5 need to know about this process, sampled once per call.
#[derive(Debug, Clone, Copy)]
pub struct CallState<'a> {
    pub stopped: bool,
    pub installed_copy: bool,
    /// A session copy, which can never provision.
    pub session_copy: bool,
    pub agent_commands_enabled: bool,
    /// What `mcec.commands` enables plus this process's consent grants.
    pub commands: &'a Commands,
    /// A `request-command-access` prompt is waiting for the operator.
    pub consent_pending: bool,
}

/// Whether a call must wait while a consent prompt is open: everything that acts (actuation,
/// provisioning) and a second request. Observation, status and `end-session` are served.
pub fn frozen_while_asking(spec: &ToolSpec) -> bool {
    spec.kind == ToolKind::Actuation
        || spec.name == catalog::PROVISION_SESSION
        || spec.name == catalog::REQUEST_COMMAND_ACCESS
}

/// What decides whether a tool is offered at all: `tools/list` shows a tool exactly when
/// [`admit`] would not withhold it for these (gates 2, 4 and 5's disabled command), except
/// `provision-session` in a session copy, which answers `provisioning-not-authorized` whatever
/// its settings say and so is not offered.
#[derive(Debug, Clone, Copy)]
pub struct Offer<'a> {
    pub installed_copy: bool,
    pub session_copy: bool,
    pub agent_commands_enabled: bool,
    /// What `mcec.commands` enables plus this process's consent grants.
    pub commands: &'a Commands,
}

impl CallState<'_> {
    /// The part of the state that decides what is offered.
    pub fn offer(&self) -> Offer<'_> {
        Offer {
            installed_copy: self.installed_copy,
            session_copy: self.session_copy,
            agent_commands_enabled: self.agent_commands_enabled,
            commands: self.commands,
        }
    }
}

/// Why a tool is not offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Withheld {
    /// The operator's installed copy serves the meta tools only.
    BootstrapOnly,
    /// `AgentCommandsEnabled` is off: only the meta tools.
    AgentCommandsDisabled,
    /// A command `mcec.commands` does not enable (and no grant covers).
    CommandDisabled,
}

/// Whether, and why, `spec` (`None`: a name not in the catalogue) is withheld under `offer`.
/// A name not in the catalogue is withheld only by the first two; the caller answers
/// `unknown-tool` for it otherwise.
pub fn withheld(spec: Option<&ToolSpec>, offer: &Offer<'_>) -> Option<Withheld> {
    if spec.is_some_and(|s| s.kind == ToolKind::Meta) {
        return None;
    }
    if offer.installed_copy {
        return Some(Withheld::BootstrapOnly);
    }
    if !offer.agent_commands_enabled {
        return Some(Withheld::AgentCommandsDisabled);
    }
    let disabled = spec.is_some_and(|s| catalog::is_command(s.name) && !offer.commands.is_enabled(s.name));
    disabled.then_some(Withheld::CommandDisabled)
}

/// Whether `tools/list` shows `spec` under `offer`.
pub fn listed(spec: &ToolSpec, offer: &Offer<'_>) -> bool {
    let never_usable = offer.session_copy && spec.name == catalog::PROVISION_SESSION;
    withheld(Some(spec), offer).is_none() && !never_usable
}

impl Withheld {
    /// The refusal [`admit`] answers with (`name` is the tool's catalogue name).
    fn error(self, name: &str) -> ToolError {
        match self {
            Withheld::BootstrapOnly => ToolError::new(
                ErrorCode::BootstrapOnly,
                "This is the operator's installed mcec; it only serves `provision-session` and `end-session`. \
                 Ask for a session copy with `provision-session` and drive that instead.",
            ),
            Withheld::AgentCommandsDisabled => ToolError::new(
                ErrorCode::AgentCommandsDisabled,
                "Agent commands are turned off on this machine (AgentCommandsEnabled is false, or the settings \
                 file has an error). Ask the operator to enable them.",
            ),
            Withheld::CommandDisabled => ToolError::new(
                ErrorCode::CommandDisabled,
                format!("The `{name}` command is disabled in mcec.commands; ask the operator to enable it."),
            ),
        }
    }
}

/// Gates 1–5. On success, the tool's spec.
pub fn admit(state: &CallState<'_>, name: &str) -> Result<&'static ToolSpec, ToolError> {
    if state.stopped {
        return Err(ToolError::emergency_stopped());
    }
    let spec = catalog::find(name);
    let withheld = withheld(spec, &state.offer());
    if withheld == Some(Withheld::BootstrapOnly) {
        return Err(Withheld::BootstrapOnly.error(name));
    }
    if state.consent_pending && spec.is_some_and(frozen_while_asking) {
        return Err(crate::consent::pending());
    }
    if let Some(withheld) = withheld {
        return Err(withheld.error(spec.map_or(name, |s| s.name)));
    }
    spec.ok_or_else(|| {
        ToolError::new(
            ErrorCode::UnknownTool,
            format!("There is no tool named `{}`; call tools/list to see them.", printable(name)),
        )
    })
}

/// Whether this process can reach a desktop and whether the stop is armed there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DesktopGate {
    /// A display is reachable and the stop hotkey is armed.
    Ready,
    /// A display is reachable and actuation runs with no stop, because an operator setting
    /// says so (`why` names it). Never claims the stop is armed.
    NotArmed { why: String },
    /// A display is reachable, but the stop is not armed there: observation only.
    StopUnavailable { why: String },
    /// No display: `detail` says which one was tried.
    NoDesktop { detail: String },
}

impl DesktopGate {
    /// The gate on a display where the stop cannot be armed (a Wayland session's X server,
    /// `why` says so): observation only, unless the operator's [`UNSAFE_WAYLAND_KEY`] is on.
    pub fn stopless_display(why: &str, unsafe_allowed: bool) -> DesktopGate {
        if unsafe_allowed {
            DesktopGate::NotArmed {
                why: format!("{why}; agents may act anyway because {UNSAFE_WAYLAND_KEY} = true"),
            }
        } else {
            DesktopGate::StopUnavailable {
                why: format!(
                    "{why}; to let agents act, log into an X11 session or a sway session (where mcec arms its stop)"
                ),
            }
        }
    }

    /// Whether the stop chord is armed.
    pub fn stop_armed(&self) -> bool {
        matches!(self, DesktopGate::Ready)
    }

    /// Whether actuation tools may run at all.
    pub fn actuation_allowed(&self) -> bool {
        matches!(self, DesktopGate::Ready | DesktopGate::NotArmed { .. })
    }

    /// The stop's state in operator words, for the log, `session-status` and the host window.
    pub fn stop_line(&self) -> String {
        match self {
            DesktopGate::Ready => "emergency stop: armed".into(),
            DesktopGate::NotArmed { why } => format!("emergency stop: NOT armed: {why}"),
            DesktopGate::StopUnavailable { why } => {
                format!("emergency stop: not armed, agents may only observe: {why}")
            }
            DesktopGate::NoDesktop { detail } => format!("emergency stop: no desktop: {detail}"),
        }
    }
}

/// Gate 7, run after the arguments parsed.
pub fn desktop_gate(spec: &ToolSpec, desktop: &DesktopGate) -> Result<(), ToolError> {
    match desktop {
        _ if !spec.needs_desktop() => Ok(()),
        DesktopGate::Ready | DesktopGate::NotArmed { .. } => Ok(()),
        DesktopGate::NoDesktop { detail } => Err(ToolError::new(ErrorCode::NoDesktop, detail.clone())),
        DesktopGate::StopUnavailable { why } if spec.kind == ToolKind::Actuation => Err(ToolError::new(
            ErrorCode::EmergencyStopUnavailable,
            format!(
                "The operator's emergency stop is not armed: {why}. Nothing may actuate; observation tools still work."
            ),
        )),
        DesktopGate::StopUnavailable { .. } => Ok(()),
    }
}

/// Tool names come from the agent: keep what we echo (in details and logs) short and printable.
pub fn printable(name: &str) -> String {
    let clean: String = name.chars().filter(|c| !c.is_control()).collect();
    crate::text::ellipsize(&clean, 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(commands: &Commands) -> CallState<'_> {
        CallState {
            stopped: false,
            installed_copy: false,
            session_copy: false,
            agent_commands_enabled: true,
            commands,
            consent_pending: false,
        }
    }

    fn code(r: Result<&ToolSpec, ToolError>) -> Option<ErrorCode> {
        r.err().map(|e| e.code)
    }

    #[test]
    fn row1_latch_refuses_every_name() {
        let cmds = Commands::enabling(["click"]);
        let s =
            CallState { stopped: true, installed_copy: true, agent_commands_enabled: false, ..state(&cmds) };
        for name in
            ["click", "nope", "send_command", "provision-session", "end-session", "session-status", ""]
        {
            assert_eq!(code(admit(&s, name)), Some(ErrorCode::EmergencyStopped), "{name}");
        }
    }

    #[test]
    fn row2_installed_copy_is_bootstrap_only() {
        let cmds = Commands::enabling(["click"]);
        let s = CallState { installed_copy: true, ..state(&cmds) };
        assert_eq!(code(admit(&s, "click")), Some(ErrorCode::BootstrapOnly));
        assert_eq!(code(admit(&s, "session-status")), Some(ErrorCode::BootstrapOnly));
        assert_eq!(code(admit(&s, "unknown")), Some(ErrorCode::BootstrapOnly));
        assert!(admit(&s, "provision-session").is_ok());
    }

    #[test]
    fn row3_meta_tools_skip_the_agent_switch() {
        let cmds = Commands::default();
        let s = CallState { agent_commands_enabled: false, ..state(&cmds) };
        assert_eq!(admit(&s, "end-session").unwrap().name, "end-session");
        assert_eq!(admit(&s, "provision-session").unwrap().name, "provision-session");
    }

    #[test]
    fn row4_agent_switch_off_refuses_the_rest() {
        let cmds = Commands::enabling(["click"]);
        let s = CallState { agent_commands_enabled: false, ..state(&cmds) };
        assert_eq!(code(admit(&s, "click")), Some(ErrorCode::AgentCommandsDisabled));
        assert_eq!(code(admit(&s, "nope")), Some(ErrorCode::AgentCommandsDisabled));
    }

    #[test]
    fn row5_unknown_and_disabled() {
        let cmds = Commands::enabling(["click"]);
        let s = state(&cmds);
        assert_eq!(code(admit(&s, "frobnicate")), Some(ErrorCode::UnknownTool));
        assert_eq!(code(admit(&s, "capture")), Some(ErrorCode::CommandDisabled));
        assert_eq!(admit(&s, "click").unwrap().name, "click");
        assert_eq!(admit(&s, "session-status").unwrap().name, "session-status");
    }

    #[test]
    fn an_open_consent_prompt_freezes_actuation_and_provisioning_only() {
        let cmds = Commands::enabling(["click", "capture", "launch", "send_command"]);
        let s = CallState { consent_pending: true, ..state(&cmds) };
        for frozen in ["click", "launch", "send_command", "provision-session", "request-command-access"] {
            assert_eq!(code(admit(&s, frozen)), Some(ErrorCode::ConsentPending), "{frozen}");
        }
        for served in ["capture", "session-status", "end-session"] {
            assert!(admit(&s, served).is_ok(), "{served}");
        }
        // The stop outranks the prompt; an installed copy stays bootstrap-only.
        let stopped = CallState { stopped: true, ..s };
        assert_eq!(code(admit(&stopped, "click")), Some(ErrorCode::EmergencyStopped));
        let installed = CallState { installed_copy: true, ..s };
        assert_eq!(code(admit(&installed, "request-command-access")), Some(ErrorCode::BootstrapOnly));
        // Without a prompt the same calls pass.
        assert!(admit(&state(&cmds), "click").is_ok());
        assert!(admit(&state(&cmds), "request-command-access").is_ok());
    }

    /// Issue 24: `tools/list` shows a tool exactly when `admit` would not withhold it, for
    /// every catalogue tool and every offer (a session copy's `provision-session` aside).
    #[test]
    fn listed_is_exactly_what_admit_does_not_withhold() {
        let withholding =
            [ErrorCode::BootstrapOnly, ErrorCode::AgentCommandsDisabled, ErrorCode::CommandDisabled];
        let (mut shown, mut hidden) = (0, 0);
        for spec in catalog::TOOLS {
            for (installed_copy, agent_commands_enabled, enabled, session_copy) in
                (0..16).map(|bits| (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0))
            {
                let commands = if enabled { Commands::enabling([spec.name]) } else { Commands::default() };
                let s =
                    CallState { installed_copy, agent_commands_enabled, session_copy, ..state(&commands) };
                let refused = code(admit(&s, spec.name)).filter(|c| withholding.contains(c));
                let is_listed = listed(spec, &s.offer());
                let never_usable = session_copy && spec.name == catalog::PROVISION_SESSION;
                assert_eq!(
                    is_listed,
                    refused.is_none() && !never_usable,
                    "{} in {s:?}: admit gave {refused:?}",
                    spec.name
                );
                if is_listed { shown += 1 } else { hidden += 1 }
            }
        }
        assert!(shown > 0 && hidden > 0, "both sides seen: {shown} listed, {hidden} withheld");
    }

    #[test]
    fn unknown_names_are_echoed_safely() {
        let cmds = Commands::default();
        let long = "x".repeat(10_000) + "\u{7}";
        let err = admit(&state(&cmds), &long).unwrap_err();
        assert!(err.detail.len() < 200);
        assert!(!err.detail.contains('\u{7}'));
    }

    #[test]
    fn row7_desktop_gate() {
        let capture = catalog::find("capture").unwrap();
        let click = catalog::find("click").unwrap();
        let status = catalog::find("session-status").unwrap();
        let none = DesktopGate::NoDesktop { detail: "DISPLAY is not set".into() };
        let unarmed = DesktopGate::StopUnavailable { why: "no XInput 2.2".into() };
        assert_eq!(desktop_gate(capture, &none).unwrap_err().code, ErrorCode::NoDesktop);
        assert_eq!(desktop_gate(click, &none).unwrap_err().code, ErrorCode::NoDesktop);
        assert!(desktop_gate(status, &none).is_ok());
        assert!(desktop_gate(capture, &unarmed).is_ok());
        assert_eq!(desktop_gate(click, &unarmed).unwrap_err().code, ErrorCode::EmergencyStopUnavailable);
        assert!(desktop_gate(click, &DesktopGate::Ready).is_ok());
    }

    #[test]
    fn a_stopless_display_refuses_actuation_unless_the_operator_allows_it() {
        let click = catalog::find("click").unwrap();
        let capture = catalog::find("capture").unwrap();
        let why = "this is a Wayland session; the X11 stop cannot see your keyboard here";
        let refused = DesktopGate::stopless_display(why, false);
        let err = desktop_gate(click, &refused).unwrap_err();
        assert_eq!(err.code, ErrorCode::EmergencyStopUnavailable);
        assert!(err.detail.contains(why), "{}", err.detail);
        assert!(err.detail.contains("X11 session"), "{}", err.detail);
        assert!(desktop_gate(capture, &refused).is_ok());
        assert!(!refused.stop_armed() && !refused.actuation_allowed());

        let allowed = DesktopGate::stopless_display(why, true);
        assert!(desktop_gate(click, &allowed).is_ok());
        assert!(!allowed.stop_armed() && allowed.actuation_allowed());
        assert!(allowed.stop_line().contains("NOT armed"), "{}", allowed.stop_line());
        assert!(allowed.stop_line().contains(UNSAFE_WAYLAND_KEY), "{}", allowed.stop_line());
        assert!(DesktopGate::Ready.stop_armed());
    }
}
