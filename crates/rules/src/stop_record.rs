//! The durable stop record's rules: which record applies to a process, what a record file
//! says, and what a running process does when the record changes.
//!
//! A stop must outlive the process that latched it, so the binary writes a small file the
//! moment a stop engages and reads it when it starts and, while it runs, every few hundred
//! milliseconds. This module is that protocol without the file system: the binary hands it
//! `DISPLAY` and file contents and gets back a [`Scope`], an [`Observation`] and a
//! [`FollowerAction`].
//!
//! Two choices make it fail closed:
//! - A record that cannot be read or does not parse counts as a stop ([`Observation::Unreadable`]).
//! - A `DISPLAY` whose identity cannot be pinned down (a socket path that is not a display's
//!   standard socket, a remote host) gets [`Scope::AnyDisplay`]: every record of the user
//!   applies, so relaunching with an odd `DISPLAY` spelling never escapes a stop.
//!
//! A process with no `DISPLAY` at all ([`Scope::NoDisplay`]) has no desktop to act on and no
//! record applies to it.

use std::fmt;

/// First line of every record, so a stray file is told apart from a record.
pub const MAGIC: &str = "mcec-stop v1";
/// Records are tiny; anything longer is not one of ours.
pub const MAX_RECORD_BYTES: usize = 4096;

/// Which records apply to a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The record of one local display, named by [`Scope::file_name`].
    Display(u32),
    /// Every record of the user.
    AnyDisplay,
    /// `DISPLAY` is unset or empty: no desktop, no record.
    NoDisplay,
}

impl Scope {
    /// The scope for a `DISPLAY` value. Every spelling of a local display (`:3`, `:3.0`,
    /// `localhost:3`, `127.0.0.1:3`, `tcp/localhost:3`, `unix/:3`) maps to the same number;
    /// a socket path maps to it when it is the display's standard socket
    /// (`/tmp/.X11-unix/X3`, after the caller resolved symlinks); anything else is
    /// [`Scope::AnyDisplay`].
    pub fn for_display(display: Option<&str>) -> Scope {
        let Some(display) = display.map(str::trim).filter(|d| !d.is_empty()) else {
            return Scope::NoDisplay;
        };
        if let Some(path) = display
            .strip_prefix("unix:")
            .filter(|p| p.starts_with('/'))
            .or_else(|| display.starts_with('/').then_some(display))
        {
            return Self::for_socket_path(path);
        }
        let remaining = display.rsplit_once('/').map_or(display, |(_, rest)| rest);
        let Some((host, rest)) = remaining.rsplit_once(':') else {
            return Scope::AnyDisplay;
        };
        if !matches!(host, "" | "unix" | "localhost" | "127.0.0.1" | "::1" | "[::1]") {
            return Scope::AnyDisplay;
        }
        let number = rest.split_once('.').map_or(rest, |(n, _)| n);
        parse_number(number).map_or(Scope::AnyDisplay, Scope::Display)
    }

    /// The scope for a socket path (already resolved: no symlinks).
    pub fn for_socket_path(path: &str) -> Scope {
        let path = path
            .rsplit_once('.')
            .filter(|(_, screen)| parse_number(screen).is_some())
            .map_or(path, |(p, _)| p);
        path.strip_prefix("/tmp/.X11-unix/X").and_then(parse_number).map_or(Scope::AnyDisplay, Scope::Display)
    }

    /// The record's file name for a display scope.
    pub fn file_name(&self) -> Option<String> {
        match self {
            Scope::Display(n) => Some(format!("display-{n}")),
            Scope::AnyDisplay | Scope::NoDisplay => None,
        }
    }
}

fn parse_number(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 6 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Display(n) => write!(f, "display :{n}"),
            Scope::AnyDisplay => {
                f.write_str("every display (this process's display could not be identified)")
            }
            Scope::NoDisplay => f.write_str("no display"),
        }
    }
}

/// What the record says right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// No record: not stopped.
    Absent,
    /// A stop is recorded, for the reason given.
    Stopped { reason: String },
    /// The record exists but could not be read or parsed (why): treated as a stop.
    Unreadable(String),
}

impl Observation {
    /// Whether this observation holds the stop.
    pub fn is_stop(&self) -> bool {
        !matches!(self, Observation::Absent)
    }

    /// The reason a process that follows this observation gives for its own stop.
    pub fn stop_reason(&self) -> Option<String> {
        match self {
            Observation::Absent => None,
            Observation::Stopped { reason } => {
                Some(format!("a stop is recorded for this display ({reason})"))
            }
            Observation::Unreadable(why) => Some(format!("the stop record cannot be read ({why})")),
        }
    }
}

/// The contents of a record for a stop that engaged for `reason` at `engaged_unix` seconds.
pub fn render(reason: &str, engaged_unix: u64, pid: u32) -> String {
    let reason = reason.replace(['\n', '\r'], " ");
    format!("{MAGIC}\nreason: {reason}\nengaged-unix: {engaged_unix}\npid: {pid}\n")
}

/// What the bytes of an existing record say.
pub fn parse(contents: &[u8]) -> Observation {
    if contents.len() > MAX_RECORD_BYTES {
        return Observation::Unreadable(format!("longer than {MAX_RECORD_BYTES} bytes"));
    }
    let Ok(text) = std::str::from_utf8(contents) else {
        return Observation::Unreadable("not UTF-8".into());
    };
    let mut lines = text.lines();
    if lines.next() != Some(MAGIC) {
        return Observation::Unreadable(format!("does not start with `{MAGIC}`"));
    }
    match lines.find_map(|l| l.strip_prefix("reason: ")) {
        Some(reason) if !reason.trim().is_empty() => {
            Observation::Stopped { reason: reason.trim().to_string() }
        }
        _ => Observation::Unreadable("no reason line".into()),
    }
}

/// Of several records (the [`Scope::AnyDisplay`] case), the one that holds: any stop wins.
pub fn strongest(observations: impl IntoIterator<Item = Observation>) -> Observation {
    let mut held = Observation::Absent;
    for observation in observations {
        match (&held, observation) {
            (_, Observation::Absent) => {}
            (Observation::Absent, stop) => held = stop,
            (_, unreadable @ Observation::Unreadable(_)) => held = unreadable,
            (_, Observation::Stopped { .. }) => {}
        }
    }
    held
}

/// What a running process does after looking at the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowerAction {
    /// Nothing changes.
    Nothing,
    /// The record holds a stop this process has not latched: trip the latch (reason).
    Trip(String),
    /// The record this process saw as a stop is gone: ask the latch to re-arm, with this
    /// process's own attestation that physical input just happened (the re-arm rule itself
    /// decides; a record that vanished without a physical press re-arms nothing).
    TryRearm,
}

/// The follower rule. `before` is the previous observation, `now` the current one,
/// `latch_stopped` whether this process's latch is stopped.
pub fn follow(before: &Observation, now: &Observation, latch_stopped: bool) -> FollowerAction {
    match (now.stop_reason(), latch_stopped) {
        (Some(reason), false) => FollowerAction::Trip(reason),
        (None, true) if before.is_stop() => FollowerAction::TryRearm,
        _ => FollowerAction::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_local_display_has_one_scope() {
        for d in [":3", ":3.0", "localhost:3", "127.0.0.1:3.1", "tcp/localhost:3", "unix/:3", " :3 "] {
            assert_eq!(Scope::for_display(Some(d)), Scope::Display(3), "{d}");
        }
        assert_eq!(Scope::for_display(Some("unix:/tmp/.X11-unix/X3")), Scope::Display(3));
        assert_eq!(Scope::for_display(Some("/tmp/.X11-unix/X3.0")), Scope::Display(3));
        assert_eq!(Scope::Display(3).file_name().as_deref(), Some("display-3"));
    }

    #[test]
    fn a_display_that_cannot_be_identified_gets_every_record() {
        for d in [Some("otherhost:0"), Some("/tmp/sock"), Some(":x"), Some(":"), Some("0"), Some(":-1")] {
            assert_eq!(Scope::for_display(d), Scope::AnyDisplay, "{d:?}");
        }
        assert_eq!(Scope::for_display(Some(":99999999")), Scope::AnyDisplay);
        assert_eq!(Scope::AnyDisplay.file_name(), None);
        assert_eq!(Scope::for_display(None), Scope::NoDisplay);
        assert_eq!(Scope::for_display(Some(" ")), Scope::NoDisplay);
    }

    #[test]
    fn a_rendered_record_parses_back_and_garbage_is_a_stop() {
        let text = render("operator pressed Ctrl+Alt+Shift+S\nforged", 1_700_000_000, 42);
        assert_eq!(
            parse(text.as_bytes()),
            Observation::Stopped { reason: "operator pressed Ctrl+Alt+Shift+S forged".into() }
        );
        for garbage in [&b""[..], b"hello", b"\xff\xfe", b"mcec-stop v1\n", b"mcec-stop v2\nreason: x\n"] {
            let seen = parse(garbage);
            assert!(matches!(seen, Observation::Unreadable(_)), "{garbage:?} -> {seen:?}");
            assert!(seen.is_stop());
        }
        let long = format!("{MAGIC}\nreason: {}\n", "x".repeat(MAX_RECORD_BYTES));
        assert!(matches!(parse(long.as_bytes()), Observation::Unreadable(_)));
    }

    #[test]
    fn any_stop_among_several_records_holds() {
        let stop = Observation::Stopped { reason: "r".into() };
        let bad = Observation::Unreadable("u".into());
        assert_eq!(strongest([]), Observation::Absent);
        assert_eq!(strongest([Observation::Absent, stop.clone()]), stop);
        assert_eq!(strongest([stop.clone(), bad.clone(), stop.clone()]), bad);
    }

    #[test]
    fn a_follower_trips_on_a_record_and_asks_to_rearm_only_when_a_seen_stop_vanishes() {
        let stop = Observation::Stopped { reason: "r".into() };
        let bad = Observation::Unreadable("u".into());
        let absent = Observation::Absent;
        assert!(matches!(follow(&absent, &stop, false), FollowerAction::Trip(r) if r.contains("(r)")));
        assert!(
            matches!(follow(&stop, &bad, false), FollowerAction::Trip(r) if r.contains("cannot be read"))
        );
        assert_eq!(follow(&stop, &stop, true), FollowerAction::Nothing);
        assert_eq!(follow(&stop, &absent, true), FollowerAction::TryRearm);
        assert_eq!(follow(&bad, &absent, true), FollowerAction::TryRearm);
        // Stopped by its own chord before its record was written: no record was ever seen.
        assert_eq!(follow(&absent, &absent, true), FollowerAction::Nothing);
        assert_eq!(follow(&stop, &absent, false), FollowerAction::Nothing);
    }
}
