#!/usr/bin/env python3
"""Consent and live-reload latencies, measured from outside.

    cargo build -p mcec -p mcec-desktop-x11 --bins
    .venv/bin/python bench/bench_consent.py [--bin PATH] [--reloads 30] [--grants 17]

  * reload - a real `mcec mcp` (no display) with an SDK client connected; the bench rewrites
             `mcec.commands` (enabling and disabling `displays` in turn); t0 just before the
             write (made at a random moment, out of step with mcec's polling), t1 when the client
             receives `notifications/tools/list_changed`. mcec looks at the files every 500 ms,
             so this spreads over 0-500 ms.
  * grant  - `mcec mcp` on an Xvfb + Xephyr desk; each round asks `request-command-access` for
             a command not yet granted, waits for the consent prompt to be drawn, then clicks
             `Allow` with "physical" input (xdotool on the outer display). t0 just before
             xdotool starts, t1 when the `granted` answer arrives: xdotool, the toolkit, the
             60 ms mcec gives the provenance monitor to log the press, the verdict, the answer.

Numbers are printed (p50/p90/p99/max), never asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

import mcec_e2e  # noqa: E402
import test_consent as tc  # noqa: E402
from mcec_e2e import manual_copy  # noqa: E402
from xdesk import Desk  # noqa: E402

REQUESTABLE = [
    "displays", "windows", "click", "drag", "scroll", "mouse", "wait", "type", "key", "window",
    "focus", "launch", "record", "send_command", "send_command.chars", "send_command.key",
    "send_command.mouse",
]


def percentiles(label: str, samples: list[float]) -> None:
    s = sorted(samples)

    def at(p: float) -> float:
        return s[min(len(s) - 1, int(round(p * (len(s) - 1))))]

    print(
        f"{label}: n={len(s)} p50={at(0.5):.1f} ms p90={at(0.9):.1f} ms p99={at(0.99):.1f} ms max={s[-1]:.1f} ms"
    )


async def reloads(root: Path, rounds: int) -> list[float]:
    copy = manual_copy(root / "reload", settings="AgentCommandsEnabled = true\n", commands=("capture",))
    out = []
    async with tc.agent(copy, None) as c:
        for i in range(rounds):
            seen = len(c.changes)
            names = ("capture", "displays") if i % 2 == 0 else ("capture",)
            # Out of step with mcec's 500 ms look at the files, so every phase is sampled.
            await anyio.sleep(random.uniform(0.0, 0.5))
            t0 = time.perf_counter()
            copy.enable_commands(*names)
            assert await tc.until(lambda: len(c.changes) > seen, timeout=10), "no tools/list_changed"
            out.append((time.perf_counter() - t0) * 1000)
    return out


async def grants(root: Path, rounds: int) -> list[float]:
    copy = manual_copy(root / "grant", settings="AgentCommandsEnabled = true\n", commands=("capture",))
    out = []
    with Desk() as desk:
        async with tc.agent(copy, desk.inner) as c:
            for name in REQUESTABLE[:rounds]:
                req = tc.Request(c, [name], "bench")
                t0 = 0.0
                async with anyio.create_task_group() as tg:
                    tg.start_soon(req.run)
                    allow = await tc.button(desk, tc.ALLOW_OFFSET)
                    t0 = time.perf_counter()
                    desk.physical("mousemove", *allow, "click", "1")
                assert req.answer is not None and req.answer["ok"], json.dumps(req.answer)
                out.append((time.perf_counter() - t0) * 1000)
                assert await tc.until(lambda: not desk.visible_window(tc.TITLE))
    return out


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", help="mcec binary (default: MCEC_BIN or target/debug/mcec)")
    parser.add_argument("--reloads", type=int, default=30)
    parser.add_argument("--grants", type=int, default=len(REQUESTABLE))
    args = parser.parse_args()
    if args.bin:
        mcec_e2e.BIN = Path(args.bin)
    with tempfile.TemporaryDirectory() as tmp:
        percentiles("reload: write -> tools/list_changed", await reloads(Path(tmp), args.reloads))
        if args.grants > 0:
            percentiles(
                "grant: physical Allow click -> granted answer",
                await grants(Path(tmp), min(args.grants, len(REQUESTABLE))),
            )


if __name__ == "__main__":
    anyio.run(main)
