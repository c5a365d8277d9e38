#!/usr/bin/env python3
"""The Windows stop monitor under Wine: hook callback time and physical key -> latch.

    scripts/windows-build
    .venv/bin/python bench/bench_stop_wine.py [--rounds 50] [--injected 10]

mcec-stop-probe.exe runs under Wine on an Xvfb of its own (tests/windows/wine_desk.py).

  * key -> latch: per round Ctrl+Alt+Shift are held (`xdotool keydown`, untimed), t0 (wall
    clock) is taken just before spawning `xdotool key s`, and the latch's own trip time
    (`LATCHED wall_ns`, read in the hook callback when it engages the latch) is subtracted. Includes the
    xdotool process start (its run time is printed too), Xvfb -> Wine, Wine's hook dispatch.
  * hook callback: `work_ns` of every key event (classify, chord detector, engaging the latch,
    timed inside the callback before the observer send), physical and injected (SendInput chords
    from mcec-send-input.exe), plus the monitor's own mean and maximum of the whole callback up to
    the return of `CallNextHookEx` (`STATS`; under Wine that call is a wineserver round trip).
    The tripping key's row is the callback alone: the stop worker is woken after the callback
    has answered, and `latch -> stop worker woken` (`LATCHED woke_ns`, one monotonic clock)
    times that hand-over, from the latch engaging to the worker holding the notice. Ctrl down
    comes after a pause as the tripping key does: the same cold start without the trip.

Numbers are printed, never asserted. The issue's only bar: the callback never takes 1 ms.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "windows"))
from wine_desk import Probe, WineDesk, fields, key_events  # noqa: E402
from stats import percentile as pct  # noqa: E402


def row(name: str, xs: list[float], unit: str) -> str:
    return (
        f"{name:<34} n={len(xs):<4} p50={pct(xs, 50):8.1f} p90={pct(xs, 90):8.1f} "
        f"p99={pct(xs, 99):8.1f} max={max(xs):8.1f} {unit}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--injected", type=int, default=10)
    args = ap.parse_args()
    latch_ms: list[float] = []
    woke_us: list[float] = []
    xdotool_ms: list[float] = []
    with WineDesk() as desk, Probe(desk) as probe:
        for i in range(1, args.rounds + 1):
            desk.xdotool("keydown", "ctrl+alt+shift")
            t0 = time.time_ns()
            subprocess.run(["xdotool", "key", "s"], env=desk.env(), check=True)
            xdotool_ms.append((time.time_ns() - t0) / 1e6)
            latched = probe.wait_for(lambda l: l.startswith("LATCHED"), count=i)
            latch_ms.append((int(fields(latched)["wall_ns"]) - t0) / 1e6)
            woke_us.append(int(fields(latched)["woke_ns"]) / 1e3)
            desk.xdotool("keyup", "ctrl+alt+shift")
        for _ in range(args.injected):
            desk.wine("mcec-send-input", "chord")
        probe.wait_for(lambda l: "origin=foreign" in l, count=8 * args.injected)
        lines = probe.close()
    events = key_events(lines)
    stats = fields(next(l for l in lines if l.startswith("STATS")))
    phys = [int(e["work_ns"]) / 1e3 for e in events if e["origin"] == "physical"]
    inj = [int(e["work_ns"]) / 1e3 for e in events if e["origin"] != "physical"]
    trips = [int(e["work_ns"]) / 1e3 for e in events if e["tripped"] == "1"]
    ctrl = [
        int(e["work_ns"]) / 1e3
        for e in events
        if e["origin"] == "physical" and e["down"] == "1" and int(e["vk"], 16) in (0x11, 0xA2, 0xA3)
    ]
    print(f"Windows stop monitor under Wine ({args.rounds} physical chords, {args.injected} SendInput chords)")
    print(row("physical key -> latch (wall)", latch_ms, "ms"))
    print(row("  of which xdotool key s runs", xdotool_ms, "ms"))
    print(row("hook callback, physical keys", phys, "us"))
    print(row("hook callback, Ctrl down (no trip)", ctrl, "us"))
    print(row("hook callback, the tripping key", trips, "us"))
    print(row("latch -> stop worker woken", woke_us, "us"))
    print(row("hook callback, SendInput keys", inj, "us"))
    print(
        f"whole callback with CallNextHookEx (monitor's own count): events={stats['events']} "
        f"mean={int(stats['total_ns']) / max(1, int(stats['events'])) / 1e3:.1f} us max={int(stats['max_ns']) / 1e3:.1f} us"
    )
    print(f"mean key -> latch {statistics.mean(latch_ms):.2f} ms")


if __name__ == "__main__":
    main()
