#!/usr/bin/env python3
"""A pointer move against a click, at the server: raw JSON-RPC over stdio, no SDK.

    .venv/bin/python bench/bench_move_vs_click.py [--bin target/debug/mcec] [--calls 300]

Issue 30 asks that `mouse` `move` cost no more than `click` at the server. This starts its own
Xvfb (`xdesk.Screen`), one manual copy of mcec with both tools enabled, and times interleaved rounds of: a click,
a move to the same point, a move to alternating points (so the pointer really travels), and the
cheapest call (`displays`) as the floor. Each row prints p50/p90/p99 of the client's round trip
and of the server's own time (the `ms=` of its `AGENT-AUDIT: call` lines). Printed, never
asserted.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

from stats import percentile  # noqa: E402
import mcec_e2e  # noqa: E402
from mcec_e2e import RawStdio, manual_copy  # noqa: E402
from xdesk import Screen  # noqa: E402

AT = {"x": 300, "y": 200}
ELSEWHERE = {"x": 500, "y": 400}
OPS = {
    "displays (floor)": ("displays", {}),
    "click": ("click", {"at": AT}),
    "mouse move, same point": ("mouse", {"action": "move", "at": AT}),
    "mouse move, travels": None,  # alternates AT / ELSEWHERE
}


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def row(label: str, samples: list[float]) -> str:
    cells = " / ".join(f"{percentile(samples, p):7.3f}" for p in (50, 90, 99))
    return f"  {label:26} {cells} ms (n={len(samples)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(HERE.parent / "target" / "debug" / "mcec"))
    ap.add_argument("--calls", type=int, default=300, help="rounds (each round calls every row once)")
    ap.add_argument("--warmup", type=int, default=20)
    args = ap.parse_args()
    mcec_e2e.BIN = Path(args.bin).resolve()
    with Screen() as screen:
        display = screen.display
        with tempfile.TemporaryDirectory(prefix="mcec-move-bench-") as tmp:
            copy = manual_copy(Path(tmp) / "c", settings="AgentCommandsEnabled = true\n",
                               commands=("displays", "click", "mouse"))
            server = RawStdio(copy, env_extra={"DISPLAY": display})
            try:
                server.initialize()
                client: dict[str, list[float]] = {k: [] for k in OPS}
                order: list[str] = []
                call_id = 0
                for i in range(args.warmup + args.calls):
                    for label, op in OPS.items():
                        if op is None:
                            op = ("mouse", {"action": "move", "at": AT if i % 2 else ELSEWHERE})
                        call_id += 1
                        t0 = time.perf_counter()
                        resp = server.call(op[0], op[1], id=call_id)
                        dt = (time.perf_counter() - t0) * 1000
                        if resp["result"].get("isError"):
                            raise AssertionError(f"{label} failed: {resp}")
                        if i >= args.warmup:
                            client[label].append(dt)
                        order.append(label if i >= args.warmup else "")
            finally:
                server.kill()
            # The audit lines come in call order, one per call, with the server's own time.
            times = [float(m) for m in re.findall(r"AGENT-AUDIT: call; tool=\S+ ok=true ms=([0-9.]+)", copy.log())]
            server_side: dict[str, list[float]] = {k: [] for k in OPS}
            for label, ms in zip(order, times):
                if label:
                    server_side[label].append(ms)
    print(f"mcec {args.bin}, {args.calls} interleaved rounds after {args.warmup} warm-up; {load()}")
    print("client round trip over a raw pipe, p50 / p90 / p99:")
    for label, samples in client.items():
        print(row(label, samples))
    if all(server_side.values()):
        print("server's own time (audit ms=), p50 / p90 / p99:")
        for label, samples in server_side.items():
            print(row(label, samples))
    else:
        print(f"(server times not found in the log: {len(times)} audit lines)")


if __name__ == "__main__":
    main()
