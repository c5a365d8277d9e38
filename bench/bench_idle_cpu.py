#!/usr/bin/env python3
"""CPU an idle `mcec mcp` burns: armed, on a desktop, no call in flight.

    .venv/bin/python bench/bench_idle_cpu.py [--seconds 10] [BINARY ...]

Each binary (default target/debug/mcec; give an older build as well to compare in the same
run) is started as a manual copy on its own Xvfb, initialized over a raw pipe, left alone for
a second, then its user+system CPU time is read from /proc before and after `--seconds` of
idling. An idle mcec should cost nothing: its threads wait on the X connection, the stop
record's inotify watch and the pipe. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

import mcec_e2e  # noqa: E402
from mcec_e2e import RawStdio, manual_copy  # noqa: E402
from bench_move_vs_click import load  # noqa: E402
from xdesk import Screen  # noqa: E402


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("binaries", nargs="*", default=[str(HERE.parent / "target" / "debug" / "mcec")])
    args = ap.parse_args()
    print(load())
    with Screen() as screen:
        display = screen.display
        for binary in args.binaries:
            mcec_e2e.BIN = Path(binary).resolve()
            with tempfile.TemporaryDirectory(prefix="mcec-idle-bench-") as tmp:
                copy = manual_copy(Path(tmp) / "c", settings="AgentCommandsEnabled = true\n", commands=("displays",))
                server = RawStdio(copy, env_extra={"DISPLAY": display})
                try:
                    server.initialize()
                    time.sleep(1.0)
                    before = cpu_seconds(server.proc.pid)
                    time.sleep(args.seconds)
                    used = cpu_seconds(server.proc.pid) - before
                finally:
                    server.kill()
            share = 100 * used / args.seconds
            print(f"{binary}: {used:.2f} s of CPU in {args.seconds:.0f} s idle ({share:.1f}% of one core)")


if __name__ == "__main__":
    main()
