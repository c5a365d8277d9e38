//! The latch's unit and property tests (a separate file because they outnumber the code).

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

/// A time well before any trip in a test.
fn long_ago() -> Instant {
    let now = Instant::now();
    now.checked_sub(Duration::from_secs(1)).unwrap_or(now)
}

/// Feeds one event to `latch`; `before` is a time before the latch was first tripped.
fn apply(latch: &Latch, ev: &Ev, before: Instant) {
    match ev {
        Ev::Trip => {
            latch.trip(chord());
        }
        Ev::Tamper => {
            latch.trip(StopReason::Tampering("forged".into()));
        }
        Ev::RearmInjected => {
            let _ = latch.rearm(injected_now());
        }
        Ev::RearmOld => {
            let _ = latch.rearm(RearmAttestation { input_at: Some(before), ..physical_now() });
        }
        Ev::RearmNothing => {
            let _ = latch.rearm(RearmAttestation { input_at: None, ..physical_now() });
        }
        Ev::RearmPhysical => {
            let _ = latch.rearm(physical_now());
        }
    }
}

/// Drives a fresh latch with `events` and compares `is_stopped()` after each.
fn check(events: &[Ev], expected: &[bool]) {
    assert_eq!(events.len(), expected.len());
    let flag = StopFlag::new();
    let latch = Latch::new(flag.clone());
    let before = long_ago();
    for (i, (ev, want)) in events.iter().zip(expected).enumerate() {
        apply(&latch, ev, before);
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
fn exit_waits_for_every_trip_to_settle() {
    let latch = Latch::new(StopFlag::new());
    assert!(latch.wait_settled(Duration::ZERO), "nothing engaged, nothing to wait for");
    // Engaged on the input thread, not yet announced: the worker has not even heard of it.
    let engaged = latch.engage();
    assert!(!latch.wait_settled(Duration::from_millis(20)));
    let worker = {
        let latch = latch.clone();
        std::thread::spawn(move || {
            for _ in 0..2 {
                if latch.wait_for_trip().is_some() {
                    latch.settle();
                }
            }
        })
    };
    latch.announce(engaged, chord());
    latch.trip(StopReason::Tampering("t".into()));
    assert!(latch.wait_settled(Duration::from_secs(10)), "both trips settle once the worker ran them");
    assert!(worker.join().is_ok());
}

/// A re-arm as the race calls it: the real [`Latch::rearm`] or a deliberately broken one.
type RearmFn = fn(&Latch, RearmAttestation) -> Result<StopRecord, RearmRefusal>;

/// What one race saw, summed over its threads.
#[derive(Debug, Default)]
struct RaceTally {
    engaged: u64,
    retriggered: u64,
    rearmed: u64,
    stopped_again: u64,
}

impl RaceTally {
    /// Whether, over `rounds` rounds, a trip engaged a new stop after a re-arm (each round's
    /// first trip engages one anyway) while other trips only retriggered.
    fn raced(&self, rounds: u64) -> bool {
        self.rearmed > 0 && self.retriggered > 0 && self.engaged > rounds
    }
}

/// The id a racing trip carries in its reason, so every trip can be found in the records.
fn trip_id(thread: usize, i: usize) -> StopReason {
    StopReason::Chord(format!("t{thread}#{i}"))
}

/// Two threads trip while this one re-arms in a loop, all released together. Then every trip
/// must be accounted for: each one that answered `Engaged` opened exactly one stop (closed by
/// a re-arm that answered `Ok`, or still open), each stop was opened by such a trip, every trip
/// is counted in exactly one stop, and the word, the flag and the state machine agree. A trip
/// lost in the race (cleared by a re-arm that decided before it landed) breaks one of these.
fn race(rearm: RearmFn, tally: &mut RaceTally) -> Result<(), String> {
    const TRIPPERS: usize = 2;
    const TRIPS: usize = 500;
    let latch = Latch::new(StopFlag::new());
    let first = StopReason::Chord("first".into());
    if latch.trip(first.clone()) != TripKind::Engaged {
        return Err("the first trip of a fresh latch did not engage".into());
    }
    let start = Arc::new(std::sync::Barrier::new(TRIPPERS + 1));
    let trippers: Vec<_> = (0..TRIPPERS)
        .map(|t| {
            let (latch, start) = (latch.clone(), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                (0..TRIPS).map(|i| (trip_id(t, i), latch.trip(trip_id(t, i)))).collect::<Vec<_>>()
            })
        })
        .collect();
    start.wait();
    let mut closed = Vec::new();
    let mut rearms_tried = 0;
    while rearms_tried < TRIPS || trippers.iter().any(|t| !t.is_finished()) {
        rearms_tried += 1;
        match rearm(&latch, physical_now()) {
            Ok(record) => closed.push(record),
            Err(RearmRefusal::StoppedAgain) => tally.stopped_again += 1,
            // BeforeStop: a trip engaged a new stop after the attestation was taken.
            Err(RearmRefusal::NotStopped | RearmRefusal::Busy | RearmRefusal::BeforeStop) => {}
            Err(other) => return Err(format!("a physical re-arm was refused for another reason: {other:?}")),
        }
    }
    let mut engaged_by = vec![first];
    let mut trips = 1u64;
    for t in trippers {
        let kinds = t.join().map_err(|_| "a tripping thread panicked".to_owned())?;
        for (reason, kind) in kinds {
            trips += 1;
            match kind {
                TripKind::Engaged => engaged_by.push(reason),
                TripKind::Retriggered => tally.retriggered += 1,
            }
        }
    }
    tally.engaged += engaged_by.len() as u64;
    tally.rearmed += closed.len() as u64;

    let open = latch.current();
    if latch.is_stopped() != open.is_some() || latch.flag().is_set() != open.is_some() {
        return Err(format!(
            "word stopped={}, flag={}, state machine open stop={:?}",
            latch.is_stopped(),
            latch.flag().is_set(),
            open.as_ref().map(|r| &r.engaged.reason)
        ));
    }
    if closed.iter().any(|r| r.rearmed_at.is_none()) || open.as_ref().is_some_and(|r| r.rearmed_at.is_some())
    {
        return Err("a closed stop without a re-arm time, or an open one with".into());
    }
    if latch.rearm_count() != closed.len() as u64 {
        return Err(format!(
            "{} re-arms answered Ok, the latch counted {}",
            closed.len(),
            latch.rearm_count()
        ));
    }
    let records: Vec<&StopRecord> = closed.iter().chain(open.as_ref()).collect();
    let mut opened_by: Vec<StopReason> = records.iter().map(|r| r.engaged.reason.clone()).collect();
    let key = |r: &StopReason| r.to_string();
    opened_by.sort_by_key(key);
    engaged_by.sort_by_key(key);
    if opened_by != engaged_by {
        let only_records: Vec<_> = opened_by.iter().filter(|r| !engaged_by.contains(r)).collect();
        let only_trips: Vec<_> = engaged_by.iter().filter(|r| !opened_by.contains(r)).collect();
        return Err(format!(
            "{} stops opened by trips that answered Retriggered (first: {:?}); \
             {} trips answered Engaged but opened no stop (first: {:?})",
            only_records.len(),
            only_records.first(),
            only_trips.len(),
            only_trips.first()
        ));
    }
    let counted: u64 = records.iter().map(|r| 1 + r.later_count).sum();
    if counted != trips {
        return Err(format!("{trips} trips, {counted} counted in the stops"));
    }
    Ok(())
}

#[test]
fn the_stop_is_opened_by_the_trip_that_engaged_even_if_a_later_one_announces_first() {
    let latch = Latch::new(StopFlag::new());
    let first = latch.engage();
    let second = latch.engage();
    assert_eq!((first.kind, second.kind), (TripKind::Engaged, TripKind::Retriggered));
    latch.announce(second, StopReason::Chord("second".into()));
    latch.announce(first, StopReason::Chord("first".into()));
    let open = latch.current().expect("stopped");
    assert_eq!(open.engaged.reason, StopReason::Chord("first".into()));
    assert_eq!(open.later_count, 1);
    assert_eq!(open.later[0].reason, StopReason::Chord("second".into()));
}

#[test]
fn trips_racing_rearms_are_never_lost() {
    let mut tally = RaceTally::default();
    // At least 20 rounds, and more while the threads have not yet overlapped: on a busy
    // machine the trippers can finish before the first re-arm, which races nothing.
    let mut rounds: u64 = 0;
    while rounds < 20 || (rounds < 500 && !tally.raced(rounds)) {
        if let Err(lost) = race(Latch::rearm, &mut tally) {
            panic!("round {rounds}: {lost}");
        }
        rounds += 1;
    }
    eprintln!("{rounds} rounds: {tally:?}");
    // The race really raced: re-arms succeeded while trips kept landing and engaging again.
    assert!(tally.raced(rounds), "{rounds} rounds: {tally:?}");
}

/// [`Latch::rearm`] without its compare-and-swap: it waits (briefly) for a trip to land after
/// it decided, then clears the stopped bit anyway. That trip is lost.
fn rearm_that_loses_a_trip(latch: &Latch, att: RearmAttestation) -> Result<StopRecord, RearmRefusal> {
    let mut core = lock(&latch.0.core);
    let word = latch.sync(&mut core)?;
    let last_tamper = core.last_tamper;
    let stopped = match std::mem::replace(&mut core.state, StopState::Armed(Armed)) {
        StopState::Stopped(s) => s,
        armed @ StopState::Armed(_) => {
            core.state = armed;
            return Err(RearmRefusal::NotStopped);
        }
    };
    match stopped.rearm(&att, last_tamper, Instant::now(), SystemTime::now()) {
        Err((s, refusal)) => {
            core.state = StopState::Stopped(s);
            Err(refusal)
        }
        Ok((armed, record)) => {
            let deadline = Instant::now() + Duration::from_millis(20);
            while latch.0.word.load(Ordering::SeqCst) == word && Instant::now() < deadline {
                std::thread::yield_now();
            }
            latch.0.word.fetch_and(!1, Ordering::SeqCst);
            latch.0.flag.clear();
            latch.0.rearms.fetch_add(1, Ordering::SeqCst);
            core.state = StopState::Armed(armed);
            Ok(record)
        }
    }
}

#[test]
fn the_race_catches_a_latch_that_loses_trips() {
    let mut tally = RaceTally::default();
    let caught = (0..20).find_map(|_| race(rearm_that_loses_a_trip, &mut tally).err());
    assert!(caught.is_some(), "the race passed a latch that loses trips: {tally:?}");
    eprintln!("caught: {}", caught.unwrap_or_default());
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

/// Every event but a physical re-arm.
fn arb_non_physical() -> impl Strategy<Value = Ev> {
    prop_oneof![
        Just(Ev::Trip),
        Just(Ev::Tamper),
        Just(Ev::RearmInjected),
        Just(Ev::RearmOld),
        Just(Ev::RearmNothing),
    ]
}

fn arb_ev() -> impl Strategy<Value = Ev> {
    prop_oneof![4 => arb_non_physical(), 1 => Just(Ev::RearmPhysical)]
}

proptest! {
    /// After a trip, no sequence without a physical re-arm ever clears the latch.
    #[test]
    fn no_sequence_without_physical_rearm_clears(events in prop::collection::vec(arb_non_physical(), 0..60)) {
        let latch = Latch::new(StopFlag::new());
        let before = long_ago();
        latch.trip(chord());
        for ev in &events {
            apply(&latch, ev, before);
            prop_assert!(latch.is_stopped(), "cleared by {:?} in {:?}", ev, events);
            prop_assert!(latch.flag().is_set());
        }
    }

    /// Any sequence, physical re-arms included, against a two-line model: a trip stops, a
    /// physical re-arm clears unless tampering was ever seen (the test runs well inside the
    /// quiet period), nothing else changes anything.
    #[test]
    fn the_latch_follows_the_model(events in prop::collection::vec(arb_ev(), 0..60)) {
        let latch = Latch::new(StopFlag::new());
        let before = long_ago();
        let (mut stopped, mut tampered) = (false, false);
        for ev in &events {
            apply(&latch, ev, before);
            match ev {
                Ev::Trip => stopped = true,
                Ev::Tamper => (stopped, tampered) = (true, true),
                Ev::RearmPhysical => stopped &= tampered,
                Ev::RearmInjected | Ev::RearmOld | Ev::RearmNothing => {}
            }
            prop_assert_eq!(latch.is_stopped(), stopped, "after {:?} in {:?}", ev, events);
            prop_assert_eq!(latch.flag().is_set(), stopped);
        }
    }
}
