#!/usr/bin/env python3
"""Accessibility, text and OCR benchmark, measured through the official MCP Python SDK.

    cargo build -p mcec            # or --release, with --bin target/release/mcec
    dbus-run-session -- .venv/bin/python bench/bench_a11y.py [--bin PATH] [--runs 30]

A real `mcec mcp` on a 1280x800 Xvfb with an AT-SPI2 bus of its own (at-spi2-core's bus
launcher on the D-Bus session the script runs in) and the project's GTK 3 test app
(tests/e2e/a11y_app.py). Each call is timed from the SDK's `call_tool` to its answer:

  * query list window   - `query` of the window with the 1,000-row list (maxElements 5000, depth 64)
  * find in list window - `find` of its one button ("List action") by name: every element's name
                          is compared (the app filters nothing), all 1,008 of them
  * find list + role    - the same with `role: push-button`, which the app filters itself
  * find in main window - `find` of "Press me" in the smaller main window
  * invoke              - `invoke` (press) of "Press me" by element id
  * get-text a11y       - `get-text` of the label, from the accessibility tree
  * get-text OCR screen - `get-text` of the whole 1280x800 screen by OCR (Tesseract CLI)

Numbers are printed (p50/p90/p99), never asserted. The side-by-side run of `computer-use-linux`
(crates.io) is not in this script yet.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

import mcec_e2e  # noqa: E402
from a11y_desk import AccessibilityBus, App, bus_env  # noqa: E402
from mcec_e2e import manual_copy, sdk_envelope, sdk_stdio  # noqa: E402
from stats import pct  # noqa: E402
from xdesk import start_server, stop_server  # noqa: E402

COMMANDS = ("query", "find", "invoke", "get-text", "windows")


def report(name: str, samples: list[float]) -> None:
    print(
        f"{name:<24} n={len(samples):<4} p50={pct(samples, 50):8.2f} ms  p90={pct(samples, 90):8.2f} ms  "
        f"p99={pct(samples, 99):8.2f} ms"
    )


async def timed(session, tool: str, args: dict, runs: int) -> tuple[list[float], dict]:
    samples, last = [], {}
    for _ in range(runs):
        t0 = time.perf_counter()
        result = await session.call_tool(tool, args)
        samples.append(time.perf_counter() - t0)
        last = sdk_envelope(result)
        if not last["ok"]:
            raise SystemExit(f"{tool} {args} failed: {last['error']}")
    return samples, last


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.environ.get("MCEC_BIN"))
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cases", default="", help="comma-separated name prefixes to run (default: all)")
    args = parser.parse_args()
    if args.bin:
        mcec_e2e.BIN = Path(args.bin)
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        raise SystemExit("run it under dbus-run-session (see the docstring)")
    server, display = start_server(["Xvfb", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"],
                                   {"PATH": os.environ.get("PATH", "")})
    bus = AccessibilityBus(display)
    app = App.test_app(display)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            copy = manual_copy(Path(tmp) / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)
            extra = {k: v for k, v in bus_env(display).items() if k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
            async with sdk_stdio(copy, env_extra=extra) as (s, _init):
                print(f"mcec {mcec_e2e.BIN}, {args.runs} runs each, 1280x800 Xvfb {display}")
                wanted = [c for c in args.cases.split(",") if c]

                def on(name: str) -> bool:
                    return not wanted or any(name.startswith(c) for c in wanted)

                if on("query"):
                    samples, last = await timed(s, "query", {"window": "mcec a11y list", "maxElements": 5000,
                                                             "depth": 64}, args.runs)
                    report("query list window", samples)
                    print(f"{'':<24} ({last['result']['count']} elements, cut: {last['result'].get('cut')})")
                if on("find"):
                    report("find in list window", (await timed(s, "find", {"window": "mcec a11y list",
                                                                           "value": "List action"}, args.runs))[0])
                    report("find list + role", (await timed(s, "find", {"window": "mcec a11y list", "value": "List action",
                                                                        "role": "push-button"}, args.runs))[0])
                samples, last = await timed(s, "find", {"window": "mcec a11y main", "value": "Press me"}, args.runs)
                if on("find"):
                    report("find in main window", samples)
                element = last["result"]["element"]["elementId"]
                if on("invoke"):
                    report("invoke", (await timed(s, "invoke", {"elementId": element}, args.runs))[0])
                if on("get-text"):
                    report("get-text a11y", (await timed(s, "get-text", {"window": "mcec a11y main",
                                                                         "value": "Hello accessible world"},
                                                         args.runs))[0])
                    samples, last = await timed(s, "get-text", {"region": {"x": 0, "y": 0, "width": 1280,
                                                                           "height": 800}, "source": "ocr"}, args.runs)
                    report("get-text OCR screen", samples)
                    print(f"{'':<24} ({len(last['result']['words'])} words read)")
    finally:
        app.close()
        bus.close()
        stop_server(server)


if __name__ == "__main__":
    anyio.run(main)
