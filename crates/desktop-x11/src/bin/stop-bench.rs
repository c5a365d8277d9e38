//! Emergency-stop latency: from a physical key press to the latch being set.
//!
//! Needs the two-display desk of `scripts/xharness.sh` (outer Xvfb, inner Xephyr):
//!
//! ```sh
//! scripts/xharness.sh start 60 61
//! cargo run -p mcec-desktop-x11 --release --bin stop-bench -- :60 :61 200
//! scripts/xharness.sh stop 60 61
//! ```
//!
//! The chord is pressed with XTEST on the OUTER display (so the inner server, where the
//! monitor listens, sees it from Xephyr's keyboard: physical). Each round measures the time
//! from sending the main key to `Latch::trip` (latch set) and to the worker waking, then
//! re-arms with a physical F9 press, exactly as an operator would. Also prints the time the
//! monitor thread spends per event.

use std::time::{Duration, Instant};

use mcec_desktop::monitor::{LastPhysicalInput, MonitorEvent, MonitorSink, ProvenanceMonitor};
use mcec_desktop_x11::X11Monitor;
use mcec_rules::StopFlag;
use mcec_rules::hotkey::Hotkey;
use mcec_rules::latch::{Latch, RearmAttestation};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

#[path = "common/keyboard.rs"]
mod keyboard;
use keyboard::keycode;

const KEY_PRESS: u8 = 2;
const KEY_RELEASE: u8 = 3;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn report(name: &str, mut v: Vec<Duration>) {
    v.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{name}: n={} p50={:.0}us p90={:.0}us p99={:.0}us max={:.0}us",
        v.len(),
        us(percentile(&v, 0.5)),
        us(percentile(&v, 0.9)),
        us(percentile(&v, 0.99)),
        us(v.last().copied().unwrap_or_default())
    );
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (outer, inner) = match (args.first(), args.get(1)) {
        (Some(o), Some(i)) => (o.clone(), i.clone()),
        _ => return Err("usage: stop-bench OUTER_DISPLAY INNER_DISPLAY [ROUNDS]".into()),
    };
    let rounds: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(200);

    let latch = Latch::new(StopFlag::new());
    let ledger = LastPhysicalInput::new();
    let (tx, events) = std::sync::mpsc::sync_channel(1_000_000);
    let sink = MonitorSink::new(latch.clone(), Hotkey::default(), ledger.clone()).with_events(tx);
    let handle =
        X11Monitor::new(Some(&inner)).and_then(|m| m.start(sink)).map_err(|e| format!("monitor: {e}"))?;
    println!("{}", handle.status());

    let (conn, screen) = RustConnection::connect(Some(&outer)).map_err(|e| e.to_string())?;
    let root = conn.setup().roots[screen].root;
    use xkeysym::key as k;
    let mods = [keycode(&conn, k::Control_L)?, keycode(&conn, k::Alt_L)?, keycode(&conn, k::Shift_L)?];
    let s = keycode(&conn, k::s)?;
    let f9 = keycode(&conn, k::F9)?;
    let fake = |t: u8, code: u8| -> Result<(), String> {
        conn.xtest_fake_input(t, code, 0, root, 0, 0, 0).map_err(|e| e.to_string())?;
        Ok(())
    };
    let sync = || -> Result<(), String> {
        conn.get_input_focus().map_err(|e| e.to_string())?.reply().map_err(|e| e.to_string())?;
        Ok(())
    };

    let (mut to_latch, mut to_wake) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for m in mods {
            fake(KEY_PRESS, m)?;
        }
        sync()?;
        let t0 = Instant::now();
        fake(KEY_PRESS, s)?;
        conn.flush().map_err(|e| e.to_string())?;
        let notice =
            latch.wait_for_trip_timeout(Duration::from_secs(5)).ok_or(format!("round {round}: no trip"))?;
        let woke = Instant::now();
        to_latch.push(notice.trip.at.saturating_duration_since(t0));
        to_wake.push(woke.saturating_duration_since(t0));
        fake(KEY_RELEASE, s)?;
        for m in mods.iter().rev() {
            fake(KEY_RELEASE, *m)?;
        }
        // Re-arm with a physical F9, as the operator would.
        fake(KEY_PRESS, f9)?;
        fake(KEY_RELEASE, f9)?;
        sync()?;
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let seen = ledger.snapshot().last_physical_press.is_some_and(|t| t > notice.trip.at);
            if seen {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!("round {round}: the F9 never arrived"));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        // The latch's rule on the F9's arrival (the bench measures the latch, not a window).
        let att = RearmAttestation {
            input_physical: true,
            input_at: ledger.snapshot().last_physical_press,
            last_tamper_at: ledger.last_tamper(),
        };
        latch.rearm(att).map_err(|e| format!("round {round}: re-arm refused: {e}"))?;
    }
    report("physical key -> latch set", to_latch);
    report("physical key -> worker woken", to_wake);
    let st = handle.stats();
    println!(
        "monitor thread per event: n={} mean={:.1}us max={:.1}us",
        st.events,
        st.total_nanos as f64 / st.events.max(1) as f64 / 1e3,
        st.max_nanos as f64 / 1e3
    );
    if !handle.stop() {
        eprintln!("stop-bench: the monitor did not stop in time");
    }
    let mut tally: std::collections::BTreeMap<String, usize> = Default::default();
    for ev in events.try_iter() {
        let name = match ev {
            MonitorEvent::Input(c) => format!(
                "{:?} {} {}",
                c.input,
                if c.down { "down" } else { "up" },
                if c.physical { "physical" } else { "injected" }
            ),
            other => format!("{other:?}"),
        };
        *tally.entry(name).or_default() += 1;
    }
    for (name, n) in tally {
        println!("  {n:6}  {name}");
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("stop-bench: {e}");
        std::process::exit(1);
    }
}
