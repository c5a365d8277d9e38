//! The one error shape an agent ever sees: a kebab-case `code`, its `category`, and a
//! `detail` sentence the agent can act on. Every crate reports tool failures as a
//! [`ToolError`]; internals go to the log, never into `detail`.

use std::fmt;

/// Every error code mcec can answer with. The wire spelling is [`ErrorCode::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// The operator pressed the stop chord (or tampering was seen); nothing runs until re-arm.
    EmergencyStopped,
    /// The client cancelled the call (or went away, or this process is shutting down); it
    /// stopped at its next step and released what it held.
    Cancelled,
    /// An installed copy serves only `provision-session` and `end-session`.
    BootstrapOnly,
    /// `AgentCommandsEnabled` is false (or the settings file is broken: fail closed).
    AgentCommandsDisabled,
    /// No tool of that name.
    UnknownTool,
    /// The tool exists but `mcec.commands` does not enable it.
    CommandDisabled,
    /// Arguments of the wrong type, missing, out of range or unknown.
    BadArguments,
    /// No X display could be reached.
    NoDesktop,
    /// A display is reachable but the stop hotkey is not armed, so nothing may actuate.
    EmergencyStopUnavailable,
    /// A window selector matched nothing (or no selector was given).
    WindowNotFound,
    /// A window selector matched more than one window.
    AmbiguousSelector,
    /// The target window closed while the call was using it.
    WindowClosed,
    /// A point or area lies on no screen, or the target cannot be used.
    NoTarget,
    /// A bounded wait ran out.
    Timeout,
    /// Focus could not be moved or verified.
    Focus,
    /// A capture came back blank.
    CaptureBlank,
    /// Something this process needs is not available (e.g. a feature not built yet, a busy recorder).
    Unavailable,
    /// The `send_command` queue is full.
    QueueFull,
    /// `provision-session` without the operator's opt-in.
    ProvisioningNotAuthorized,
    /// Provisioning failed; the partial directory was removed.
    ProvisioningFailed,
    /// `end-session` with a wrong token, or a session config that cannot be read.
    SessionTokenInvalid,
    /// `end-session` on a session whose instance still holds its lock.
    SessionRunning,
    /// The operator denied a `request-command-access` (sticky for those commands in this process).
    ConsentDenied,
    /// The operator did not answer a `request-command-access` in time (asking again may work).
    ConsentTimeout,
    /// No consent prompt can be shown (no display, no operator window, no provenance monitor).
    ConsentUnavailable,
    /// A consent prompt is open: actuation and provisioning wait for the operator's answer.
    ConsentPending,
    /// The operator kept using a session's own display (its window on their desktop) while the
    /// agent's input waited; nothing was sent (`operator_hand`).
    OperatorActive,
    /// No accessible element matched a selector, or an element id was never issued.
    ElementNotFound,
    /// An accessible element that was found before is gone.
    StaleElement,
    /// A bug or an unexpected OS failure.
    Internal,
}

impl ErrorCode {
    /// The kebab-case code on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::EmergencyStopped => "emergency-stopped",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::BootstrapOnly => "bootstrap-only",
            ErrorCode::AgentCommandsDisabled => "agent-commands-disabled",
            ErrorCode::UnknownTool => "unknown-tool",
            ErrorCode::CommandDisabled => "command-disabled",
            ErrorCode::BadArguments => "bad-arguments",
            ErrorCode::NoDesktop => "no-desktop",
            ErrorCode::EmergencyStopUnavailable => "emergency-stop-unavailable",
            ErrorCode::WindowNotFound => "window-not-found",
            ErrorCode::AmbiguousSelector => "ambiguous-selector",
            ErrorCode::WindowClosed => "window-closed",
            ErrorCode::NoTarget => "no-target",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Focus => "focus-failed",
            ErrorCode::CaptureBlank => "capture-blank",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::QueueFull => "queue-full",
            ErrorCode::ProvisioningNotAuthorized => "provisioning-not-authorized",
            ErrorCode::ProvisioningFailed => "provisioning-failed",
            ErrorCode::SessionTokenInvalid => "session-token-invalid",
            ErrorCode::SessionRunning => "session-running",
            ErrorCode::ConsentDenied => "consent-denied",
            ErrorCode::ConsentTimeout => "consent-timeout",
            ErrorCode::ConsentUnavailable => "consent-unavailable",
            ErrorCode::ConsentPending => "consent-pending",
            ErrorCode::OperatorActive => "operator-active",
            ErrorCode::ElementNotFound => "element-not-found",
            ErrorCode::StaleElement => "stale-element",
            ErrorCode::Internal => "internal",
        }
    }

    /// The contract's category for this code.
    pub fn category(self) -> &'static str {
        match self {
            ErrorCode::EmergencyStopped
            | ErrorCode::Cancelled
            | ErrorCode::BootstrapOnly
            | ErrorCode::AgentCommandsDisabled
            | ErrorCode::CommandDisabled
            | ErrorCode::ProvisioningNotAuthorized
            | ErrorCode::SessionTokenInvalid
            | ErrorCode::SessionRunning
            | ErrorCode::ConsentDenied
            | ErrorCode::ConsentPending => "refused",
            ErrorCode::UnknownTool | ErrorCode::BadArguments => "invalid-argument",
            ErrorCode::NoDesktop
            | ErrorCode::EmergencyStopUnavailable
            | ErrorCode::Unavailable
            | ErrorCode::QueueFull
            | ErrorCode::OperatorActive
            | ErrorCode::ConsentUnavailable => "unavailable",
            ErrorCode::WindowNotFound | ErrorCode::NoTarget => "no-target",
            ErrorCode::AmbiguousSelector => "ambiguous-selector",
            ErrorCode::WindowClosed | ErrorCode::StaleElement => "stale-element",
            ErrorCode::ElementNotFound => "no-target",
            ErrorCode::Timeout | ErrorCode::ConsentTimeout => "timeout",
            ErrorCode::Focus => "focus",
            ErrorCode::CaptureBlank => "capture-blank",
            ErrorCode::ProvisioningFailed | ErrorCode::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool-level failure: what the agent sees in `error{code,category,detail}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub detail: String,
}

impl ToolError {
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        ToolError { code, detail: detail.into() }
    }

    /// `bad-arguments` naming the offending field.
    pub fn bad_argument(field: &str, problem: impl fmt::Display) -> Self {
        ToolError::new(ErrorCode::BadArguments, format!("`{field}`: {problem}"))
    }

    /// The refusal every call gets while the stop is latched.
    pub fn emergency_stopped() -> Self {
        ToolError::new(
            ErrorCode::EmergencyStopped,
            "The operator pressed the emergency stop. Stop now and tell the user; do not retry. \
             Only the operator can re-arm mcec, at the machine.",
        )
    }
}

impl ToolError {
    /// `cancelled`, keeping what an `emergency-stopped` from the same abort said about how far
    /// the call got.
    pub fn cancelled_from(stopped: &ToolError) -> Self {
        let base = ToolError::emergency_stopped().detail;
        let progress = stopped.detail.strip_prefix(base.as_str()).unwrap_or("").trim();
        let detail =
            format!("The call was cancelled (its client cancelled it or went away) and stopped. {progress}");
        ToolError::new(ErrorCode::Cancelled, detail.trim_end())
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.detail)
    }
}

impl std::error::Error for ToolError {}
