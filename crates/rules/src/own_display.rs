//! A session copy's own X display (issue 26): its size, how it is written (`WxH`, in the
//! command line and in the session's `mcec.settings`), its bounds, and which X server gives it.
//!
//! The copy acts on a server of its own (a nested Xephyr window on the operator's display, or
//! a headless Xvfb when there is none) while its stop keeps watching the operator's display.
//! The decisions here are pure; starting the server is the binary's (`own_display/`).

use std::fmt;
use std::ops::RangeInclusive;

/// Widths an own display may have, in pixels.
pub const WIDTH_RANGE: RangeInclusive<u32> = 320..=7680;
/// Heights an own display may have, in pixels.
pub const HEIGHT_RANGE: RangeInclusive<u32> = 200..=4320;
/// Own-display sessions at once when `OwnDisplaySessionsMax` does not say otherwise.
pub const DEFAULT_SESSIONS_MAX: u32 = 4;
/// Bounds of `OwnDisplaySessionsMax`.
pub const SESSIONS_MAX_RANGE: RangeInclusive<i64> = 1..=64;

/// The size of an own display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnDisplaySize {
    pub width: u32,
    pub height: u32,
}

impl Default for OwnDisplaySize {
    fn default() -> Self {
        OwnDisplaySize { width: 1280, height: 800 }
    }
}

impl fmt::Display for OwnDisplaySize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

impl OwnDisplaySize {
    /// A size within the bounds, or what is wrong with it.
    pub fn new(width: u32, height: u32) -> Result<OwnDisplaySize, String> {
        if !WIDTH_RANGE.contains(&width) {
            return Err(format!("width {width} is outside {}..={}", WIDTH_RANGE.start(), WIDTH_RANGE.end()));
        }
        if !HEIGHT_RANGE.contains(&height) {
            return Err(format!(
                "height {height} is outside {}..={}",
                HEIGHT_RANGE.start(),
                HEIGHT_RANGE.end()
            ));
        }
        Ok(OwnDisplaySize { width, height })
    }

    /// `WxH` (`1280x800`; `X` and surrounding spaces accepted), within the bounds.
    pub fn parse(text: &str) -> Result<OwnDisplaySize, String> {
        let shown = crate::text::ellipsize(text, 32);
        let (w, h) = text
            .trim()
            .split_once(['x', 'X'])
            .ok_or_else(|| format!("`{shown}` is not WIDTHxHEIGHT (e.g. 1280x800)"))?;
        let number = |part: &str| {
            part.trim().parse::<u32>().map_err(|_| format!("`{shown}` is not WIDTHxHEIGHT (e.g. 1280x800)"))
        };
        OwnDisplaySize::new(number(w)?, number(h)?)
    }
}

/// `SessionDisplay`: where a session provisioned without `ownDisplay` acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionDisplay {
    /// On the operator's display (the default).
    #[default]
    Shared,
    /// On a display of its own of the default size: no session shares the operator's display.
    Own,
}

impl SessionDisplay {
    /// The settings' spelling: `"shared"` or `"own"`.
    pub fn parse(text: &str) -> Option<SessionDisplay> {
        match text {
            "shared" => Some(SessionDisplay::Shared),
            "own" => Some(SessionDisplay::Own),
            _ => None,
        }
    }

    /// The own display a session gets: the size asked for, else the default size when the
    /// operator made own displays the rule, else none.
    pub fn own_display(self, asked: Option<OwnDisplaySize>) -> Option<OwnDisplaySize> {
        match (asked, self) {
            (Some(size), _) => Some(size),
            (None, SessionDisplay::Own) => Some(OwnDisplaySize::default()),
            (None, SessionDisplay::Shared) => None,
        }
    }
}

/// Which X server gives a session its own display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// A window on the operator's display: the operator watches the agent work.
    Xephyr,
    /// Headless: there is no operator display to put a window on.
    Xvfb,
}

impl Server {
    /// Xephyr when the operator has a display, Xvfb otherwise.
    pub fn choose(operator_display: bool) -> Server {
        if operator_display { Server::Xephyr } else { Server::Xvfb }
    }

    /// The program's name.
    pub fn program(self) -> &'static str {
        match self {
            Server::Xephyr => "Xephyr",
            Server::Xvfb => "Xvfb",
        }
    }

    /// What the operator installs when the program is missing.
    pub fn install_hint(self) -> &'static str {
        match self {
            Server::Xephyr => "sudo apt-get install xserver-xephyr",
            Server::Xvfb => "sudo apt-get install xvfb",
        }
    }
}

/// Whether one more own-display session fits beside `existing` ones under `max`, and the
/// agent's words when it does not.
pub fn check_room(existing: usize, max: u32) -> Result<(), String> {
    if existing < max as usize {
        return Ok(());
    }
    Err(format!(
        "{existing} own-display session(s) already exist and OwnDisplaySessionsMax is {max}; end one \
         (end-session) or ask the operator to raise the limit"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_within_bounds() {
        assert_eq!(OwnDisplaySize::parse("1280x800"), Ok(OwnDisplaySize { width: 1280, height: 800 }));
        assert_eq!(OwnDisplaySize::parse(" 1920 X 1080 "), Ok(OwnDisplaySize { width: 1920, height: 1080 }));
        assert_eq!(OwnDisplaySize::parse("320x200"), Ok(OwnDisplaySize { width: 320, height: 200 }));
        assert_eq!(OwnDisplaySize::parse("7680x4320"), Ok(OwnDisplaySize { width: 7680, height: 4320 }));
        assert_eq!(OwnDisplaySize::default().to_string(), "1280x800");
        let round = OwnDisplaySize::parse(&OwnDisplaySize::default().to_string());
        assert_eq!(round, Ok(OwnDisplaySize::default()));
    }

    #[test]
    fn sizes_outside_bounds_or_malformed_say_why() {
        for (text, want) in [
            ("319x800", "width 319"),
            ("7681x800", "width 7681"),
            ("1280x199", "height 199"),
            ("1280x4321", "height 4321"),
            ("1280", "not WIDTHxHEIGHT"),
            ("x800", "not WIDTHxHEIGHT"),
            ("-1x800", "not WIDTHxHEIGHT"),
            ("1280x800x24", "not WIDTHxHEIGHT"),
            ("", "not WIDTHxHEIGHT"),
        ] {
            let e = OwnDisplaySize::parse(text).expect_err(text);
            assert!(e.contains(want), "{text}: {e}");
        }
        let long = "9".repeat(500);
        assert!(OwnDisplaySize::parse(&long).expect_err("long").len() < 200);
    }

    #[test]
    fn the_server_follows_the_operator_display() {
        assert_eq!(Server::choose(true), Server::Xephyr);
        assert_eq!(Server::choose(false), Server::Xvfb);
        assert!(Server::Xephyr.install_hint().contains("apt-get install xserver-xephyr"));
        assert!(Server::Xvfb.install_hint().contains("apt-get install xvfb"));
    }

    #[test]
    fn the_operators_rule_gives_sessions_that_ask_nothing_their_own_display() {
        let asked = OwnDisplaySize { width: 1024, height: 768 };
        assert_eq!(SessionDisplay::default(), SessionDisplay::Shared);
        assert_eq!(SessionDisplay::Shared.own_display(None), None);
        assert_eq!(SessionDisplay::Shared.own_display(Some(asked)), Some(asked));
        assert_eq!(SessionDisplay::Own.own_display(None), Some(OwnDisplaySize::default()));
        assert_eq!(SessionDisplay::Own.own_display(Some(asked)), Some(asked));
        assert_eq!(SessionDisplay::parse("own"), Some(SessionDisplay::Own));
        assert_eq!(SessionDisplay::parse("shared"), Some(SessionDisplay::Shared));
        assert_eq!(SessionDisplay::parse("Own"), None);
    }

    #[test]
    fn room_is_counted_against_the_limit() {
        assert!(check_room(0, 4).is_ok());
        assert!(check_room(3, 4).is_ok());
        let e = check_room(4, 4).expect_err("full");
        assert!(e.contains("OwnDisplaySessionsMax is 4"), "{e}");
        assert!(check_room(1, 1).is_err());
    }
}
