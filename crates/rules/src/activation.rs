//! Which input event pressed an operator control, and whether that event was the operator's
//! own hand.
//!
//! A decision only the operator may make (re-arm, a consent prompt's `Allow`, the provisioning
//! opt-in) is judged on the event that activated the control, never on "recent input": the
//! window names that event ([`Activation`]: the press and the release of a click, or the key
//! press on a focused control, each by its platform time and its button or key), the
//! provenance monitor says what it saw at that time ([`Witness`]), and [`activation_verdict`]
//! decides. A window that cannot name the event (a toolkit that hides event times, a surface
//! not bound to its platform's events yet) gives [`Activation::unidentified`], which is always
//! refused.
//!
//! The platform supplies the identity: on X11 the time is the server timestamp the core event
//! and the XInput 2 raw event share, and the code is the button number or the key code; on
//! Windows the message time and the low-level hook's time play that part.

use std::fmt;
use std::time::{Duration, Instant};

use crate::latch::{REARM_INPUT_MAX_AGE, RearmAttestation, TAMPER_QUIET_PERIOD};

/// How long a window must have been shown before a press in it counts: a press already on its
/// way when the window appeared was aimed at whatever was there before.
pub const SHOW_SETTLE: Duration = Duration::from_millis(300);

/// What an input event pressed or released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pressed {
    /// A pointer button (X11 numbering: 1 left, 2 middle, 3 right).
    Button(u32),
    /// A key by its platform code (X11 key code, Windows virtual key).
    Key(u32),
}

/// One input event as the platform names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InputEventId {
    /// The platform's event time in milliseconds (X11: the server timestamp).
    pub time: u32,
    pub what: Pressed,
    /// A press (`true`) or a release.
    pub down: bool,
}

impl fmt::Display for InputEventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = if self.down { "press" } else { "release" };
        match self.what {
            Pressed::Button(b) => write!(f, "button {b} {dir} at time {}", self.time),
            Pressed::Key(k) => write!(f, "key {k} {dir} at time {}", self.time),
        }
    }
}

/// The events that activated a control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActivationEvents {
    /// A pointer click: the press and the release of one button.
    Click { press: InputEventId, release: InputEventId },
    /// A key press on the focused control (Space).
    Key { press: InputEventId },
}

impl ActivationEvents {
    /// The events to judge, the press first.
    pub fn events(&self) -> impl Iterator<Item = InputEventId> {
        let (first, second) = match *self {
            ActivationEvents::Click { press, release } => (press, Some(release)),
            ActivationEvents::Key { press } => (press, None),
        };
        std::iter::once(first).chain(second)
    }

    fn press(&self) -> InputEventId {
        match *self {
            ActivationEvents::Click { press, .. } | ActivationEvents::Key { press } => press,
        }
    }
}

impl fmt::Display for ActivationEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ActivationEvents::Click { press, release } => write!(f, "click ({press}, {release})"),
            ActivationEvents::Key { press } => write!(f, "key ({press})"),
        }
    }
}

/// What the window says activated one of its controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activation {
    /// The events; `None` when the window could not name them.
    pub events: Option<ActivationEvents>,
    /// When the window holding the control was first shown on screen; `None` when unknown.
    pub shown_at: Option<Instant>,
}

impl Activation {
    /// "No event identity": what a surface that cannot name the event reports. Always refused.
    pub const fn unidentified() -> Activation {
        Activation { events: None, shown_at: None }
    }
}

impl fmt::Display for Activation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.events {
            Some(events) => events.fmt(f),
            None => f.write_str("an activation the window could not name"),
        }
    }
}

/// Where an input event came from, as the provenance monitor judged its raw event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Provenance {
    /// A physical device, and no forged request matched it.
    Physical,
    /// A synthetic device (X11: an XTEST device; Windows: flagged injected).
    Injected,
    /// A physical device's id, but a forged request produced it.
    Forged,
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Provenance::Physical => "physical",
            Provenance::Injected => "injected",
            Provenance::Forged => "forged",
        })
    }
}

/// What the provenance monitor saw for one named event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Witness {
    /// When a raw event from a physical device with the same time, button or key and
    /// direction arrived; `None` when the monitor saw none (an event sent by a program
    /// straight to the window, or one too old for the monitor's memory).
    pub physical: Option<Instant>,
    /// A raw event that is not physical carries the same time (any button or key): the worst
    /// provenance among them.
    pub synthetic: Option<Provenance>,
}

/// Why an activation does not count. `Display` is the sentence the window shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActivationRefusal {
    /// The window could not name the event that activated the control.
    Unidentified,
    /// No provenance monitor watches the input, so nothing can be attested.
    NoMonitor,
    /// The click's press and release are of different buttons, or the release came first.
    Inconsistent,
    /// The monitor saw no physical raw event for this one: it was synthetic (sent straight
    /// to the window) or is too old to be remembered.
    NotSeen { event: InputEventId },
    /// A synthetic raw event carries the event's time.
    Synthetic { event: InputEventId, provenance: Provenance },
    /// The press came less than [`SHOW_SETTLE`] after the window was shown (or the window
    /// does not know when it was shown).
    TooSoon { after_shown: Option<Duration> },
    /// The press is older than [`REARM_INPUT_MAX_AGE`].
    Stale { age: Duration },
    /// Tampering was seen less than [`TAMPER_QUIET_PERIOD`] ago.
    RecentTampering { ago: Duration },
}

impl ActivationRefusal {
    /// A short machine-readable word for the audit line.
    pub fn code(&self) -> &'static str {
        match self {
            ActivationRefusal::Unidentified => "event-unidentified",
            ActivationRefusal::NoMonitor => "no-monitor",
            ActivationRefusal::Inconsistent => "event-inconsistent",
            ActivationRefusal::NotSeen { .. } => "not-physical",
            ActivationRefusal::Synthetic { .. } => "synthetic",
            ActivationRefusal::TooSoon { .. } => "too-soon",
            ActivationRefusal::Stale { .. } => "stale-input",
            ActivationRefusal::RecentTampering { .. } => "recent-tampering",
        }
    }
}

impl fmt::Display for ActivationRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ActivationRefusal::Unidentified => f.write_str(
                "this window cannot tell which input pressed it; use your own mouse on the prompt",
            ),
            ActivationRefusal::NoMonitor => {
                f.write_str("the input monitor is not running, so no click can be attested")
            }
            ActivationRefusal::Inconsistent => f.write_str("the press and the release do not make one click"),
            ActivationRefusal::NotSeen { event } => write!(
                f,
                "no physical device made the {event} (synthetic input); only your own mouse or keyboard counts"
            ),
            ActivationRefusal::Synthetic { event, provenance } => {
                write!(f, "{provenance} input made the {event}; only your own mouse or keyboard counts")
            }
            ActivationRefusal::TooSoon { after_shown: Some(d) } => write!(
                f,
                "the press came {:.2} s after the window appeared; wait a moment and press again",
                d.as_secs_f64()
            ),
            ActivationRefusal::TooSoon { after_shown: None } => {
                f.write_str("the press came before the window was shown; press again")
            }
            ActivationRefusal::Stale { age } => {
                write!(f, "the press is {:.1} s old; press again with your own mouse", age.as_secs_f64())
            }
            ActivationRefusal::RecentTampering { ago } => write!(
                f,
                "forged input was detected {:.0} s ago; wait {} s without tampering and press again",
                ago.as_secs_f64(),
                TAMPER_QUIET_PERIOD.as_secs()
            ),
        }
    }
}

impl std::error::Error for ActivationRefusal {}

/// An activation that counts: the operator's own press (and release).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judged {
    pub events: ActivationEvents,
    /// When the monitor saw the judged press arrive.
    pub press_at: Instant,
}

impl Judged {
    /// What the latch's re-arm rule ([`crate::latch::rearm_verdict`]) checks of a judged
    /// activation: the press was physical, when it arrived (after the stop?), and the
    /// tampering seen.
    pub fn attestation(&self, last_tamper: Option<Instant>) -> RearmAttestation {
        RearmAttestation { input_physical: true, input_at: Some(self.press_at), last_tamper_at: last_tamper }
    }
}

/// The rule. `witness` asks the provenance monitor about one event; `last_tamper` is the
/// latest tampering seen; `now` is when the decision is made. In order: no tampering for
/// [`TAMPER_QUIET_PERIOD`]; the window named the events and they make one click (or one key
/// press); for each, press first, no synthetic raw event carries its time and a physical one
/// with the same button or key and direction was seen; the press arrived at least
/// [`SHOW_SETTLE`] after the window was shown and at most [`REARM_INPUT_MAX_AGE`] ago.
pub fn activation_verdict(
    act: &Activation,
    witness: impl Fn(&InputEventId) -> Witness,
    last_tamper: Option<Instant>,
    now: Instant,
) -> Result<Judged, ActivationRefusal> {
    if let Some(t) = last_tamper {
        let ago = now.saturating_duration_since(t);
        if ago < TAMPER_QUIET_PERIOD {
            return Err(ActivationRefusal::RecentTampering { ago });
        }
    }
    let events = act.events.ok_or(ActivationRefusal::Unidentified)?;
    if let ActivationEvents::Click { press, release } = events
        && (press.what != release.what
            || !press.down
            || release.down
            || !matches!(press.what, Pressed::Button(_)))
    {
        return Err(ActivationRefusal::Inconsistent);
    }
    let mut press_at = None;
    let mut last_at = None;
    for event in events.events() {
        let seen = witness(&event);
        if let Some(provenance) = seen.synthetic {
            return Err(ActivationRefusal::Synthetic { event, provenance });
        }
        let at = seen.physical.ok_or(ActivationRefusal::NotSeen { event })?;
        if last_at.is_some_and(|before| at < before) {
            return Err(ActivationRefusal::Inconsistent);
        }
        press_at = press_at.or(Some(at));
        last_at = Some(at);
    }
    let press_at = press_at.ok_or(ActivationRefusal::NotSeen { event: events.press() })?;
    let settled = act.shown_at.and_then(|shown| shown.checked_add(SHOW_SETTLE));
    if settled.is_none_or(|settled| press_at < settled) {
        let after_shown = act.shown_at.and_then(|shown| press_at.checked_duration_since(shown));
        return Err(ActivationRefusal::TooSoon { after_shown });
    }
    let age = now.saturating_duration_since(press_at);
    if age > REARM_INPUT_MAX_AGE {
        return Err(ActivationRefusal::Stale { age });
    }
    Ok(Judged { events, press_at })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const LEFT: Pressed = Pressed::Button(1);

    fn ev(time: u32, what: Pressed, down: bool) -> InputEventId {
        InputEventId { time, what, down }
    }

    fn click(t_press: u32, t_release: u32) -> ActivationEvents {
        ActivationEvents::Click { press: ev(t_press, LEFT, true), release: ev(t_release, LEFT, false) }
    }

    struct Row {
        name: &'static str,
        events: Option<ActivationEvents>,
        /// The window was shown this long before the press arrived (`None`: unknown).
        shown_before_press: Option<Duration>,
        seen: Vec<(InputEventId, Witness)>,
        tamper_ago: Option<Duration>,
        /// How long ago the press arrived.
        press_ago: Duration,
        expect: Result<(), &'static str>,
    }

    #[test]
    fn the_event_that_activated_is_judged() {
        let now = Instant::now() + Duration::from_secs(120);
        let long = Duration::from_secs(1);
        let physical = |at: Instant| Witness { physical: Some(at), synthetic: None };
        let rows = |press_at: Instant| {
            let release_at = press_at + Duration::from_millis(80);
            vec![
                Row {
                    name: "a physical click on a settled window counts",
                    events: Some(click(1000, 1080)),
                    shown_before_press: Some(long),
                    seen: vec![
                        (ev(1000, LEFT, true), physical(press_at)),
                        (ev(1080, LEFT, false), physical(release_at)),
                    ],
                    tamper_ago: None,
                    press_ago: Duration::from_millis(200),
                    expect: Ok(()),
                },
                Row {
                    name: "a physical Space on the focused control counts",
                    events: Some(ActivationEvents::Key { press: ev(2000, Pressed::Key(65), true) }),
                    shown_before_press: Some(long),
                    seen: vec![(ev(2000, Pressed::Key(65), true), physical(press_at))],
                    tamper_ago: Some(Duration::from_secs(60)),
                    press_ago: Duration::from_millis(200),
                    expect: Ok(()),
                },
                Row {
                    name: "the window could not name the event",
                    events: None,
                    shown_before_press: Some(long),
                    seen: vec![],
                    tamper_ago: None,
                    press_ago: Duration::from_millis(200),
                    expect: Err("event-unidentified"),
                },
                Row {
                    name: "a synthetic click: no raw event at its time, whatever else was physical",
                    events: Some(click(5000, 5001)),
                    shown_before_press: Some(long),
                    seen: vec![(ev(4800, Pressed::Key(40), true), physical(press_at))],
                    tamper_ago: None,
                    press_ago: Duration::from_millis(200),
                    expect: Err("not-physical"),
                },
                Row {
                    name: "a physical press but a synthetic release",
                    events: Some(click(1000, 1080)),
                    shown_before_press: Some(long),
                    seen: vec![(ev(1000, LEFT, true), physical(press_at))],
                    tamper_ago: None,
                    press_ago: Duration::from_millis(200),
                    expect: Err("not-physical"),
                },
                Row {
                    name: "an injected (XTEST) click",
                    events: Some(click(1000, 1080)),
                    shown_before_press: Some(long),
                    seen: vec![
                        (
                            ev(1000, LEFT, true),
                            Witness { physical: None, synthetic: Some(Provenance::Injected) },
                        ),
                        (
                            ev(1080, LEFT, false),
                            Witness { physical: None, synthetic: Some(Provenance::Injected) },
                        ),
                    ],
                    tamper_ago: None,
                    press_ago: Duration::from_millis(200),
                    expect: Err("synthetic"),
                },
                Row {
                    name: "a physical press sharing its time with a forged one",
                    events: Some(click(1000, 1080)),
                    shown_before_press: Some(long),
                    seen: vec![
                        (
                            ev(1000, LEFT, true),
                            Witness { physical: Some(press_at), synthetic: Some(Provenance::Forged) },
                        ),
                        (ev(1080, LEFT, false), physical(release_at)),
                    ],
                    tamper_ago: None,
                    press_ago: Duration::from_millis(200),
                    expect: Err("synthetic"),
                },
                Row {
                    name: "a press in flight when the window opened",
                    events: Some(click(1000, 1080)),
                    shown_before_press: Some(SHOW_SETTLE / 3),
                    seen: vec![
                        (ev(1000, LEFT, true), physical(press_at)),
                        (ev(1080, LEFT, false), physical(release_at)),
                    ],
                    tamper_ago: None,
                    press_ago: Duration::from_millis(200),
                    expect: Err("too-soon"),
                },
                Row {
                    name: "a window that does not know when it was shown",
                    events: Some(click(1000, 1080)),
                    shown_before_press: None,
                    seen: vec![
                        (ev(1000, LEFT, true), physical(press_at)),
                        (ev(1080, LEFT, false), physical(release_at)),
                    ],
                    tamper_ago: None,
                    press_ago: Duration::from_millis(200),
                    expect: Err("too-soon"),
                },
                Row {
                    name: "press and release of different buttons",
                    events: Some(ActivationEvents::Click {
                        press: ev(1000, LEFT, true),
                        release: ev(1080, Pressed::Button(3), false),
                    }),
                    shown_before_press: Some(long),
                    seen: vec![],
                    tamper_ago: None,
                    press_ago: Duration::from_millis(200),
                    expect: Err("event-inconsistent"),
                },
                Row {
                    name: "an old press",
                    events: Some(click(1000, 1080)),
                    shown_before_press: Some(long),
                    seen: vec![
                        (ev(1000, LEFT, true), physical(press_at)),
                        (ev(1080, LEFT, false), physical(release_at)),
                    ],
                    tamper_ago: None,
                    press_ago: REARM_INPUT_MAX_AGE + Duration::from_millis(1),
                    expect: Err("stale-input"),
                },
                Row {
                    name: "recent tampering outranks a physical click",
                    events: Some(click(1000, 1080)),
                    shown_before_press: Some(long),
                    seen: vec![
                        (ev(1000, LEFT, true), physical(press_at)),
                        (ev(1080, LEFT, false), physical(release_at)),
                    ],
                    tamper_ago: Some(Duration::from_secs(2)),
                    press_ago: Duration::from_millis(200),
                    expect: Err("recent-tampering"),
                },
            ]
        };
        for ago in [Duration::from_millis(200), REARM_INPUT_MAX_AGE + Duration::from_millis(1)] {
            for row in rows(now - ago).into_iter().filter(|r| r.press_ago == ago) {
                let press_at = now - row.press_ago;
                let act =
                    Activation { events: row.events, shown_at: row.shown_before_press.map(|d| press_at - d) };
                let seen: HashMap<_, _> = row.seen.into_iter().collect();
                let tamper = row.tamper_ago.map(|d| now - d);
                let got = activation_verdict(&act, |e| seen.get(e).copied().unwrap_or_default(), tamper, now);
                match (got, row.expect) {
                    (Ok(j), Ok(())) => assert_eq!(j.press_at, press_at, "{}", row.name),
                    (Err(r), Err(code)) => assert_eq!(r.code(), code, "{}: {r}", row.name),
                    (got, expect) => panic!("{}: got {got:?}, expected {expect:?}", row.name),
                }
            }
        }
    }

    #[test]
    fn every_refusal_has_a_code_and_a_sentence() {
        let e = ev(7, LEFT, true);
        let all = [
            ActivationRefusal::Unidentified,
            ActivationRefusal::NoMonitor,
            ActivationRefusal::Inconsistent,
            ActivationRefusal::NotSeen { event: e },
            ActivationRefusal::Synthetic { event: e, provenance: Provenance::Forged },
            ActivationRefusal::TooSoon { after_shown: Some(Duration::from_millis(10)) },
            ActivationRefusal::TooSoon { after_shown: None },
            ActivationRefusal::Stale { age: Duration::from_secs(3) },
            ActivationRefusal::RecentTampering { ago: Duration::from_secs(1) },
        ];
        for r in all {
            assert!(!r.code().is_empty() && !r.code().contains(' '));
            assert!(r.to_string().len() > 20, "{r}");
        }
        assert_eq!(Activation::unidentified().to_string(), "an activation the window could not name");
        assert_eq!(click(5, 9).to_string(), "click (button 1 press at time 5, button 1 release at time 9)");
    }
}
