//! The tool catalogue: every tool name mcec knows and what kind of tool it is. The kind
//! decides which gates apply (the desktop gate, the actuation gate) and what provisioning
//! enables by default. Schemas and handlers live with the MCP layer; this is only the
//! list the rules need.

/// What a tool does, as far as the gates care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// `provision-session`, `end-session`: own gates, not behind `AgentCommandsEnabled`.
    Meta,
    /// `session-status`, `request-command-access`: served whatever `mcec.commands` says (behind
    /// `AgentCommandsEnabled`); need no desktop.
    Status,
    /// Reads the desktop (needs a display).
    Observation,
    /// Moves, clicks or types (needs a display and an armed stop).
    Actuation,
}

/// What a tool does to the world, as MCP's tool annotations state it (clients use these
/// to auto-approve observation and to warn before input). Facts about the tool, not
/// about one call: a tool whose arguments can write a file is not read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// Changes nothing outside mcec (`readOnlyHint`).
    pub read_only: bool,
    /// Can undo or overwrite something: input to other programs, an existing file (`destructiveHint`).
    pub destructive: bool,
    /// The same call twice has no further effect (`idempotentHint`).
    pub idempotent: bool,
    /// Acts on programs mcec does not control: the operator's applications (`openWorldHint`).
    pub open_world: bool,
}

/// Reads state and changes nothing.
const OBSERVES: Hints = Hints { read_only: true, destructive: false, idempotent: true, open_world: false };
/// Sends input to the operator's applications: anything can follow.
const INPUT: Hints = Hints { read_only: false, destructive: true, idempotent: false, open_world: true };
/// Writes a file that may already exist (`file` is used as given).
const WRITES_FILE: Hints =
    Hints { read_only: false, destructive: true, idempotent: false, open_world: false };

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: &'static str,
    pub kind: ToolKind,
    /// A short human-readable name for `tools/list`.
    pub title: &'static str,
    /// One line for `tools/list`.
    pub description: &'static str,
    pub hints: Hints,
}

impl ToolSpec {
    pub fn needs_desktop(&self) -> bool {
        matches!(self.kind, ToolKind::Observation | ToolKind::Actuation)
    }
}

pub const PROVISION_SESSION: &str = "provision-session";
pub const END_SESSION: &str = "end-session";
pub const SESSION_STATUS: &str = "session-status";
pub const LAUNCH: &str = "launch";
pub const REQUEST_COMMAND_ACCESS: &str = "request-command-access";

/// Every tool, in the order `tools/list` shows them.
pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: SESSION_STATUS,
        kind: ToolKind::Status,
        title: "Run status",
        description: "This process's run record (runId, start, calls, refusals by code, stop history) and whether the stop is armed.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "displays",
        kind: ToolKind::Observation,
        title: "List displays",
        description: "Monitors (index, primary, name, bounds) and the virtual desktop bounds. Errors: no-desktop.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "windows",
        kind: ToolKind::Observation,
        title: "List or wait for windows",
        description: "Top-level windows (id, title, class, pid, process, geometry, foreground), filtered; or wait (up to 50 s) for one to appear, disappear or come to the front. Errors: timeout.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "capture",
        kind: ToolKind::Observation,
        title: "Capture a screenshot",
        description: "Screenshot of the desktop, a region or a window (PNG or JPEG), downscaled to a model-friendly size unless `full`; the answer gives the scale and a captureId for pointer tools. Errors: window-not-found, ambiguous-selector.",
        hints: Hints { idempotent: true, ..WRITES_FILE },
    },
    ToolSpec {
        name: "click",
        kind: ToolKind::Actuation,
        title: "Click",
        description: "Click a point or an element's centre, 1-3 times, optionally with modifiers. Errors: window-not-found, ambiguous-selector, element-not-found.",
        hints: INPUT,
    },
    ToolSpec {
        name: "drag",
        kind: ToolKind::Actuation,
        title: "Drag",
        description: "Press a button at `from`, move through `path` (at most 400 points) to `to`, release. Errors: window-not-found, ambiguous-selector, element-not-found.",
        hints: INPUT,
    },
    ToolSpec {
        name: "scroll",
        kind: ToolKind::Actuation,
        title: "Scroll",
        description: "Turn the wheel up, down, left or right by notches at a point, optionally with modifiers (ctrl zooms). Errors: window-not-found, ambiguous-selector.",
        hints: INPUT,
    },
    ToolSpec {
        name: "mouse",
        kind: ToolKind::Actuation,
        title: "Mouse",
        description: "Move the pointer (optionally along a path), press or release a button (held between calls, released after 60 s at most), or read the pointer position. Errors: window-not-found, ambiguous-selector.",
        hints: INPUT,
    },
    ToolSpec {
        name: "wait",
        kind: ToolKind::Observation,
        title: "Wait",
        description: "Wait up to 30 s (a page load, an animation); ends at once on the emergency stop.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "type",
        kind: ToolKind::Actuation,
        title: "Type text",
        description: "Type Unicode text (at most 10000 characters) into the focused window.",
        hints: INPUT,
    },
    ToolSpec {
        name: "key",
        kind: ToolKind::Actuation,
        title: "Press keys",
        description: "Press key chords such as `ctrl+shift+t`, `Enter`, `F5` (at most 32); everything pressed is released.",
        hints: INPUT,
    },
    ToolSpec {
        name: "window",
        kind: ToolKind::Actuation,
        title: "Move, resize or raise a window",
        description: "Move, resize, minimize, maximize, restore or raise one window. Errors: window-not-found, ambiguous-selector, window-closed.",
        hints: Hints { destructive: false, idempotent: true, ..INPUT },
    },
    ToolSpec {
        name: "focus",
        kind: ToolKind::Actuation,
        title: "Focus a window",
        description: "Bring a window to the front, optionally click in it, and check it has the keyboard focus. Errors: window-not-found, ambiguous-selector, focus-failed.",
        hints: INPUT,
    },
    ToolSpec {
        name: LAUNCH,
        kind: ToolKind::Actuation,
        title: "Launch a program",
        description: "Start a program and wait for its window (only when the operator enables it). Errors: timeout, no-target.",
        hints: INPUT,
    },
    ToolSpec {
        name: "record",
        kind: ToolKind::Actuation,
        title: "Record the screen",
        description: "Record the desktop, a region or a window as an animated GIF (start, stop, oneshot; at most 60 s). Errors: window-not-found, ambiguous-selector, unavailable (nothing recording).",
        hints: WRITES_FILE,
    },
    ToolSpec {
        name: "send_command",
        kind: ToolKind::Actuation,
        title: "Send raw input commands",
        description: "Run one line of the raw command language (chars:, key:, mouse:, pause:; at most 50 commands); each kind is enabled on its own. Errors: command-disabled, queue-full.",
        hints: INPUT,
    },
    ToolSpec {
        name: "query",
        kind: ToolKind::Observation,
        title: "Query the accessibility tree",
        description: "The accessibility tree under a window or element (role, name, states, actions, desktop bounds, elementIds), bounded by depth and maxElements. Errors: window-not-found, ambiguous-selector, element-not-found, stale-element, unavailable.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "find",
        kind: ToolKind::Observation,
        title: "Find an element",
        description: "The one element under a window matching `value` (and `role`, `states`); several matches are refused and listed. Errors: element-not-found, ambiguous-selector, stale-element, unavailable.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "invoke",
        kind: ToolKind::Actuation,
        title: "Act on an element",
        description: "Without the mouse: press, toggle, select, expand, collapse or focus an element, or set a value or a field's text. Errors: element-not-found, ambiguous-selector, stale-element, unavailable.",
        hints: INPUT,
    },
    ToolSpec {
        name: "wait-for",
        kind: ToolKind::Observation,
        title: "Wait for an element",
        description: "Wait (up to 50 s) until an element matching a selector appears, disappears, or becomes enabled, focused or showing; ends on the emergency stop. Errors: timeout, window-not-found, ambiguous-selector, unavailable.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "get-text",
        kind: ToolKind::Observation,
        title: "Read text",
        description: "Text of an element, a window or a desktop region: the accessibility tree first, else OCR (words, boxes, confidence where the engine gives one); says which. Errors: element-not-found, ambiguous-selector, stale-element, no-target, unavailable.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "clipboard",
        kind: ToolKind::Actuation,
        title: "Clipboard",
        description: "Set the CLIPBOARD (or PRIMARY) text, kept until another program takes it; get it only where `[clipboard.read]` is enabled. Errors: command-disabled, timeout, unavailable.",
        hints: Hints { destructive: true, idempotent: true, ..INPUT },
    },
    ToolSpec {
        name: PROVISION_SESSION,
        kind: ToolKind::Meta,
        title: "Provision a session",
        description: "Create a session copy of mcec for this agent: own directory, settings and token (needs the operator's opt-in). Errors: provisioning-not-authorized, provisioning-failed.",
        hints: Hints { destructive: false, ..WRITES_FILE },
    },
    ToolSpec {
        name: END_SESSION,
        kind: ToolKind::Meta,
        title: "End a session",
        description: "Delete a session copy by sessionId and token (stop its process first). Errors: session-token-invalid, session-running.",
        hints: Hints { idempotent: true, ..WRITES_FILE },
    },
    ToolSpec {
        name: REQUEST_COMMAND_ACCESS,
        kind: ToolKind::Status,
        title: "Ask the operator for more commands",
        description: "Ask the operator, in a local prompt, to enable up to 8 commands (tools or raw kinds such as `send_command.chars`) for this process, with a one-line `reason`; ask for all at once. Errors: consent-denied, consent-timeout, consent-pending, consent-unavailable.",
        hints: Hints { read_only: false, destructive: false, idempotent: false, open_world: false },
    },
];

/// Look a tool up by name.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The names a session copy enables when the agent asks for nothing in particular:
/// every command tool except `launch`, which provisioning never enables.
pub fn provisionable_by_default() -> impl Iterator<Item = &'static str> {
    TOOLS
        .iter()
        .filter(|t| matches!(t.kind, ToolKind::Observation | ToolKind::Actuation))
        .filter(|t| t.name != LAUNCH)
        .map(|t| t.name)
}

/// Tools governed by `mcec.commands` (each has its own `Enabled`).
pub fn is_command(name: &str) -> bool {
    find(name).is_some_and(|t| matches!(t.kind, ToolKind::Observation | ToolKind::Actuation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = TOOLS.iter().map(|t| t.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
    }

    #[test]
    fn launch_is_never_provisioned_by_default() {
        assert!(!provisionable_by_default().any(|n| n == LAUNCH));
        assert!(provisionable_by_default().any(|n| n == "click"));
    }

    #[test]
    fn hints_agree_with_kinds() {
        for t in TOOLS {
            assert!(!t.title.is_empty(), "{}", t.name);
            assert!(!(t.hints.read_only && t.hints.destructive), "{}", t.name);
            if t.kind == ToolKind::Actuation {
                assert!(!t.hints.read_only, "{}", t.name);
            }
        }
        let read_only: Vec<_> = TOOLS.iter().filter(|t| t.hints.read_only).map(|t| t.name).collect();
        assert_eq!(
            read_only,
            [SESSION_STATUS, "displays", "windows", "wait", "query", "find", "wait-for", "get-text"]
        );
        assert!(find("click").is_some_and(|t| t.hints.open_world && t.hints.destructive));
    }

    #[test]
    fn meta_and_status_are_not_commands() {
        assert!(!is_command(PROVISION_SESSION));
        assert!(!is_command(SESSION_STATUS));
        assert!(is_command("capture"));
    }
}
