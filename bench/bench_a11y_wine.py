#!/usr/bin/env python3
"""`find` and `invoke` under Wine (MSAA) against the same calls on Linux (AT-SPI2), through
the official MCP Python SDK.

    cargo build -p mcec && scripts/windows-build
    dbus-run-session -- .venv/bin/python bench/bench_a11y_wine.py [--linux PATH] [--runs 60] [--warmup 3]

Two servers, each a fresh manual copy over stdio, calls round-robin (one of each per round, so
load hits both alike), warm-up calls untimed:

  * linux - `mcec mcp` on a 1280x800 Xvfb with an AT-SPI2 bus of its own and the project's GTK 3
            test app (tests/e2e/a11y_app.py, bench/bench_a11y.py's app), window "mcec a11y main";
  * wine  - `mcec.exe mcp` under Wine on its own Xvfb (tests/windows/wine_desk.py, a fresh
            prefix) with the project's Win32 test program `mcec-controls TITLE X Y own`: standard
            controls (Wine's `oleacc` proxies) and a panel serving its own `IAccessible`.

Timed from the SDK's `call_tool` to its answer:

  * find by name   - Linux "Press me"; Wine "Apply" (the program's own object) and "OK" (a
                     standard button): every element's name is compared (no filtering by the app);
  * invoke by id   - the same elements by element id: Linux AT-SPI2's `DoAction`; Wine "Apply"
                     `accDoDefaultAction` across processes, "OK" `BM_CLICK` (Wine's proxy offers
                     no default action).

`query` of each window first says how many elements a walk of it sees (the size of what `find`
compares). Load (`uptime`) is printed at the start and the end. Numbers are printed (p50 /
p90 / p99, ms), never asserted; a failed call ends the run. Debug builds by default (`--linux`
or MCEC_BIN for the Linux binary, MCEC_WINDOWS_BIN_DIR for the `.exe` files).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests" / "windows"))

from stats import pct  # noqa: E402
from wine_desk import WineDesk  # noqa: E402  (first: it puts tests/e2e on the path)
import mcec_e2e  # noqa: E402
from a11y_desk import AccessibilityBus, App, bus_env  # noqa: E402
from mcec_e2e import manual_copy, sdk_envelope, sdk_stdio  # noqa: E402
from test_a11y_wine import Controls  # noqa: E402
from test_mcec_wine import wine_copy  # noqa: E402
from xdesk import start_server, stop_server  # noqa: E402

COMMANDS = ("query", "find", "invoke")
LINUX_WINDOW = "mcec a11y main"
WINE_WINDOW = "mcec a11y bench"
#: (side, element name): each is found by name, then invoked by its element id.
CASES = [("linux", "Press me"), ("wine", "Apply"), ("wine", "OK")]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


async def call(session, tool: str, args: dict) -> tuple[float, dict]:
    t0 = time.perf_counter()
    result = await session.call_tool(tool, args)
    dt = time.perf_counter() - t0
    envelope = sdk_envelope(result)
    if not envelope["ok"]:
        raise SystemExit(f"{tool} {args} failed: {envelope['error']}")
    return dt, envelope


def three(samples: list[float]) -> str:
    return " / ".join(f"{pct(samples, p):.2f}" for p in (50, 90, 99))


async def bench(args: argparse.Namespace) -> None:
    mcec_e2e.BIN = Path(args.linux).resolve()
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        raise SystemExit("run it under dbus-run-session (see the docstring)")
    print(f"load at start: {uptime()}")
    xvfb, display = start_server(["Xvfb", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"],
                                 {"PATH": os.environ.get("PATH", "")})
    with contextlib.ExitStack() as stack:
        stack.callback(stop_server, xvfb)
        bus = AccessibilityBus(display)
        stack.callback(bus.close)
        app = App.test_app(display)
        stack.callback(app.close)
        desk = stack.enter_context(WineDesk())
        target = Controls(desk, WINE_WINDOW, "own")
        stack.callback(target.close)
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mcec-a11y-wine-")))
        linux_copy = manual_copy(work / "linux", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)
        wine = wine_copy(desk, work / "wine", "AgentCommandsEnabled = true\n", COMMANDS)
        extra = {k: v for k, v in bus_env(display).items() if k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
        print(f"linux: {mcec_e2e.BIN} on Xvfb {display} (AT-SPI2); wine: {wine.config_dir / 'mcec.exe'} "
              f"on Xvfb {desk.display} (MSAA)")
        async with sdk_stdio(linux_copy, env_extra=extra) as (linux, _), sdk_stdio(wine) as (wine_session, _):
            sessions = {"linux": linux, "wine": wine_session}
            windows = {"linux": LINUX_WINDOW, "wine": WINE_WINDOW}
            for side in ("linux", "wine"):
                _, q = await call(sessions[side], "query", {"window": windows[side], "maxElements": 5000})
                print(f"{side}: {windows[side]!r} has {q['result']['count']} elements (query)")
            rows: list[tuple[str, str, str, dict]] = []
            for side, name in CASES:
                args_find = {"window": windows[side], "by": "name", "value": name}
                _, found = await call(sessions[side], "find", args_find)
                element = found["result"]["element"]["elementId"]
                rows.append((f"find {name!r}", side, "find", args_find))
                rows.append((f"invoke {name!r} by id", side, "invoke", {"elementId": element}))
            samples: dict[tuple[str, str], list[float]] = {(r[0], r[1]): [] for r in rows}
            # find, then invoke, each round-robin over its rows.
            for tool in ("find", "invoke"):
                mine = [r for r in rows if r[2] == tool]
                for _ in range(args.warmup):
                    for _, side, t, a in mine:
                        await call(sessions[side], t, a)
                for _ in range(args.runs):
                    for label, side, t, a in mine:
                        dt, _ = await call(sessions[side], t, a)
                        samples[(label, side)].append(dt)
    print(f"load at end: {uptime()}")
    print()
    print(f"n = {args.runs} per row (after {args.warmup} untimed), ms through the SDK")
    print(f"{'call':28} {'side':6} {'p50 / p90 / p99':>26}")
    for (label, side), s in samples.items():
        print(f"{label:28} {side:6} {three(s):>26}")
    for tool in ("find", "invoke"):
        linux_p50 = [pct(s, 50) for (l, side), s in samples.items() if side == "linux" and l.startswith(tool)]
        for (label, side), s in samples.items():
            if side == "wine" and label.startswith(tool) and linux_p50:
                print(f"{label} under Wine / Linux p50: {pct(s, 50) / linux_p50[0]:.1f}x")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--linux", default=os.environ.get("MCEC_BIN", str(REPO / "target" / "debug" / "mcec")),
                   help="the Linux mcec (env MCEC_BIN; default target/debug/mcec)")
    p.add_argument("--runs", type=int, default=60, help="timed calls per row")
    p.add_argument("--warmup", type=int, default=3, help="untimed calls per row first")
    anyio.run(bench, p.parse_args())


if __name__ == "__main__":
    main()
