#!/usr/bin/env python3
"""Cancel latency: how long after a client cancels a call the target program stops getting
input from it, measured from outside.

    cargo build -p mcec -p mcec-desktop-x11 --bins
    .venv/bin/python bench/bench_cancel.py [--bin PATH] [--rounds 60]

A real `mcec mcp` on a plain Xvfb, driven by the official MCP Python SDK, acts on
`mcec-testwin` (which prints every input event it receives; the bench stamps each line when it
reads it). Each round starts a call, waits until its input is arriving, then cancels it the
SDK's way (the task awaiting `call_tool` is cancelled, so the SDK sends
`notifications/cancelled`). t0 is taken just before that cancel. Two calls, alternating:

  * drag - a 3 s `drag` across the window, cancelled 0.1-0.4 s after its press arrived; the
           last input event is the button's release (mcec lets go when it stops);
  * type - `type` of 10000 characters, cancelled once 50 have arrived; the last input event
           is the last key event the window reports (0 when none came after t0).

Printed per call: t0 -> last input event seen by the window (p50/p90/p99/max), and how many
events the window got after t0 (what slipped through before the stop was seen). Nothing is
subtracted: the numbers include the SDK sending the notification, mcec reading it, the
stopped call's next step, X11, and the window's pipe. Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

from stats import pct  # noqa: E402
import mcec_e2e  # noqa: E402
import probe  # noqa: E402
from mcec_e2e import manual_copy, sdk_envelope, sdk_stdio  # noqa: E402
from xdesk import Screen  # noqa: E402

WIN_X, WIN_Y = 100, 100
DRAG = {"from": {"x": WIN_X + 10, "y": WIN_Y + 10}, "to": {"x": WIN_X + 380, "y": WIN_Y + 10}, "durationMs": 3000}
TEXT = "abcdefghij" * 1000


class StampedWindow(probe.ProbeWindow):
    """The test window, with the time each line was read kept beside it."""

    def _pump(self) -> None:
        self.stamped: list[tuple[float, str]] = []
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.stamped.append((time.perf_counter(), line.rstrip("\n")))
            self._lines.put(line.rstrip("\n"))

    def since(self, t0: float) -> list[tuple[float, str]]:
        return [(t, line) for t, line in list(self.stamped) if t >= t0]


def report(name: str, samples: list[float]) -> None:
    if not samples:
        print(f"{name:<40} no samples")
        return
    print(
        f"{name:<40} n={len(samples):<4} p50={pct(samples, 50):7.2f} ms  p90={pct(samples, 90):7.2f} ms  "
        f"p99={pct(samples, 99):7.2f} ms  max={max(samples) * 1000:7.2f} ms"
    )


async def cancel_once(session, win: StampedWindow, tool: str, args: dict, ready) -> tuple[float, list]:
    """Start `tool`, run `ready` in a thread, cancel; returns t0 and the window's lines after it
    (read until the window has been quiet for 0.3 s)."""
    answered: list = []

    async def run() -> None:
        answered.append(await session.call_tool(tool, args))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await anyio.to_thread.run_sync(ready)
        t0 = time.perf_counter()
        tg.cancel_scope.cancel()
    if answered:
        raise RuntimeError(f"{tool} finished before the cancel: {sdk_envelope(answered[0])}")
    await anyio.to_thread.run_sync(win.drain, 0.3)
    return t0, win.since(t0)


async def bench(rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="mcec-bench-cancel-") as tmp, Screen() as screen:
        copy = manual_copy(Path(tmp) / "c", settings="AgentCommandsEnabled = true\n", commands=("drag", "type", "focus"))
        win = StampedWindow(screen, "--title", "cancel bench", "--class", "CancelBench")
        out: dict[str, list[float]] = {"drag": [], "type": []}
        slipped: dict[str, list[int]] = {"drag": [], "type": []}
        try:
            async with sdk_stdio(copy, {"DISPLAY": screen.display}) as (session, _init):
                focused = sdk_envelope(await session.call_tool("focus", {"className": "CancelBench"}))
                if not focused["ok"]:
                    raise RuntimeError(f"focus failed: {focused}")
                for i in range(2 * rounds):
                    win.drain(0.05)
                    if i % 2 == 0:
                        delay = random.uniform(0.1, 0.4)

                        def pressed_then_wait() -> None:
                            win.wait_for(lambda line: line.startswith("press 1"))
                            time.sleep(delay)

                        t0, after = await cancel_once(session, win, "drag", DRAG, pressed_then_wait)
                        releases = [t for t, line in after if line.startswith("release 1")]
                        if not releases:
                            raise RuntimeError(f"no release after the cancel: {after[-5:]}")
                        out["drag"].append(releases[-1] - t0)
                        slipped["drag"].append(sum(1 for _, line in after if line.startswith("motion")))
                    else:

                        def fifty_keys() -> None:
                            for _ in range(50):
                                win.wait_for(lambda line: line.startswith("key "))

                        t0, after = await cancel_once(session, win, "type", {"text": TEXT}, fifty_keys)
                        keys = [(t, line) for t, line in after if line.startswith(("key ", "keyup "))]
                        # No key event after t0: the last one arrived before the cancel was sent.
                        out["type"].append(keys[-1][0] - t0 if keys else 0.0)
                        slipped["type"].append(sum(1 for _, line in keys if line.startswith("key ")))
        finally:
            win.close()
        print(f"mcec: {mcec_e2e.BIN}; Xvfb {screen.display}; {rounds} cancels per call")
        report("drag: cancel -> button released (window)", out["drag"])
        report("type: cancel -> last key event (window)", out["type"])
        for name, counts in slipped.items():
            counts.sort()
            print(f"{name}: events after the cancel: median {counts[len(counts) // 2]}, max {counts[-1]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, help="the mcec binary (default target/debug/mcec)")
    parser.add_argument("--rounds", type=int, default=60, help="cancels per call (default 60)")
    args = parser.parse_args()
    if args.bin:
        mcec_e2e.BIN = args.bin.resolve()
    anyio.run(bench, args.rounds)


if __name__ == "__main__":
    main()
