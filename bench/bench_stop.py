#!/usr/bin/env python3
"""Emergency-stop benchmark, measured from outside like the operator and an agent see it.

    cargo build -p mcec
    .venv/bin/python bench/bench_stop.py [--bin PATH] [--rounds 100]

A real `mcec mcp` runs on the inner display of an Xvfb + Xephyr desk (tests/e2e/xdesk.py),
driven by the official MCP Python SDK. In every round the agent first holds the left button
(a slow `drag` with `durationMs`) or, when `drag` does not take `durationMs`, Shift (`key`
with `holdMs`); then the operator's chord Ctrl+Alt+Shift+S is sent as *physical* input:
`xdotool` on the outer display, which Xephyr replays through its own keyboard. Rounds
alternate between two measurements, so the polling of one does not slow the other:

  * refused  - t0 (just before `xdotool` is spawned) to the first `session-status` call that
               answers `emergency-stopped`; calls are sent back to back over one SDK session;
  * released - t0 to the first `xinput query-state` of the inner server's XTEST pointer (or
               keyboard) that shows the held button (or key) up, released by the stop; each
               poll is one `xinput` process, so the resolution is one poll (a few ms);
  * engaged  - t0 (wall clock) to the timestamp of the `emergency-stop; engaged` audit line in
               mcec.log (written by the stop worker after the latch woke it), every round.

Nothing is subtracted: every number includes starting the `xdotool` process (its own run time
is printed too), the Xvfb -> Xephyr hop, and for `refused` the SDK's round trip. Between rounds
the stop is re-armed with a physical click on the prompt's Re-arm button, and the next round
starts once calls succeed again. Numbers are printed, never asserted.

t0 is taken after Ctrl, Alt and Shift are already held (`xdotool keydown ctrl+alt+shift`,
untimed) and just before spawning `xdotool keydown s`, whose only action is the main key.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

from stats import pct  # noqa: E402
import mcec_e2e  # noqa: E402
from mcec_e2e import manual_copy, sdk_stdio  # noqa: E402
from xdesk import Desk, wait_until  # noqa: E402

AGENT_KEYBOARD = "Virtual core XTEST keyboard"
AGENT_POINTER = "Virtual core XTEST pointer"
# As in tests/e2e/test_emergency_stop.py: the prompt's title and its Re-arm button.
PROMPT_TITLE = "mcec: emergency stop"
REARM_OFFSET = (41, 130)
ENGAGED = "AGENT-AUDIT: emergency-stop; engaged"


def report(name: str, samples: list[float]) -> None:
    if not samples:
        print(f"{name:<34} no samples")
        return
    print(
        f"{name:<34} n={len(samples):<4} p50={pct(samples, 50):7.2f} ms  p90={pct(samples, 90):7.2f} ms  "
        f"p99={pct(samples, 99):7.2f} ms  max={max(samples) * 1000:7.2f} ms"
    )


def log_time(line: str) -> float:
    """The wall-clock time (epoch seconds) at the start of a mcec.log line."""
    stamp = line.split()[0].replace("Z", "+00:00")
    return datetime.fromisoformat(stamp).timestamp()


async def code_of(session, tool: str, args: dict | None = None) -> str | None:
    result = await session.call_tool(tool, args or {})
    env = json.loads(result.content[-1].text)
    return None if env["ok"] else env["error"]["code"]


@dataclass(frozen=True)
class Hold:
    """What the agent holds down when the chord comes: a call that keeps it down, and the
    XTEST device of the inner server that shows it."""

    what: str
    tool: str
    args: dict
    device: str

    def is_down(self, desk: Desk) -> bool:
        if self.device == AGENT_POINTER:
            return bool(desk.buttons_down(self.device))
        return bool(desk.keys_down(self.device))


HOLD_BUTTON = Hold(
    "left button (slow drag)",
    "drag",
    {"from": {"x": 100, "y": 100}, "to": {"x": 900, "y": 700}, "durationMs": 10000},
    AGENT_POINTER,
)
HOLD_SHIFT = Hold("Shift (key holdMs)", "key", {"keys": "shift", "holdMs": 10000}, AGENT_KEYBOARD)


async def pick_hold(session) -> Hold:
    """The left button when `drag` takes `durationMs`, else a held Shift."""
    probe = {"from": {"x": 10, "y": 10}, "to": {"x": 20, "y": 20}, "durationMs": 50}
    return HOLD_BUTTON if await code_of(session, "drag", probe) is None else HOLD_SHIFT


def poll_released(desk: Desk, hold: Hold) -> float:
    """Poll until the held input is up; returns perf_counter() at that poll."""
    deadline = time.perf_counter() + mcec_e2e.HANG_GUARD_S
    while hold.is_down(desk):
        if time.perf_counter() > deadline:
            raise RuntimeError(f"the held {hold.what} was never released")
    return time.perf_counter()


def press_main_key(desk: Desk) -> float:
    """The chord's main key, with the modifiers already down; returns perf_counter() when
    xdotool has exited."""
    desk.physical("keydown", "s")
    return time.perf_counter()


async def rearm(session, desk: Desk, clicks: list[int]) -> None:
    """A physical click on Re-arm, repeated until calls succeed again."""
    for attempt in range(1, 6):
        if not wait_until(lambda: desk.visible_window(PROMPT_TITLE), 10):
            raise RuntimeError("the re-arm prompt did not open")
        origin = desk.window_origin(PROMPT_TITLE)
        if origin is None:
            continue
        x, y = origin[0] + REARM_OFFSET[0], origin[1] + REARM_OFFSET[1]
        # The agent's drag moved the inner pointer; a move to where the outer pointer already
        # is would send Xephyr no motion, so step off the spot first.
        desk.physical("mousemove", str(x + 3), str(y + 3), "mousemove", str(x), str(y), "click", "1")
        for _ in range(100):
            if await code_of(session, "session-status") is None:
                clicks.append(attempt)
                return
            await anyio.sleep(0.02)
    raise RuntimeError("re-arm did not succeed after 5 physical clicks")


async def one_round(session, desk: Desk, copy, hold: Hold, measure: str, out: dict[str, list[float]]) -> None:
    held: dict = {}

    async def agent_holds() -> None:
        held["code"] = await code_of(session, hold.tool, hold.args)

    log_before = len(copy.log().splitlines())
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent_holds)
        if not await anyio.to_thread.run_sync(lambda: wait_until(lambda: hold.is_down(desk), 10)):
            raise RuntimeError(f"the agent's {hold.what} never went down")
        desk.physical("keydown", "ctrl+alt+shift")
        wall0, t0 = time.time(), time.perf_counter()
        result: dict[str, float] = {}

        async def chord() -> None:
            result["xdotool"] = await anyio.to_thread.run_sync(press_main_key, desk)

        tg.start_soon(chord)
        if measure == "refused":
            while await code_of(session, "session-status") != "emergency-stopped":
                pass
            out["refused"].append(time.perf_counter() - t0)
        else:
            out["released"].append(await anyio.to_thread.run_sync(poll_released, desk, hold) - t0)
    desk.physical("keyup", "s", "ctrl+alt+shift")
    out["xdotool"].append(result["xdotool"] - t0)
    if held.get("code") != "emergency-stopped":
        raise RuntimeError(f"the holding {hold.tool} answered {held.get('code')!r}, not emergency-stopped")
    if not wait_until(lambda: ENGAGED in "\n".join(copy.log().splitlines()[log_before:]), 10):
        raise RuntimeError("no engaged audit line")
    engaged = next(line for line in copy.log().splitlines()[log_before:] if ENGAGED in line)
    out["engaged"].append(log_time(engaged) - wall0)
    await rearm(session, desk, out["rearm clicks"])


async def bench(rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="mcec-bench-stop-") as tmp, Desk() as desk:
        copy = manual_copy(Path(tmp) / "c", settings="AgentCommandsEnabled = true\n", commands=("key", "drag"))
        out: dict[str, list] = {"refused": [], "released": [], "engaged": [], "xdotool": [], "rearm clicks": []}
        async with sdk_stdio(copy, {"DISPLAY": desk.inner}) as (session, _init):
            if await code_of(session, "session-status") is not None:
                raise RuntimeError("session-status fails before any stop")
            hold = await pick_hold(session)
            for i in range(2 * rounds):
                await one_round(session, desk, copy, hold, "refused" if i % 2 == 0 else "released", out)
        print(f"mcec: {mcec_e2e.BIN}; desk outer {desk.outer} inner {desk.inner}; {2 * rounds} presses")
        print(f"the agent holds: {hold.what}")
        report("key -> engaged audit line (log)", out["engaged"])
        report("key -> first refused call (SDK)", out["refused"])
        report("key -> held input up (xinput)", out["released"])
        report("xdotool keydown s run (included)", out["xdotool"])
        clicks = out["rearm clicks"]
        print(f"physical clicks per re-arm: mean {sum(clicks) / len(clicks):.2f}, max {max(clicks)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, help="the mcec binary (default target/debug/mcec)")
    parser.add_argument("--rounds", type=int, default=100, help="presses per measurement (default 100)")
    args = parser.parse_args()
    if args.bin:
        mcec_e2e.BIN = args.bin.resolve()
    anyio.run(bench, args.rounds)


if __name__ == "__main__":
    main()
