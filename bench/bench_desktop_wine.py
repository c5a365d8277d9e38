#!/usr/bin/env python3
"""The Windows desktop backend under Wine: click, type and capture latency in process.

    scripts/windows-build
    .venv/bin/python bench/bench_desktop_wine.py [--rounds 50]

mcec-backend-bench.exe runs under Wine on an Xvfb of its own (tests/windows/wine_desk.py),
drives `DesktopTools` over `WindowsDesktop` against an mcec-wintest window, and prints one
sample per measurement (see its module doc for the kinds): the tool call's own time, and for
click and type also the time until the window reported the input (the window's stdout line,
read by the bench program's reader thread). Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "windows"))
sys.path.insert(0, str(ROOT / "bench"))
from stats import pct  # noqa: E402
from wine_desk import WINE, WineDesk, exe, fields  # noqa: E402

KINDS = ["click_call", "click_seen", "type_call", "type_seen", "capture_region", "capture_full"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=50)
    args = ap.parse_args()
    with WineDesk() as desk:
        out = subprocess.run(
            [WINE, str(exe("mcec-backend-bench")), str(args.rounds)],
            env=desk.env(),
            capture_output=True,
            text=True,
            timeout=60 + args.rounds * 10,
        )
    lines = out.stdout.splitlines()
    if out.returncode != 0 or "DONE" not in lines:
        raise SystemExit(f"mcec-backend-bench exited {out.returncode}:\n{out.stdout}\n{out.stderr}")
    samples: dict[str, list[float]] = {k: [] for k in KINDS}
    for line in lines:
        if line.startswith("SAMPLE"):
            f = fields(line)
            samples[f["kind"]].append(float(f["s"]))
    print(f"Windows backend under Wine 8 ({args.rounds} rounds, load average {os.getloadavg()[0]:.1f})")
    for kind in KINDS:
        xs = samples[kind]
        print(
            f"{kind:<16} n={len(xs):<4} p50={pct(xs, 50):8.2f} p90={pct(xs, 90):8.2f} "
            f"p99={pct(xs, 99):8.2f} max={max(xs) * 1000:8.2f} ms"
        )


if __name__ == "__main__":
    main()
