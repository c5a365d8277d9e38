//! The tool catalogue: every tool name mcec knows and what kind of tool it is. The kind
//! decides which gates apply (the desktop gate, the actuation gate) and what provisioning
//! enables by default. Schemas and handlers live with the MCP layer; this is only the
//! list the rules need.

/// What a tool does, as far as the gates care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// `provision-session`, `end-session`: own gates, not behind `AgentCommandsEnabled`.
    Meta,
    /// `session-status`: reads this process's own record; needs no desktop.
    Status,
    /// Reads the desktop (needs a display).
    Observation,
    /// Moves, clicks or types (needs a display and an armed stop).
    Actuation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: &'static str,
    pub kind: ToolKind,
    /// One line for `tools/list`.
    pub description: &'static str,
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

/// Every tool, in the order `tools/list` shows them.
pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: SESSION_STATUS,
        kind: ToolKind::Status,
        description: "This agent session's record: id, start time, calls, refusals by code, emergency-stop history.",
    },
    ToolSpec {
        name: "displays",
        kind: ToolKind::Observation,
        description: "List monitors (index, primary, name, bounds) and the virtual desktop bounds.",
    },
    ToolSpec {
        name: "windows",
        kind: ToolKind::Observation,
        description: "List top-level windows (id, title, class, pid, process, geometry, foreground); filter, or wait for one to appear, disappear or come to the foreground.",
    },
    ToolSpec {
        name: "capture",
        kind: ToolKind::Observation,
        description: "Screenshot of the screen, a region or a window, as PNG; optionally downscaled.",
    },
    ToolSpec {
        name: "click",
        kind: ToolKind::Actuation,
        description: "Click at a screen point or a point relative to a window, optionally with modifiers held (shift-click, ctrl-click).",
    },
    ToolSpec {
        name: "drag",
        kind: ToolKind::Actuation,
        description: "Press a button (left by default) at `from`, move (through `path`) to `to`, release; optionally window-relative and with modifiers held.",
    },
    ToolSpec {
        name: "scroll",
        kind: ToolKind::Actuation,
        description: "Turn the mouse wheel up, down, left or right by a number of notches at a point, optionally with modifiers held (ctrl+scroll zooms).",
    },
    ToolSpec {
        name: "mouse",
        kind: ToolKind::Actuation,
        description: "Hover (move the pointer, optionally along a path), press or release a button and keep it down between calls (released after 60 s at most), or ask where the pointer is.",
    },
    ToolSpec {
        name: "wait",
        kind: ToolKind::Observation,
        description: "Wait up to 30 s (for a page to load, an animation to end); ends at once on the emergency stop.",
    },
    ToolSpec {
        name: "type",
        kind: ToolKind::Actuation,
        description: "Type Unicode text into the focused window.",
    },
    ToolSpec {
        name: "key",
        kind: ToolKind::Actuation,
        description: "Press a key chord such as `ctrl+shift+t`, `Return` or `F5`; everything pressed is released.",
    },
    ToolSpec {
        name: "window",
        kind: ToolKind::Actuation,
        description: "Move, resize, minimize, maximize, restore or bring a window to the foreground.",
    },
    ToolSpec {
        name: "focus",
        kind: ToolKind::Actuation,
        description: "Activate a window, optionally click a point in it, and verify it has focus.",
    },
    ToolSpec {
        name: LAUNCH,
        kind: ToolKind::Actuation,
        description: "Start a program and wait for its window (disabled unless the operator enables it).",
    },
    ToolSpec {
        name: "record",
        kind: ToolKind::Actuation,
        description: "Record the screen, a region or a window as an animated GIF (start, stop, oneshot).",
    },
    ToolSpec {
        name: "send_command",
        kind: ToolKind::Actuation,
        description: "Run one line of the raw command language (chars:, key:, mouse:, pause:).",
    },
    ToolSpec {
        name: PROVISION_SESSION,
        kind: ToolKind::Meta,
        description: "Create a disposable, token-guarded copy of mcec for this agent (needs the operator's opt-in).",
    },
    ToolSpec {
        name: END_SESSION,
        kind: ToolKind::Meta,
        description: "Delete a provisioned session directory, given its id and token (stop its process first).",
    },
];

/// Look a tool up by name.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The names a provisioned copy enables when the agent asks for nothing in particular:
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
    fn meta_and_status_are_not_commands() {
        assert!(!is_command(PROVISION_SESSION));
        assert!(!is_command(SESSION_STATUS));
        assert!(is_command("capture"));
    }
}
