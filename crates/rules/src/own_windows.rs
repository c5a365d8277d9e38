//! The names mcec gives its own windows (the banner, the prompts, the host and settings
//! windows), in one list: the operator crate names its windows from it, and the desktop and
//! accessibility crates use it to keep those windows out of the agent's reach (never listed,
//! never a target, left out of captures).

/// `WM_CLASS` of the host window (and what winit names a window after the `mcec` executable).
pub const HOST_CLASS: &str = "mcec";
/// `WM_CLASS` of the overlay banner.
pub const OVERLAY_CLASS: &str = "mcec-overlay";
/// `WM_CLASS` of the re-arm and consent prompts.
pub const PROMPT_CLASS: &str = "mcec-prompt";
/// `WM_CLASS` of the settings window.
pub const SETTINGS_CLASS: &str = "mcec-settings";

/// `WM_CLASS` of the window the X11 capture maps for an instant, hidden under mcec's own
/// window, to have the server paint the root window's background (desktop-x11's
/// `root_background.rs`).
pub const PROBE_CLASS: &str = "mcec-background-probe";

/// Every class above.
pub const OWN_WINDOW_CLASSES: [&str; 5] =
    [HOST_CLASS, OVERLAY_CLASS, PROMPT_CLASS, SETTINGS_CLASS, PROBE_CLASS];

/// The process name (`/proc/<pid>/comm`) of every mcec, installed copy or session copy.
pub const OWN_PROCESS_NAME: &str = "mcec";

/// Whether a `WM_CLASS` instance or class name is one of mcec's (whole names only:
/// `mcectestwin` is not).
pub fn is_own_window_class(name: &str) -> bool {
    OWN_WINDOW_CLASSES.contains(&name)
}

/// Whether a window with these facts is one of mcec's own: named with one of its classes,
/// owned by a process named `mcec`, or by this very process.
pub fn is_own_window(class: &str, instance: &str, process: Option<&str>, pid: Option<u32>) -> bool {
    is_own_window_class(class)
        || is_own_window_class(instance)
        || process == Some(OWN_PROCESS_NAME)
        || pid == Some(std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_class_names_only() {
        assert!(is_own_window_class("mcec-overlay"));
        assert!(is_own_window_class("mcec-prompt"));
        assert!(!is_own_window_class("mcectestwin"));
        assert!(!is_own_window_class("mcec-"));
        assert!(!is_own_window_class(""));
    }

    #[test]
    fn class_process_or_pid_make_a_window_ours() {
        assert!(is_own_window("mcec-settings", "", None, None));
        assert!(is_own_window("", "mcec", None, None));
        assert!(is_own_window("X", "x", Some("mcec"), Some(1)));
        assert!(is_own_window("X", "x", None, Some(std::process::id())));
        assert!(!is_own_window("XTerm", "xterm", Some("xterm"), Some(1)));
    }
}
