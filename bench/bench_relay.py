#!/usr/bin/env python3
"""What `mcec mcp --session` adds to every call: the relay's overhead per round trip.

    cargo build -p mcec
    .venv/bin/python bench/bench_relay.py [--bin PATH] [--calls 500]

An installed copy with the provisioning opt-in. Two clients, each a minimal line-by-line
JSON-RPC client (tests/e2e/mcec_e2e.py RawStdio, no SDK): one talks to `mcec mcp --session`
(relay -> its fresh session copy), the other to a session copy provisioned with `mcec
provision` and started directly. Calls of `session-status` alternate between the two, so both
see the same machine load. Prints p50/p90/p99 of each and the difference of the medians.
Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

import mcec_e2e  # noqa: E402
from mcec_e2e import RawStdio, installed_copy, run_cli, session_copy  # noqa: E402
from stats import pct  # noqa: E402


def line(name: str, samples: list[float]) -> str:
    return f"  {name:<28} p50 {pct(samples, 50):7.3f} ms  p90 {pct(samples, 90):7.3f} ms  p99 {pct(samples, 99):7.3f} ms"


def timed_call(server: RawStdio, n: int) -> float:
    t0 = time.perf_counter()
    resp = server.call("session-status", id=n)
    dt = time.perf_counter() - t0
    if "result" not in resp:
        raise RuntimeError(f"session-status failed: {resp}")
    return dt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, help="the mcec binary (default target/debug/mcec)")
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    if args.bin:
        mcec_e2e.BIN = args.bin.resolve()
    with tempfile.TemporaryDirectory(prefix="mcec-bench-relay-") as tmp:
        op = installed_copy(Path(tmp) / "inst")
        op.write_settings("AllowSessionProvisioning = true\n")
        code, out, err = run_cli(op, ["provision", "--json", "--no-mcp-server"])
        if code != 0:
            raise RuntimeError(err)
        direct = RawStdio(session_copy(op, json.loads(out)))
        relayed = RawStdio(op, args=("mcp", "--session"))
        try:
            for server in (direct, relayed):
                server.initialize()
                for i in range(20):
                    timed_call(server, 100_000 + i)
            samples: dict[str, list[float]] = {"direct": [], "relayed": []}
            for i in range(args.calls):
                samples["direct"].append(timed_call(direct, i))
                samples["relayed"].append(timed_call(relayed, i))
        finally:
            relayed.wait_exit()
            direct.wait_exit()
    print(f"mcec: {mcec_e2e.BIN}; {args.calls} session-status round trips each, alternating")
    print(line("session copy, direct", samples["direct"]))
    print(line("mcec mcp --session (relay)", samples["relayed"]))
    diff = pct(samples["relayed"], 50) - pct(samples["direct"], 50)
    print(f"  relay overhead (difference of p50s): {diff:.3f} ms")


if __name__ == "__main__":
    main()
