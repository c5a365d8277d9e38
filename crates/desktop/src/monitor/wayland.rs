//! Is this X display a Wayland session's X server (XWayland)? The pure verdict.
//!
//! On XWayland the X11 stop cannot keep its promise: while a native Wayland window has focus
//! no X client gets key events at all, and keys from Wayland's virtual-keyboard protocol
//! arrive from the same `xwayland-keyboard` device as the operator's own (see
//! `docs/x11-provenance.md`). So mcec must not arm the stop there, and must not say it is armed.
//!
//! Any one signal is enough (fail closed): a false "Wayland" costs the agent its actuation
//! tools, a false "X11" costs the operator the stop. The platform probe that gathers the
//! signals lives with the X11 source (`mcec-desktop-x11`'s `monitor/session.rs`); this file
//! only weighs them.

use std::fmt;

/// What the operator reads wherever the stop's state is shown.
pub const WAYLAND_REASON: &str = "this is a Wayland session; the X11 stop cannot see your keyboard here";

/// What mcec could see about the display and the environment it was started in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DisplaySignals {
    /// The server lists the `XWAYLAND` extension (XWayland 23.1 and later; 22.1 does not).
    pub xwayland_extension: bool,
    /// RandR output names (XWayland names its outputs `XWAYLAND<n>`).
    pub output_names: Vec<String>,
    /// X input device names (XWayland's are `xwayland-pointer:<n>`, `xwayland-keyboard:<n>`).
    pub device_names: Vec<String>,
    /// `WAYLAND_DISPLAY` and `XDG_SESSION_TYPE` from the environment `DISPLAY` was taken from;
    /// both `None` when the display was named explicitly (the environment then says nothing
    /// about that display).
    pub wayland_display: Option<String>,
    pub session_type: Option<String>,
}

/// A display where the stop cannot be armed, with the signals that gave it away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaylandSession {
    pub evidence: Vec<String>,
}

impl fmt::Display for WaylandSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{WAYLAND_REASON} (seen: {})", self.evidence.join(", "))
    }
}

/// The verdict: `Some` when any signal says Wayland.
pub fn judge(signals: &DisplaySignals) -> Option<WaylandSession> {
    let mut evidence = Vec::new();
    if signals.xwayland_extension {
        evidence.push("the XWAYLAND extension".to_string());
    }
    for name in signals.output_names.iter().filter(|n| n.to_ascii_uppercase().starts_with("XWAYLAND")) {
        evidence.push(format!("RandR output {}", shown(name)));
    }
    // One device is enough to say so; listing every one only makes the line long.
    if let Some(name) = signals.device_names.iter().find(|n| n.to_ascii_lowercase().starts_with("xwayland-"))
    {
        evidence.push(format!("input device {}", shown(name)));
    }
    if let Some(w) = signals.wayland_display.as_deref().filter(|w| !w.trim().is_empty()) {
        evidence.push(format!("WAYLAND_DISPLAY={} beside DISPLAY", shown(w)));
    }
    if let Some(t) = signals.session_type.as_deref().filter(|t| t.trim().eq_ignore_ascii_case("wayland")) {
        evidence.push(format!("XDG_SESSION_TYPE={}", shown(t)));
    }
    (!evidence.is_empty()).then_some(WaylandSession { evidence })
}

/// Names come from the server or the environment: keep what we echo short and printable.
fn shown(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xorg() -> DisplaySignals {
        DisplaySignals {
            output_names: vec!["HDMI-1".into(), "eDP-1".into()],
            device_names: vec![
                "Virtual core pointer".into(),
                "Virtual core XTEST keyboard".into(),
                "AT Translated Set 2 keyboard".into(),
            ],
            ..DisplaySignals::default()
        }
    }

    #[test]
    fn a_plain_x_server_is_not_wayland() {
        assert_eq!(judge(&xorg()), None);
        assert_eq!(judge(&DisplaySignals::default()), None);
        let xvfb = DisplaySignals { output_names: vec!["screen".into()], ..DisplaySignals::default() };
        assert_eq!(judge(&xvfb), None);
    }

    #[test]
    fn each_signal_alone_is_enough() {
        let cases: [(DisplaySignals, &str); 7] = [
            (DisplaySignals { xwayland_extension: true, ..xorg() }, "the XWAYLAND extension"),
            (DisplaySignals { output_names: vec!["XWAYLAND0".into()], ..xorg() }, "RandR output XWAYLAND0"),
            (DisplaySignals { output_names: vec!["xwayland12".into()], ..xorg() }, "RandR output xwayland12"),
            (
                DisplaySignals { device_names: vec!["xwayland-pointer:13".into()], ..xorg() },
                "input device xwayland-pointer:13",
            ),
            (
                DisplaySignals { device_names: vec!["xwayland-keyboard:13".into()], ..xorg() },
                "input device xwayland-keyboard:13",
            ),
            (
                DisplaySignals { wayland_display: Some("wayland-1".into()), ..xorg() },
                "WAYLAND_DISPLAY=wayland-1 beside DISPLAY",
            ),
            (DisplaySignals { session_type: Some("wayland".into()), ..xorg() }, "XDG_SESSION_TYPE=wayland"),
        ];
        for (signals, want) in cases {
            let verdict = judge(&signals).unwrap_or_else(|| panic!("{want} was not seen as Wayland"));
            assert_eq!(verdict.evidence, [want]);
        }
    }

    #[test]
    fn empty_or_x11_environment_values_are_not_signals() {
        let s =
            DisplaySignals { wayland_display: Some(" ".into()), session_type: Some("x11".into()), ..xorg() };
        assert_eq!(judge(&s), None);
    }

    #[test]
    fn debian_xwayland_22_is_caught_without_the_extension() {
        // What sway 1.7's headless XWayland 22.1 shows: no extension, no devices yet.
        let s = DisplaySignals {
            output_names: vec!["XWAYLAND0".into()],
            device_names: vec!["Virtual core pointer".into(), "Virtual core XTEST pointer".into()],
            ..DisplaySignals::default()
        };
        let v = judge(&s).unwrap();
        assert_eq!(
            v.to_string(),
            "this is a Wayland session; the X11 stop cannot see your keyboard here (seen: RandR output XWAYLAND0)"
        );
    }

    #[test]
    fn every_signal_is_named_and_names_are_tamed() {
        let s = DisplaySignals {
            xwayland_extension: true,
            output_names: vec!["XWAYLAND0".into(), "XWAYLAND1".into()],
            device_names: vec!["xwayland-pointer:1".into(), "xwayland-keyboard:1".into()],
            wayland_display: Some(format!("wayland-0\u{7}{}", "x".repeat(100))),
            session_type: None,
        };
        let v = judge(&s).unwrap();
        assert_eq!(v.evidence.len(), 5, "{v}");
        assert!(!v.to_string().contains('\u{7}'));
        assert!(v.to_string().len() < 300);
    }
}
