use super::*;
use proptest::prelude::*;

fn chord() -> StopReason {
    StopReason::Chord("Ctrl+Alt+Shift+S".into())
}

fn physical_now() -> RearmAttestation {
    RearmAttestation { input_physical: true, input_at: Some(Instant::now()), last_tamper_at: None }
}

fn injected_now() -> RearmAttestation {
    RearmAttestation { input_physical: false, ..physical_now() }
}

#[derive(Debug, Clone)]
enum Ev {
    Trip,
    Tamper,
    /// A re-arm pressed by injected input.
    RearmInjected,
    /// A re-arm whose press happened before the stop.
    RearmOld,
    /// A re-arm with no press seen.
    RearmNothing,
    RearmPhysical,
}

/// Drives a fresh latch with `events` and compares `is_stopped()` after each.
fn check(events: &[Ev], expected: &[bool]) {
    assert_eq!(events.len(), expected.len());
    let flag = StopFlag::new();
    let latch = Latch::new(flag.clone());
    let before = Instant::now();
    for (i, (ev, want)) in events.iter().zip(expected).enumerate() {
        let r = match ev {
            Ev::Trip => Some(latch.trip(chord())).map(|_| ()),
            Ev::Tamper => Some(latch.trip(StopReason::Tampering("forged".into()))).map(|_| ()),
            Ev::RearmInjected => latch.rearm(injected_now()).err().map(|_| ()),
            Ev::RearmOld => {
                latch.rearm(RearmAttestation { input_at: Some(before), ..physical_now() }).err().map(|_| ())
            }
            Ev::RearmNothing => {
                latch.rearm(RearmAttestation { input_at: None, ..physical_now() }).err().map(|_| ())
            }
            Ev::RearmPhysical => latch.rearm(physical_now()).err().map(|_| ()),
        };
        let _ = r;
        assert_eq!(latch.is_stopped(), *want, "after event {i} {ev:?} in {events:?}");
        assert_eq!(flag.is_set(), *want, "flag after event {i} {ev:?}");
    }
}

#[test]
fn stop_is_sticky_until_a_physical_rearm() {
    use Ev::*;
    let cases: Vec<(Vec<Ev>, Vec<bool>)> = vec![
        (vec![Trip], vec![true]),
        (vec![RearmPhysical], vec![false]),
        (vec![Trip, Trip, Trip], vec![true, true, true]),
        (vec![Trip, RearmInjected], vec![true, true]),
        (vec![Trip, RearmNothing], vec![true, true]),
        (vec![Trip, RearmOld], vec![true, true]),
        (vec![Trip, RearmInjected, Trip, RearmInjected, RearmOld], vec![true; 5]),
        (vec![Trip, RearmPhysical], vec![true, false]),
        (vec![Trip, RearmPhysical, Trip], vec![true, false, true]),
        (vec![Trip, RearmPhysical, RearmPhysical], vec![true, false, false]),
        (vec![Tamper, RearmPhysical], vec![true, true]),
        (vec![Trip, Tamper, RearmPhysical, RearmPhysical], vec![true, true, true, true]),
    ];
    for (events, expected) in cases {
        check(&events, &expected);
    }
}

#[test]
fn verdict_rules() {
    let now = Instant::now();
    let stop = now.checked_sub(Duration::from_secs(30)).unwrap_or(now);
    let ago = |s: u64| now.checked_sub(Duration::from_secs(s));
    let att = |physical, at, tamper| RearmAttestation {
        input_physical: physical,
        input_at: at,
        last_tamper_at: tamper,
    };
    let cases = [
        (att(true, ago(1), None), None, Ok(())),
        (att(true, ago(0), ago(11)), None, Ok(())),
        (att(false, ago(1), None), None, Err("NotPhysical")),
        (att(true, None, None), None, Err("NoInputSeen")),
        (att(true, ago(3), None), None, Err("Stale")),
        (att(true, ago(40), None), None, Err("BeforeStop")),
        (att(true, ago(1), ago(5)), None, Err("RecentTampering")),
        (att(true, ago(1), None), ago(5), Err("RecentTampering")),
        (att(true, ago(1), ago(20)), ago(2), Err("RecentTampering")),
    ];
    for (a, latch_tamper, want) in cases {
        let got = rearm_verdict(&a, stop, latch_tamper, now).map_err(|r| {
            let dbg = format!("{r:?}");
            dbg.split([' ', '{']).next().unwrap_or_default().to_owned()
        });
        assert_eq!(got, want.map_err(str::to_owned), "{a:?} latch tamper {latch_tamper:?}");
    }
}

#[test]
fn refusals_explain_themselves() {
    let latch = Latch::new(StopFlag::new());
    assert_eq!(latch.rearm(physical_now()), Err(RearmRefusal::NotStopped));
    latch.trip(chord());
    let r = latch.rearm(injected_now());
    assert_eq!(r, Err(RearmRefusal::NotPhysical));
    let text = r.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("injected"), "{text}");
}

#[test]
fn trip_kinds_and_history() {
    let latch = Latch::new(StopFlag::new());
    assert_eq!(latch.trip(chord()), TripKind::Engaged);
    assert_eq!(latch.trip(chord()), TripKind::Retriggered);
    assert_eq!(latch.trip(StopReason::Tampering("x".into())), TripKind::Retriggered);
    let cur = latch.current().map(|r| (r.engaged.reason, r.later_count));
    assert_eq!(cur, Some((chord(), 2)));
    assert!(latch.last_tamper().is_some());
    assert_eq!(latch.rearm_count(), 0);
    assert!(latch.history().is_empty());
}

#[test]
fn accepted_rearm_closes_the_record_and_counts() {
    let latch = Latch::new(StopFlag::new());
    latch.trip(chord());
    let rec = latch.rearm(physical_now());
    assert!(rec.as_ref().is_ok_and(|r| r.rearmed_at.is_some()), "{rec:?}");
    assert_eq!(latch.rearm_count(), 1);
    assert_eq!(latch.history().len(), 1);
    assert_eq!(latch.current(), None);
    assert_eq!(latch.trip(chord()), TripKind::Engaged);
}

#[test]
fn worker_is_woken_with_each_trip() {
    let latch = Latch::new(StopFlag::new());
    let worker = {
        let latch = latch.clone();
        std::thread::spawn(move || (latch.wait_for_trip(), latch.wait_for_trip()))
    };
    latch.trip(chord());
    latch.trip(StopReason::Tampering("t".into()));
    let got = worker.join().ok().and_then(|(a, b)| {
        let (a, b) = (a?, b?);
        Some((a.kind, b.kind, b.trip.reason))
    });
    assert_eq!(got, Some((TripKind::Engaged, TripKind::Retriggered, StopReason::Tampering("t".into()))));
    assert_eq!(latch.wait_for_trip_timeout(Duration::from_millis(1)), None);
}

#[test]
fn trips_racing_rearms_are_never_lost() {
    // Many trips from other threads while the operator re-arms in a loop: once every
    // thread is done, the last event was a trip, so the latch must be stopped.
    for _ in 0..20 {
        let latch = Latch::new(StopFlag::new());
        latch.trip(chord());
        let trippers: Vec<_> = (0..2)
            .map(|_| {
                let latch = latch.clone();
                std::thread::spawn(move || {
                    for _ in 0..500 {
                        latch.trip(chord());
                    }
                })
            })
            .collect();
        for _ in 0..500 {
            let _ = latch.rearm(physical_now());
        }
        for t in trippers {
            assert!(t.join().is_ok());
        }
        let last = latch.trip(chord());
        let _ = last;
        assert!(latch.is_stopped());
        assert!(latch.flag().is_set());
        assert!(latch.current().is_some(), "state machine agrees with the word");
        // Everything counted was applied.
        let _ = latch.rearm(physical_now());
        assert!(!latch.is_stopped());
        assert!(latch.current().is_none());
    }
}

#[test]
fn flag_and_state_agree_after_concurrent_trips() {
    let latch = Latch::new(StopFlag::new());
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let latch = latch.clone();
            std::thread::spawn(move || {
                for _ in 0..200 {
                    latch.trip(chord());
                }
            })
        })
        .collect();
    for _ in 0..200 {
        let _ = latch.rearm(physical_now());
        // Whatever interleaving: the word and the flag never disagree in the unsafe
        // direction once the state machine has caught up.
        if latch.current().is_some() {
            assert!(latch.is_stopped());
        }
    }
    for h in handles {
        assert!(h.join().is_ok());
    }
    assert_eq!(latch.is_stopped(), latch.current().is_some());
    assert_eq!(latch.is_stopped(), latch.flag().is_set());
}

fn arb_ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        Just(Ev::Trip),
        Just(Ev::Tamper),
        Just(Ev::RearmInjected),
        Just(Ev::RearmOld),
        Just(Ev::RearmNothing),
    ]
}

proptest! {
    /// After a trip, no sequence without a physical re-arm ever clears the latch.
    #[test]
    fn no_sequence_without_physical_rearm_clears(events in prop::collection::vec(arb_ev(), 0..60)) {
        let latch = Latch::new(StopFlag::new());
        let before = Instant::now();
        latch.trip(chord());
        for ev in &events {
            match ev {
                Ev::Trip | Ev::RearmPhysical => { latch.trip(chord()); }
                Ev::Tamper => { latch.trip(StopReason::Tampering("p".into())); }
                Ev::RearmInjected => { let _ = latch.rearm(injected_now()); }
                Ev::RearmOld => { let _ = latch.rearm(RearmAttestation { input_at: Some(before), ..physical_now() }); }
                Ev::RearmNothing => { let _ = latch.rearm(RearmAttestation { input_at: None, ..physical_now() }); }
            }
            prop_assert!(latch.is_stopped());
            prop_assert!(latch.flag().is_set());
        }
    }
}
