//! Where the tools act, as against where the stop watches.
//!
//! The stop always watches the operator's display: the one in this process's environment
//! (`DISPLAY`, as `desktop_find` settled it), which the provenance monitor, the durable stop
//! record and the operator windows read. The tools (capture, windows, input, `launch`, the
//! clipboard and accessibility) act on that same display, except in a session copy with a
//! display of its own (issue 26), where they act on its own X server and nothing else. This
//! type is that one difference, handed to the desktop connection and the accessibility
//! backend; nothing reads an environment variable to find out.

use mcec_rules::own_display::OwnDisplaySize;

/// The display the tools act on.
#[derive(Debug, Clone)]
#[cfg_attr(not(unix), allow(dead_code, reason = "own displays are X servers, started on Unix only"))]
pub enum ToolDisplay {
    /// The operator's, the one the stop watches: every copy but an own-display session.
    Operator,
    /// The session's own X server; the stop still watches the operator's display.
    Own(OwnDesk),
    /// The session was to have a display of its own and it could not be started: the tools
    /// answer `no-desktop` with these words, never act on the operator's display instead.
    Failed(String),
}

/// What the tools need of a session's own display (the processes behind it belong to
/// `own_display::OwnDisplay`, which ends them).
#[derive(Debug, Clone)]
#[cfg_attr(not(unix), allow(dead_code, reason = "own displays are X servers, started on Unix only"))]
pub struct OwnDesk {
    /// Its X display name, `:<n>`.
    pub display: String,
    pub size: OwnDisplaySize,
    /// The authority file holding its cookie, for the programs started there.
    pub authority: String,
    /// Its own D-Bus session bus (programs started there, and their accessibility).
    pub bus: String,
    /// The process group of its server, which the programs started there join.
    pub process_group: u32,
    /// The title its window on the operator's desktop was started with (Xephyr); `None`
    /// for a headless server.
    pub window_title: Option<String>,
}

impl OwnDesk {
    /// A headless server (Xvfb): there was no operator display to put a window on, so there is
    /// no operator keyboard to watch either (`headless_stop`).
    pub fn headless(&self) -> bool {
        self.window_title.is_none()
    }
}
