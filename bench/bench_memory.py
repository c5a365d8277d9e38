#!/usr/bin/env python3
"""Peak memory of `mcec mcp` over a whole scripted session, next to the peers'.

    cargo build --release -p mcec
    .venv/bin/python bench/bench_memory.py [--bin PATH] [--calls 30] [--ccm PATH] [--cum PATH] [--smaps] [--host]

The session, on an Xvfb + Xephyr desk (tests/e2e/xdesk.py) with an xterm to act on: connect
with the official MCP Python SDK, `--calls` calls of every desktop tool (displays, windows,
capture full and default, click, drag, scroll, mouse, wait, type, key, window, focus, record,
send_command; the activity banner is on screen while they run), then the operator's physical
chord (the red banner and the re-arm prompt open), then a physical click on Re-arm, and a
last call that must succeed. After each phase it prints VmRSS and VmHWM (the kernel's peak
resident set) of the `mcec mcp` process; `--smaps` also prints /proc/PID/smaps_rollup and the
largest mappings by resident size, to see where the memory goes; `--trace` prints, in the first
two rounds, each call after which the peak rose, to see which call sets it.

The peers (PyPI computer-control-mcp, npm computer-use-mcp; see bench/README.md) get the same
number of calls of each of their desktop tools on the same desk, and their VmHWM summed over
their process tree. They have no stop, so their session is the calls alone. A missing peer is
skipped with a line saying how to install it. `--host` also measures the host (`mcec`, its
windows painted on the CPU like `mcec mcp`'s) with its Settings window open. Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))
sys.path.insert(0, str(HERE))

import mcec_e2e  # noqa: E402
from bench_desktop_peers import children_of, connect, make_ccm, make_cum, tree_hwm_kib  # noqa: E402
from mcec_e2e import manual_copy, sdk_stdio  # noqa: E402
from xdesk import Desk, wait_until  # noqa: E402

PROMPT_TITLE = "mcec: emergency stop"
REARM_OFFSET = (41, 130)  # as in tests/e2e/test_emergency_stop.py
TARGET_CLASS = "BenchTarget"
AT = {"x": 300, "y": 200}
COMMANDS = (
    "displays", "windows", "capture", "click", "drag", "scroll", "mouse", "wait", "type", "key",
    "window", "focus", "record", "send_command", "send_command.chars", "send_command.key",
    "send_command.mouse",
)  # fmt: skip
CALLS: list[tuple[str, dict]] = [
    ("displays", {}),
    ("windows", {}),
    ("capture", {"full": True}),
    ("capture", {}),
    ("click", {"at": AT}),
    ("drag", {"from": AT, "to": {"x": 340, "y": 220}}),
    ("scroll", {"at": AT, "direction": "down", "notches": 1}),
    ("mouse", {"action": "move", "at": AT}),
    ("wait", {"ms": 1}),
    ("type", {"text": "hello"}),
    ("key", {"keys": "ctrl+a"}),
    ("window", {"action": "move", "className": TARGET_CLASS, "x": 10, "y": 10}),
    ("focus", {"className": TARGET_CLASS}),
    ("record", {"action": "oneshot", "durationMs": 200}),
    ("send_command", {"command": "chars: hi"}),
]
PEER_OPS = ("cheapest", "capture", "click", "type", "key", "scroll", "move")


def status_kib(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
            out[key] = int(rest.split()[0])
    return out


def show(phase: str, pid: int) -> None:
    s = status_kib(pid)
    print(
        f"  {phase:<28} VmRSS {s['VmRSS'] / 1024:6.1f} MB  VmHWM {s['VmHWM'] / 1024:6.1f} MB"
        f"  (anon {s['RssAnon'] / 1024:.1f}, file {s['RssFile'] / 1024:.1f}, shmem {s['RssShmem'] / 1024:.1f})",
        flush=True,
    )


def smaps(pid: int, top: int = 12) -> None:
    print(Path(f"/proc/{pid}/smaps_rollup").read_text().strip())
    by_name: dict[str, int] = {}
    name = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and not head[0].endswith(":"):
            name = head[5] if len(head) > 5 else "[anon]"
        elif head and head[0] == "Rss:":
            by_name[name] = by_name.get(name, 0) + int(head[1])
    print(f"  largest mappings by Rss (top {top}):")
    for n, kib in sorted(by_name.items(), key=lambda kv: -kv[1])[:top]:
        print(f"    {kib / 1024:7.1f} MB  {n}")


def mcec_pid(before: set[int]) -> int:
    new = children_of(os.getpid()) - before
    if not new:
        raise RuntimeError("no mcec process found")
    return min(new)


async def checked(session: Any, tool: str, args: dict) -> dict:
    result = await session.call_tool(tool, args)
    return json.loads(result.content[-1].text)


async def mcec_session(desk: Desk, root: Path, calls: int, want_smaps: bool, trace: bool = False) -> int:
    copy = manual_copy(root / "mcec", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)
    before = children_of(os.getpid())
    async with sdk_stdio(copy, {"DISPLAY": desk.inner}) as (session, _init):
        pid = mcec_pid(before)
        show("connected", pid)
        failures: dict[str, str] = {}
        for round_no in range(calls):
            for tool, args in CALLS:
                peak = status_kib(pid)["VmHWM"]
                env = await checked(session, tool, args)
                if not env["ok"]:
                    failures.setdefault(tool, json.dumps(env["error"])[:200])
                if trace and round_no < 2 and status_kib(pid)["VmHWM"] > peak:
                    show(f"  after {tool} {json.dumps(args)[:20]}", pid)
        for tool, why in failures.items():
            print(f"  FAILED {tool}: {why}")
        show(f"{calls} x {len(CALLS)} calls", pid)
        desk.physical("key", "ctrl+alt+shift+s")
        if not wait_until(lambda: desk.visible_window(PROMPT_TITLE), 10):
            raise RuntimeError("the re-arm prompt did not open")
        env = await checked(session, "displays", {})
        if env["ok"] or env["error"]["code"] != "emergency-stopped":
            raise RuntimeError(f"not stopped after the chord: {env}")
        show("stopped (banner + prompt)", pid)
        for _attempt in range(5):
            origin = desk.window_origin(PROMPT_TITLE)
            if origin is None:
                break
            x, y = origin[0] + REARM_OFFSET[0], origin[1] + REARM_OFFSET[1]
            desk.physical("mousemove", str(x + 3), str(y + 3), "mousemove", str(x), str(y), "click", "1")
            if wait_until(lambda: not desk.visible_window(PROMPT_TITLE), 5):
                break
        env = await checked(session, "displays", {})
        if not env["ok"]:
            raise RuntimeError(f"not re-armed after a physical click: {env}")
        show("re-armed", pid)
        if want_smaps:
            smaps(pid)
        return status_kib(pid)["VmHWM"]


def host_with_settings(desk: Desk, root: Path) -> int:
    """VmHWM of the host (`mcec`) with its Settings window open."""
    from test_agent_tab import SETTINGS, open_agent_tab

    copy = manual_copy(root / "host", settings=SETTINGS)
    proc, _ = mcec_e2e.start_process(copy, [], env_extra={"DISPLAY": desk.inner})
    try:
        open_agent_tab(desk)
        time.sleep(1.0)
        show("host, Settings open", proc.pid)
        return status_kib(proc.pid)["VmHWM"]
    finally:
        mcec_e2e.stop_process(proc)


async def peer_session(server: Any, root: Path, calls: int) -> int:
    async with connect(server, root / "peer-logs") as live:
        if live.pid is None:
            raise RuntimeError(f"no process for {server.label}")
        for _ in range(calls):
            for op in PEER_OPS:
                if op in server.ops:
                    await live.call(op)
        return tree_hwm_kib(live.pid)


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="mcec-bench-mem-") as tmp, Desk() as desk:
        root = Path(tmp)
        term = subprocess.Popen(
            ["xterm", "-class", TARGET_CLASS, "-geometry", "80x24+20+20"],
            env={**os.environ, "DISPLAY": desk.inner},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until(lambda: bool(desk.window_ids("")) and bool(desk._xdotool(desk.inner, ("search", "--class", TARGET_CLASS), ok=(0, 1)).split()), 10)
            print(f"mcec: {mcec_e2e.BIN}; desk outer {desk.outer} inner {desk.inner}")
            rows = [("mcec mcp", await mcec_session(desk, root, args.calls, args.smaps, args.trace))]
            if args.host:
                rows.append(("mcec host, Settings open", host_with_settings(desk, root)))
            for key, path, make, hint in (
                ("ccm", args.ccm, make_ccm, "pip install computer-control-mcp (see bench/README.md)"),
                ("cum", args.cum, make_cum, "npm install computer-use-mcp (see bench/README.md)"),
            ):
                if not path.exists():
                    print(f"  {key}: skipped, {path} is missing: {hint}")
                    continue
                server = make(path, root, desk.inner)
                t0 = time.perf_counter()
                rows.append((server.label, await peer_session(server, root, args.calls)))
                print(f"  {server.label}: {time.perf_counter() - t0:.1f} s", flush=True)
        finally:
            term.kill()
            term.wait()
    print(f"\npeak RSS (VmHWM, MB) over the session, {args.calls} calls of each desktop tool:")
    mine = rows[0][1]
    for label, kib in rows:
        ratio = "" if label.startswith("mcec") else f"  ({kib / mine:.1f}x mcec mcp)"
        print(f"  {label:<24} {kib / 1024:7.1f}{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, help="the mcec binary (default target/release/mcec)")
    parser.add_argument("--calls", type=int, default=30, help="calls of each desktop tool (default 30)")
    parser.add_argument("--smaps", action="store_true", help="print smaps_rollup and the largest mappings")
    parser.add_argument("--trace", action="store_true", help="print each call of the first two rounds that raised the peak")
    parser.add_argument("--host", action="store_true", help="also the host `mcec` with its Settings window open")
    parser.add_argument(
        "--ccm", type=Path, default=Path(os.environ.get("PEER_CCM_BIN", "/work/peers/venv/bin/computer-control-mcp"))
    )
    parser.add_argument(
        "--cum",
        type=Path,
        default=Path(os.environ.get("PEER_CUM_JS", "/work/peers/npm/node_modules/computer-use-mcp/dist/main.js")),
    )
    args = parser.parse_args()
    default = HERE.parent / "target" / "release" / "mcec"
    mcec_e2e.BIN = (args.bin or default).resolve()
    anyio.run(bench, args)


if __name__ == "__main__":
    main()
