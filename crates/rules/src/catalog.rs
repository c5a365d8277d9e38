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
        description: "This mcec process's run record (runId, start time, calls, refusals by code, emergency-stop history) and whether the stop is armed.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "displays",
        kind: ToolKind::Observation,
        title: "List displays",
        description: "List monitors (index, primary, name, bounds) and the virtual desktop bounds.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "windows",
        kind: ToolKind::Observation,
        title: "List or wait for windows",
        description: "List top-level windows (id, title, class, pid, process, geometry, foreground); filter, or wait for one to appear, disappear or come to the foreground.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "capture",
        kind: ToolKind::Observation,
        title: "Capture a screenshot",
        description: "Screenshot of the screen, a region or a window, as PNG; optionally downscaled.",
        hints: Hints { idempotent: true, ..WRITES_FILE },
    },
    ToolSpec {
        name: "click",
        kind: ToolKind::Actuation,
        title: "Click",
        description: "Click at a screen point or a point relative to a window, optionally with modifiers held (shift-click, ctrl-click).",
        hints: INPUT,
    },
    ToolSpec {
        name: "drag",
        kind: ToolKind::Actuation,
        title: "Drag",
        description: "Press a button (left by default) at `from`, move (through `path`) to `to`, release; optionally window-relative and with modifiers held.",
        hints: INPUT,
    },
    ToolSpec {
        name: "scroll",
        kind: ToolKind::Actuation,
        title: "Scroll",
        description: "Turn the mouse wheel up, down, left or right by a number of notches at a point, optionally with modifiers held (ctrl+scroll zooms).",
        hints: INPUT,
    },
    ToolSpec {
        name: "mouse",
        kind: ToolKind::Actuation,
        title: "Mouse",
        description: "Hover (move the pointer, optionally along a path), press or release a button and keep it down between calls (released after 60 s at most), or ask where the pointer is.",
        hints: INPUT,
    },
    ToolSpec {
        name: "wait",
        kind: ToolKind::Observation,
        title: "Wait",
        description: "Wait up to 30 s (for a page to load, an animation to end); ends at once on the emergency stop.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "type",
        kind: ToolKind::Actuation,
        title: "Type text",
        description: "Type Unicode text into the focused window.",
        hints: INPUT,
    },
    ToolSpec {
        name: "key",
        kind: ToolKind::Actuation,
        title: "Press keys",
        description: "Press a key chord such as `ctrl+shift+t`, `Enter` or `F5`; everything pressed is released.",
        hints: INPUT,
    },
    ToolSpec {
        name: "window",
        kind: ToolKind::Actuation,
        title: "Move, resize or raise a window",
        description: "Move, resize, minimize, maximize, restore or bring a window to the foreground.",
        hints: Hints { destructive: false, idempotent: true, ..INPUT },
    },
    ToolSpec {
        name: "focus",
        kind: ToolKind::Actuation,
        title: "Focus a window",
        description: "Activate a window, optionally click a point in it, and verify it has focus.",
        hints: INPUT,
    },
    ToolSpec {
        name: LAUNCH,
        kind: ToolKind::Actuation,
        title: "Launch a program",
        description: "Start a program and wait for its window (disabled unless the operator enables it).",
        hints: INPUT,
    },
    ToolSpec {
        name: "record",
        kind: ToolKind::Actuation,
        title: "Record the screen",
        description: "Record the screen, a region or a window as an animated GIF (start, stop, oneshot).",
        hints: WRITES_FILE,
    },
    ToolSpec {
        name: "send_command",
        kind: ToolKind::Actuation,
        title: "Send raw input commands",
        description: "Run one line of the raw command language (chars:, key:, mouse:, pause:).",
        hints: INPUT,
    },
    ToolSpec {
        name: "query",
        kind: ToolKind::Observation,
        title: "Query the accessibility tree",
        description: "The accessibility tree under a window (role, name, states, actions, bounds in desktop pixels, element ids), bounded by depth and maxElements.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "find",
        kind: ToolKind::Observation,
        title: "Find an element",
        description: "The one element under a window matching {by: name|role|automationid|text, value} and optional role/states filters; several matches are refused, listing them.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "invoke",
        kind: ToolKind::Actuation,
        title: "Act on an element",
        description: "Press, toggle, select, expand, collapse or focus an element, set a slider's value or an editable field's text, through the accessibility API (no mouse).",
        hints: INPUT,
    },
    ToolSpec {
        name: "wait-for",
        kind: ToolKind::Observation,
        title: "Wait for an element",
        description: "Wait (up to 50 s) until an element matching a selector appears, disappears, becomes enabled, focused or showing; ends at once on the emergency stop.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "get-text",
        kind: ToolKind::Observation,
        title: "Read text",
        description: "The text of an element, a window or a desktop region: from the accessibility tree first, else OCR (words with boxes in desktop pixels and confidence); says which.",
        hints: OBSERVES,
    },
    ToolSpec {
        name: "clipboard",
        kind: ToolKind::Actuation,
        title: "Clipboard",
        description: "Set the text of the CLIPBOARD (or PRIMARY) selection, kept after the call until another program takes it; get it only where `[clipboard.read]` is enabled.",
        hints: Hints { destructive: true, idempotent: true, ..INPUT },
    },
    ToolSpec {
        name: PROVISION_SESSION,
        kind: ToolKind::Meta,
        title: "Provision a session",
        description: "Create a session copy of mcec for this agent: its own directory, settings and token (needs the operator's opt-in).",
        hints: Hints { destructive: false, ..WRITES_FILE },
    },
    ToolSpec {
        name: END_SESSION,
        kind: ToolKind::Meta,
        title: "End a session",
        description: "Delete a session copy, given its sessionId and token (stop its process first).",
        hints: Hints { idempotent: true, ..WRITES_FILE },
    },
    ToolSpec {
        name: REQUEST_COMMAND_ACCESS,
        kind: ToolKind::Status,
        title: "Ask the operator for more commands",
        description: "Ask the operator, in a local prompt, to enable up to 8 commands (tools or raw kinds such as `send_command.chars`) for this process; `reason` (one line) is shown to them. Batch everything you need into one request.",
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
