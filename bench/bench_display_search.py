"""What finding the display costs at start: `mcec mcp` spawned -> its `initialize` result, with
DISPLAY passed by the client, and without it (mcec looks at logind, connects to the X sockets
and executes itself again with the display it found). Alternating runs on one Xvfb; p50/p90.

    .venv/bin/python bench/bench_display_search.py [--bin PATH] [--runs 30]

The search is pointed at a directory holding only this Xvfb's socket and at no logind (the
test-only variables), so other X servers on the machine do not change what is measured."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
import mcec_e2e  # noqa: E402
from mcec_e2e import NO_LOGIND, manual_copy  # noqa: E402
from stats import pct  # noqa: E402
from xdesk import Screen  # noqa: E402

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def cold_start(exe: Path, env: dict[str, str]) -> float:
    """Seconds from spawn to the `initialize` result."""
    start = time.perf_counter()
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
    proc = subprocess.Popen([str(exe), "mcp"], env=env, **pipes)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    proc.stdout.readline()
    took = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=30)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=str(mcec_e2e.BIN))
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    mcec_e2e.BIN = Path(args.bin).resolve()
    with tempfile.TemporaryDirectory() as tmp, Screen() as screen:
        copy = manual_copy(Path(tmp) / "c", settings="AgentCommandsEnabled = true\n")
        sockets = Path(tmp) / "x11-unix"
        sockets.mkdir()
        name = "X" + screen.display.lstrip(":")
        (sockets / name).symlink_to(Path("/tmp/.X11-unix") / name)
        base = copy.env(MCEC_LOGIND_BUS=NO_LOGIND)
        cases = {
            "DISPLAY passed": {**base, "DISPLAY": screen.display},
            "found (socket, re-exec)": {**base, "MCEC_X11_SOCKET_DIR": str(sockets)},
        }
        for env in cases.values():
            cold_start(copy.exe, env)  # warm the page cache
        samples: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.runs):
            for label, env in cases.items():
                samples[label].append(cold_start(copy.exe, env))
    print(f"spawn -> initialize result, {args.runs} runs each, alternating ({args.bin})")
    for label, values in samples.items():
        print(f"  {label:26} p50 {pct(values, 50):6.1f} ms   p90 {pct(values, 90):6.1f} ms")


if __name__ == "__main__":
    main()
