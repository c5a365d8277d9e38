//! Which X display is the operator's when the MCP client did not pass `DISPLAY`.
//!
//! Most MCP clients start a stdio server with a filtered environment (the official SDKs pass
//! only `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM` and `USER`), so mcec has to find the
//! desktop itself. This module is the decision, over facts the binary gathered: a `DISPLAY`
//! that is set always wins (and is never swapped for another display when nothing answers
//! there); then the user's active graphical session as systemd-logind reports it; then the X
//! server sockets that accept this user's connection. Exactly one candidate is used: two or
//! more is an error listing them, never "the first"; none is an error saying what was looked
//! at. Gathering the facts (D-Bus, connecting to sockets) is the binary's job.

use std::fmt;

/// How the display in use was found (`session-status` → `desktop.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `DISPLAY` was in mcec's environment.
    Environment,
    /// The user's active graphical session, from systemd-logind.
    Logind,
    /// The one X server socket that accepted this user's connection.
    Socket,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Environment => "environment",
            Source::Logind => "logind",
            Source::Socket => "socket",
        }
    }

    pub fn parse(word: &str) -> Option<Source> {
        [Source::Environment, Source::Logind, Source::Socket].into_iter().find(|s| s.as_str() == word)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One login session of this user, as logind describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogindSession {
    pub id: String,
    /// logind's `Type`: `x11`, `wayland`, `tty`, `mir`, `unspecified`.
    pub kind: String,
    /// logind's `Display` (the X display of an `x11` session; often empty for `wayland`).
    pub display: String,
    pub active: bool,
}

/// What asking logind gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogindLook {
    /// No logind to ask (no system bus, no `org.freedesktop.login1`), and why.
    Unreachable(String),
    /// This user's sessions.
    Sessions(Vec<LogindSession>),
}

/// The display chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub display: String,
    pub source: Source,
    /// logind said the session is a Wayland one: this X server is its XWayland.
    pub wayland: bool,
}

/// What logind's answer settles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogindVerdict {
    Use(Found),
    /// Not settled; the sockets decide. `note` says what logind showed; `wayland` that the
    /// active session is a Wayland one without an X display of its own.
    LookFurther {
        note: String,
        wayland: bool,
    },
    /// Several active graphical sessions: the error's detail.
    Several(String),
}

fn graphical(s: &LogindSession) -> bool {
    s.active && (s.kind == "x11" || s.kind == "wayland")
}

/// Picks the display of the user's one active graphical session.
pub fn from_logind(look: &LogindLook) -> LogindVerdict {
    let sessions = match look {
        LogindLook::Unreachable(why) => {
            return LogindVerdict::LookFurther {
                note: format!("logind: not reachable ({why})"),
                wayland: false,
            };
        }
        LogindLook::Sessions(sessions) => sessions,
    };
    let active: Vec<&LogindSession> = sessions.iter().filter(|s| graphical(s)).collect();
    match active.as_slice() {
        [] => LogindVerdict::LookFurther {
            note: format!(
                "logind: no active graphical session of this user ({} session(s) seen)",
                sessions.len()
            ),
            wayland: false,
        },
        [one] if one.display.is_empty() => LogindVerdict::LookFurther {
            note: format!("logind: the active session {} ({}) names no X display", one.id, one.kind),
            wayland: one.kind == "wayland",
        },
        [one] => LogindVerdict::Use(Found {
            display: one.display.clone(),
            source: Source::Logind,
            wayland: one.kind == "wayland",
        }),
        several => LogindVerdict::Several(format!(
            "this user has {} active graphical sessions ({}); {PIN}",
            several.len(),
            several
                .iter()
                .map(|s| format!("session {} {} `{}`", s.id, s.kind, s.display))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// How one X server socket answered a connection as this user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SocketAnswer {
    /// It let this user in.
    Accepts,
    /// The server answered but refused this user: its authority (`XAUTHORITY`) is the problem.
    RefusedAuthority(String),
    /// Nothing usable answered (a stale socket, a server of another user that hung up...).
    Silent(String),
}

/// One `X<n>` socket and its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketSeen {
    pub display: String,
    pub answer: SocketAnswer,
}

/// What tells a user with several displays how to choose.
const PIN: &str = "set DISPLAY (and XAUTHORITY) in this client's entry for mcec \
(`mcec config --client NAME --pin-display` prints such an entry)";

/// Picks the one socket that accepts this user, after logind left it open. `looked` names
/// the socket directory; `logind_note` says what logind showed.
pub fn from_sockets(
    looked: &str,
    seen: &[SocketSeen],
    logind_note: &str,
    wayland: bool,
) -> Result<Found, String> {
    let accepting: Vec<&str> =
        seen.iter().filter(|s| s.answer == SocketAnswer::Accepts).map(|s| s.display.as_str()).collect();
    match accepting.as_slice() {
        [one] => Ok(Found { display: (*one).to_string(), source: Source::Socket, wayland }),
        [] => {
            let what = if seen.is_empty() {
                "no X server sockets".to_string()
            } else {
                seen.iter()
                    .map(|s| match &s.answer {
                        SocketAnswer::Accepts => format!("`{}` accepts", s.display),
                        SocketAnswer::RefusedAuthority(why) => format!(
                            "`{}` refused this user's connection ({why}): the X authority is the problem, \
                             set XAUTHORITY to the session's authority file",
                            s.display
                        ),
                        SocketAnswer::Silent(why) => format!("`{}` did not answer ({why})", s.display),
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            Err(format!("No X display found: DISPLAY is not set; {logind_note}; in {looked}: {what}."))
        }
        several => Err(format!(
            "Several X displays accept this user ({}) and mcec will not guess which one is yours: {PIN}.",
            several.iter().map(|d| format!("`{d}`")).collect::<Vec<_>>().join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, kind: &str, display: &str, active: bool) -> LogindSession {
        LogindSession { id: id.into(), kind: kind.into(), display: display.into(), active }
    }

    #[test]
    fn logind_table() {
        let use_ = |d: &str, wayland| {
            LogindVerdict::Use(Found { display: d.into(), source: Source::Logind, wayland })
        };
        let rows: Vec<(Vec<LogindSession>, Option<LogindVerdict>)> = vec![
            (vec![session("2", "x11", ":0", true)], Some(use_(":0", false))),
            (
                vec![session("2", "x11", ":0", false), session("3", "x11", ":1", true)],
                Some(use_(":1", false)),
            ),
            (vec![session("c1", "tty", "", true), session("3", "x11", ":1", true)], Some(use_(":1", false))),
            (vec![session("4", "wayland", ":2", true)], Some(use_(":2", true))),
            (vec![session("2", "x11", ":0", false)], None),
            (vec![], None),
        ];
        for (sessions, want) in rows {
            let got = from_logind(&LogindLook::Sessions(sessions.clone()));
            match want {
                Some(want) => assert_eq!(got, want, "{sessions:?}"),
                None => assert!(matches!(got, LogindVerdict::LookFurther { wayland: false, .. }), "{got:?}"),
            }
        }
    }

    #[test]
    fn a_wayland_session_without_a_display_is_carried_to_the_sockets() {
        let got = from_logind(&LogindLook::Sessions(vec![session("5", "wayland", "", true)]));
        assert!(matches!(got, LogindVerdict::LookFurther { wayland: true, .. }), "{got:?}");
        let seen = [SocketSeen { display: ":1".into(), answer: SocketAnswer::Accepts }];
        let found = from_sockets("/tmp/.X11-unix", &seen, "n", true).unwrap();
        assert!(found.wayland && found.source == Source::Socket);
    }

    #[test]
    fn two_active_sessions_are_never_the_first() {
        let got = from_logind(&LogindLook::Sessions(vec![
            session("2", "x11", ":0", true),
            session("7", "x11", ":5", true),
        ]));
        let LogindVerdict::Several(detail) = got else { panic!("{got:?}") };
        assert!(detail.contains(":0") && detail.contains(":5") && detail.contains("DISPLAY"), "{detail}");
    }

    #[test]
    fn unreachable_logind_says_why() {
        let got = from_logind(&LogindLook::Unreachable("no system bus".into()));
        let LogindVerdict::LookFurther { note, .. } = got else { panic!("{got:?}") };
        assert!(note.contains("no system bus"));
    }

    #[test]
    fn sockets_table() {
        let s = |d: &str, answer: SocketAnswer| SocketSeen { display: d.into(), answer };
        let auth = || SocketAnswer::RefusedAuthority("Authorization required".into());
        let dead = || SocketAnswer::Silent("connection refused".into());
        let one = from_sockets(
            "D",
            &[s(":3", dead()), s(":4", SocketAnswer::Accepts), s(":0", auth())],
            "L",
            false,
        );
        assert_eq!(one, Ok(Found { display: ":4".into(), source: Source::Socket, wayland: false }));

        let two =
            from_sockets("D", &[s(":4", SocketAnswer::Accepts), s(":9", SocketAnswer::Accepts)], "L", false)
                .unwrap_err();
        assert!(two.contains("`:4`") && two.contains("`:9`") && two.contains("DISPLAY"), "{two}");

        let none = from_sockets("D", &[], "logind: x", false).unwrap_err();
        assert!(none.contains("in D: no X server sockets") && none.contains("logind: x"), "{none}");

        let refused = from_sockets("D", &[s(":0", auth()), s(":3", dead())], "L", false).unwrap_err();
        assert!(refused.contains("`:0` refused") && refused.contains("authority"), "{refused}");
        assert!(refused.contains("`:3` did not answer"), "{refused}");
    }

    #[test]
    fn sources_round_trip() {
        for s in [Source::Environment, Source::Logind, Source::Socket] {
            assert_eq!(Source::parse(s.as_str()), Some(s));
        }
        assert_eq!(Source::parse("guess"), None);
    }
}
