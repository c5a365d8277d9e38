//! The durable stop record's rules: which record applies to a process, what a record file
//! says, and what a running process does when it looks at the record's place.
//!
//! A stop must outlive the process that latched it, so the binary writes a small file the
//! moment a stop engages, reads it when it starts and, while it runs, looks again on every
//! change of the directory (and at least every few hundred milliseconds). This module is that
//! protocol without the file system: the binary hands it `DISPLAY` and what it found and gets
//! back a [`Scope`], an [`Observation`] and a [`FollowerAction`].
//!
//! Choices that make it fail closed:
//! - A record that cannot be read or does not parse counts as a stop ([`Observation::Unreadable`]).
//! - A place where no record can be written ([`Observation::Unusable`]) keeps a stopped process
//!   latched and keeps an armed one from actuating ([`gate_with_record`]).
//! - While a process is stopped its record exists: whatever it sees there that is not its
//!   stop's record, it writes the record again ([`FollowerAction::WriteBack`]).
//! - A file going away never re-arms anything; only the operator's attested click does. Each
//!   record names its stop ([`StopId`]); a process re-armed from a stop ignores that stop's
//!   record (which processes still stopped keep writing back), and any other stop latches it.
//! - A `DISPLAY` whose identity cannot be pinned down (a socket path that is not a display's
//!   standard socket, a remote host) gets [`Scope::AnyDisplay`]: every record of the user
//!   applies, so relaunching with an odd `DISPLAY` spelling never escapes a stop.
//!
//! A process with no `DISPLAY` at all ([`Scope::NoDisplay`]) has no desktop to act on and no
//! record applies to it.
//!
//! A process on the sway backend acts on a Wayland display, not an X one: its record is that
//! display's socket's ([`Scope::Wayland`], from `$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY` resolved by
//! the caller), whatever `DISPLAY` says. Its file name (`wayland-…`) can never be an X
//! display's (`display-…`).

use std::fmt;

use crate::gates::DesktopGate;

/// First line of every record, so a stray file is told apart from a record.
pub const MAGIC: &str = "mcec-stop v1";
/// Records are tiny; anything longer is not one of ours.
pub const MAX_RECORD_BYTES: usize = 4096;

/// Which records apply to a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The record of one local display, named by [`Scope::file_name`].
    Display(u32),
    /// The record of one Wayland display: its socket's absolute path, symlinks resolved
    /// ([`Scope::for_wayland_socket`]).
    Wayland(String),
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

    /// The scope for a Wayland display's socket (an absolute path whose symlinks the caller
    /// resolved): [`Scope::Wayland`], or [`Scope::AnyDisplay`] for a relative path or one whose
    /// file name would be too long for a file system.
    pub fn for_wayland_socket(path: &str) -> Scope {
        if !path.starts_with('/') || escape_for_file_name(path).len() > MAX_WAYLAND_NAME {
            return Scope::AnyDisplay;
        }
        Scope::Wayland(path.to_string())
    }

    /// The record's file name for a display scope.
    pub fn file_name(&self) -> Option<String> {
        match self {
            Scope::Display(n) => Some(format!("display-{n}")),
            Scope::Wayland(path) => Some(format!("{WAYLAND_PREFIX}{}", escape_for_file_name(path))),
            Scope::AnyDisplay | Scope::NoDisplay => None,
        }
    }
}

/// A Wayland display's record file name starts so; an X display's starts with `display-`.
const WAYLAND_PREFIX: &str = "wayland-";
/// The longest escaped socket path kept in a file name (most file systems allow 255 bytes).
const MAX_WAYLAND_NAME: usize = 240;

/// `path` as a file name, one to one: ASCII letters, digits, `.` and `-` stay, every other byte
/// becomes `_` and two lowercase hex digits (`/` is `_2f`, `_` itself `_5f`), so two different
/// paths never share a name.
fn escape_for_file_name(path: &str) -> String {
    let mut name = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'.' || byte == b'-' {
            name.push(char::from(byte));
        } else {
            name.push_str(&format!("_{byte:02x}"));
        }
    }
    name
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
            Scope::Wayland(path) => write!(f, "Wayland display {path}"),
            Scope::AnyDisplay => {
                f.write_str("every display (this process's display could not be identified)")
            }
            Scope::NoDisplay => f.write_str("no display"),
        }
    }
}

/// The identity of one stop: written into its record, so a process re-armed from that stop
/// can tell it from a new one. Made from 8 random bytes by the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StopId(u64);

impl StopId {
    pub fn from_bytes(bytes: [u8; 8]) -> StopId {
        StopId(u64::from_be_bytes(bytes))
    }

    /// The id in a record's `stop-id:` line (16 lowercase hex digits).
    pub fn parse(text: &str) -> Option<StopId> {
        let text = text.trim();
        if text.len() != 16 || !text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return None;
        }
        u64::from_str_radix(text, 16).ok().map(StopId)
    }
}

impl fmt::Display for StopId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// What the record's place holds right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// No record, and one could be written there: not stopped.
    Absent,
    /// A stop is recorded, for the reason given, by the stop `id` (`None`: a record without
    /// an id, as earlier versions wrote them).
    Stopped { reason: String, id: Option<StopId> },
    /// A regular file is there but could not be read or parsed (why): treated as a stop.
    Unreadable(String),
    /// No record could be written there (why): a directory, FIFO or link in the record's
    /// place, a read-only or full file system, no home directory. Not a stop, but no stop
    /// could be recorded, so nothing may actuate.
    Unusable(String),
}

impl Observation {
    /// Whether this observation holds the stop.
    pub fn is_stop(&self) -> bool {
        matches!(self, Observation::Stopped { .. } | Observation::Unreadable(_))
    }

    /// The reason a process that follows this observation gives for its own stop.
    pub fn stop_reason(&self) -> Option<String> {
        match self {
            Observation::Absent | Observation::Unusable(_) => None,
            Observation::Stopped { reason, .. } => {
                Some(format!("a stop is recorded for this display ({reason})"))
            }
            Observation::Unreadable(why) => Some(format!("the stop record cannot be read ({why})")),
        }
    }
}

/// The contents of a record for the stop `id` that engaged for `reason` at `engaged_unix` seconds.
pub fn render(reason: &str, engaged_unix: u64, pid: u32, id: StopId) -> String {
    let reason = reason.replace(['\n', '\r'], " ");
    format!("{MAGIC}\nreason: {reason}\nengaged-unix: {engaged_unix}\npid: {pid}\nstop-id: {id}\n")
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
    let field = |name: &str| text.lines().skip(1).find_map(|l| l.strip_prefix(name));
    let id = field("stop-id: ").and_then(StopId::parse);
    match field("reason: ") {
        Some(reason) if !reason.trim().is_empty() => {
            Observation::Stopped { reason: reason.trim().to_string(), id }
        }
        _ => Observation::Unreadable("no reason line".into()),
    }
}

/// Of several records (the [`Scope::AnyDisplay`] case), the one that holds: any stop wins,
/// then a place that cannot hold a record.
pub fn strongest(observations: impl IntoIterator<Item = Observation>) -> Observation {
    let rank = |o: &Observation| match o {
        Observation::Absent => 0,
        Observation::Unusable(_) => 1,
        Observation::Stopped { .. } => 2,
        Observation::Unreadable(_) => 3,
    };
    let mut held = Observation::Absent;
    for observation in observations {
        if rank(&observation) > rank(&held) {
            held = observation;
        }
    }
    held
}

/// This process, as far as the record is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing<'a> {
    /// Latched; `id` is the stop it holds (`None` until one is assigned or adopted).
    Stopped { id: Option<StopId> },
    /// Armed; `released` are the stops the operator re-armed this process from.
    Armed { released: &'a [StopId] },
}

/// What a process does after looking at the record's place. Nothing here re-arms: only the
/// operator's attested click does, and a file going away is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowerAction {
    /// Nothing to do.
    Ignore,
    /// Stopped, and the place holds no record of it (gone, garbage, an old record without an
    /// id, something else in its place): write this process's record (again). If that
    /// fails, the stop stays latched and the operator is told it is not recorded.
    WriteBack,
    /// Stopped, and the record names another stop: this stop holds that id too (several
    /// processes latched on one chord converge on one record).
    Adopt(StopId),
    /// Armed, and the record holds a stop this process was not re-armed from: latch.
    Latch { reason: String, id: Option<StopId> },
    /// Armed, and no stop could be recorded (why): refuse actuation until one can.
    RefuseActuation(String),
}

/// The follower rule: what `now` means for a process in `me`.
pub fn follow(now: &Observation, me: Standing<'_>) -> FollowerAction {
    match (me, now) {
        (Standing::Stopped { id: mine }, Observation::Stopped { id: Some(theirs), .. }) => {
            if mine == Some(*theirs) { FollowerAction::Ignore } else { FollowerAction::Adopt(*theirs) }
        }
        (Standing::Stopped { .. }, _) => FollowerAction::WriteBack,
        (Standing::Armed { released }, Observation::Stopped { id: Some(id), .. })
            if released.contains(id) =>
        {
            FollowerAction::Ignore
        }
        (Standing::Armed { .. }, Observation::Stopped { id, .. }) => {
            FollowerAction::Latch { reason: now.stop_reason().unwrap_or_default(), id: *id }
        }
        (Standing::Armed { .. }, Observation::Unreadable(_)) => {
            FollowerAction::Latch { reason: now.stop_reason().unwrap_or_default(), id: None }
        }
        (Standing::Armed { .. }, Observation::Unusable(why)) => FollowerAction::RefuseActuation(why.clone()),
        (Standing::Armed { .. }, Observation::Absent) => FollowerAction::Ignore,
    }
}

/// The gate actuation passes while the record's place cannot hold a record (`unusable`,
/// why): an armed stop that could not be recorded is not armed. Any other gate is kept.
pub fn gate_with_record(base: &DesktopGate, unusable: Option<&str>) -> DesktopGate {
    match (base, unusable) {
        (DesktopGate::Ready, Some(why)) => DesktopGate::StopUnavailable {
            why: format!(
                "a stop could not be recorded: {why}; actuation is refused until a stop record can be written there"
            ),
        },
        (base, _) => base.clone(),
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
    fn a_wayland_socket_has_its_own_record_never_an_x_displays() {
        let scope = Scope::for_wayland_socket("/run/user/1000/wayland-1");
        assert_eq!(scope, Scope::Wayland("/run/user/1000/wayland-1".into()));
        assert_eq!(scope.file_name().as_deref(), Some("wayland-_2frun_2fuser_2f1000_2fwayland-1"));
        assert_eq!(scope.to_string(), "Wayland display /run/user/1000/wayland-1");
        // One to one: paths that a lossy escape would merge keep different names.
        let names: Vec<_> = ["/a/b", "/a_b", "/a_2fb", "/a b", "/a/b/"]
            .iter()
            .map(|p| Scope::for_wayland_socket(p).file_name().expect("a name"))
            .collect();
        for (i, a) in names.iter().enumerate() {
            assert!(!a.starts_with("display-") && !a.starts_with('.'), "{a}");
            assert!(a.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)), "{a}");
            assert!(names[i + 1..].iter().all(|b| b != a), "{names:?}");
        }
        assert_ne!(Scope::for_wayland_socket("/tmp/.X11-unix/X3").file_name(), Scope::Display(3).file_name());
        assert_eq!(Scope::for_wayland_socket("wayland-1"), Scope::AnyDisplay, "not resolved");
        assert_eq!(
            Scope::for_wayland_socket(&format!("/{}", "d/".repeat(100))),
            Scope::AnyDisplay,
            "too long"
        );
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

    fn id(n: u8) -> StopId {
        StopId::from_bytes([n; 8])
    }

    #[test]
    fn a_rendered_record_parses_back_with_its_id_and_garbage_is_a_stop() {
        let text = render("operator pressed Ctrl+Alt+Shift+S\nforged", 1_700_000_000, 42, id(7));
        assert_eq!(
            parse(text.as_bytes()),
            Observation::Stopped {
                reason: "operator pressed Ctrl+Alt+Shift+S forged".into(),
                id: Some(id(7))
            }
        );
        assert_eq!(StopId::parse(&id(0xab).to_string()), Some(id(0xab)));
        for bad in ["", "0707070707070707x", "070707070707070", "ABABABABABABABAB"] {
            assert_eq!(StopId::parse(bad), None, "{bad}");
        }
        let older = format!("{MAGIC}\nreason: r\nengaged-unix: 1\npid: 2\n");
        assert_eq!(parse(older.as_bytes()), Observation::Stopped { reason: "r".into(), id: None });
        for garbage in [&b""[..], b"hello", b"\xff\xfe", b"mcec-stop v1\n", b"mcec-stop v2\nreason: x\n"] {
            let seen = parse(garbage);
            assert!(matches!(seen, Observation::Unreadable(_)), "{garbage:?} -> {seen:?}");
            assert!(seen.is_stop());
        }
        let long = format!("{MAGIC}\nreason: {}\n", "x".repeat(MAX_RECORD_BYTES));
        assert!(matches!(parse(long.as_bytes()), Observation::Unreadable(_)));
        assert!(!Observation::Unusable("read-only".into()).is_stop());
    }

    #[test]
    fn any_stop_among_several_records_holds_then_an_unusable_place() {
        let stop = Observation::Stopped { reason: "r".into(), id: Some(id(1)) };
        let bad = Observation::Unreadable("u".into());
        let unusable = Observation::Unusable("a FIFO".into());
        assert_eq!(strongest([]), Observation::Absent);
        assert_eq!(strongest([Observation::Absent, stop.clone()]), stop);
        assert_eq!(strongest([stop.clone(), bad.clone(), stop.clone()]), bad);
        assert_eq!(strongest([Observation::Absent, unusable.clone()]), unusable);
        assert_eq!(strongest([unusable.clone(), stop.clone()]), stop);
    }

    /// Issue 24: a record that vanishes is written back; a record that cannot be written
    /// keeps the stop latched; a file going away never re-arms; a process re-armed from a
    /// stop ignores that stop's record and latches on any other.
    #[test]
    fn the_follower_table() {
        use FollowerAction::{Adopt, Ignore, RefuseActuation, WriteBack};
        let (mine, other, released) = (id(1), id(2), [id(1), id(3)]);
        let absent = Observation::Absent;
        let stop = |i: Option<StopId>| Observation::Stopped { reason: "r".into(), id: i };
        let garbage = Observation::Unreadable("garbage".into());
        let unusable = Observation::Unusable("read-only file system".into());
        let stopped = Standing::Stopped { id: Some(mine) };
        let stopped_no_id = Standing::Stopped { id: None };
        let armed = Standing::Armed { released: &released };
        let fresh = Standing::Armed { released: &[] };
        // The reason is checked against the observation below; the table names the id.
        let latch = |i: Option<StopId>| FollowerAction::Latch { reason: String::new(), id: i };
        let rows: Vec<(Observation, Standing<'_>, FollowerAction)> = vec![
            // Stopped: the record exists as long as the stop does.
            (absent.clone(), stopped, WriteBack),
            (absent.clone(), stopped_no_id, WriteBack),
            (stop(Some(mine)), stopped, Ignore),
            (stop(Some(other)), stopped, Adopt(other)),
            (stop(Some(other)), stopped_no_id, Adopt(other)),
            (stop(None), stopped, WriteBack),
            (garbage.clone(), stopped, WriteBack),
            (unusable.clone(), stopped, WriteBack),
            // Armed (re-armed from ids 1 and 3): their records are ignored, any other latches.
            (absent.clone(), armed, Ignore),
            (stop(Some(mine)), armed, Ignore),
            (stop(Some(id(3))), armed, Ignore),
            (stop(Some(other)), armed, latch(Some(other))),
            (stop(None), armed, latch(None)),
            (garbage.clone(), armed, latch(None)),
            (unusable.clone(), armed, RefuseActuation("read-only file system".into())),
            // Never re-armed: every record latches.
            (absent, fresh, Ignore),
            (stop(Some(mine)), fresh, latch(Some(mine))),
            (garbage, fresh, latch(None)),
            (unusable, fresh, RefuseActuation("read-only file system".into())),
        ];
        for (now, me, want) in rows {
            let got = match follow(&now, me) {
                FollowerAction::Latch { reason, id } => {
                    assert_eq!(Some(reason), now.stop_reason(), "{now:?} {me:?}");
                    FollowerAction::Latch { reason: String::new(), id }
                }
                other => other,
            };
            assert_eq!(got, want, "{now:?} × {me:?}");
        }
    }

    #[test]
    fn an_unusable_place_takes_actuation_from_an_armed_stop_only() {
        let ready = DesktopGate::Ready;
        assert_eq!(gate_with_record(&ready, None), ready);
        let refused = gate_with_record(&ready, Some("cannot write in /h/stop: read-only file system"));
        assert!(!refused.actuation_allowed());
        assert!(matches!(&refused, DesktopGate::StopUnavailable { why } if why.contains("/h/stop")));
        let off = DesktopGate::NotArmed { why: "EmergencyStopEnabled is false".into() };
        assert_eq!(gate_with_record(&off, Some("x")), off);
        let none = DesktopGate::NoDesktop { detail: "d".into() };
        assert_eq!(gate_with_record(&none, Some("x")), none);
    }
}
