#!/usr/bin/env python3
"""Session provisioning benchmark, measured from outside like an agent or operator sees it.

    .venv/bin/python bench/bench_sessions.py [--bin PATH] [--runs 30] [--start-runs 10]
                                             [--stale 1000] [--full-copies 50]

Reports (p50/p90 in ms):
  * `provision-session` over MCP (official SDK, stdio, one operator server), with and
    without `mcpServer`; each session is ended (not timed) before the next call, and the
    `end-session` time is reported too;
  * provision -> the new copy's first answered `initialize`: stdio (spawn `<dir>/mcec mcp`,
    initialize over the pipe) and HTTP (spawn `<dir>/mcec`, poll its port, POST initialize
    with the bearer), each also split into provision and spawn -> initialize;
  * the reaper over `--stale` stale sessions: one session is provisioned with
    `mcec provision --json`, then its directory is cloned under fresh ids with backdated
    stamps (the executable hard-linked, since 1,000 real copies of a debug binary do not
    fit on most disks; the other files copied), and `mcec sessions reap` is timed from spawn
    to exit; a second, smaller run with `--full-copies` real copies of the executable shows
    what freeing the blocks costs. An empty-root `reap` gives the process start-up baseline.

The copy time is dominated by the size of the binary (the debug build is ~75 MB), so the
binary used is printed first. Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

from stats import pct  # noqa: E402
import mcec_e2e  # noqa: E402
from mcec_e2e import (  # noqa: E402
    INIT_PARAMS,
    Copy,
    RawStdio,
    backdate,
    manual_copy,
    raw_http,
    rpc,
    run_cli,
    sdk_envelope,
    sdk_stdio,
    session_copy,
    sessions_root,
    start_process,
    stop_process,
    wait_for_port,
)

SETTINGS = "AllowSessionProvisioning = true\n"
STALE_AGE_S = 13 * 3600


def row(name: str, samples: list[float]) -> str:
    return f"{name:<52} {len(samples):>5} {pct(samples, 50):10.1f} {pct(samples, 90):10.1f}"


# --------------------------------------------------------------------------- MCP provisioning


async def provision_times(op: Copy, runs: int, mcp_server: bool) -> tuple[list[float], list[float]]:
    """(provision-session times, end-session times) over one SDK stdio session."""
    prov, ends = [], []
    async with sdk_stdio(op) as (session, _):
        for _ in range(runs):
            t0 = time.perf_counter()
            env = sdk_envelope(await session.call_tool("provision-session", {"mcpServer": mcp_server}))
            prov.append(time.perf_counter() - t0)
            assert env["ok"], env
            h = env["result"]
            t0 = time.perf_counter()
            env = sdk_envelope(
                await session.call_tool("end-session", {"sessionId": h["sessionId"], "token": h["token"]})
            )
            ends.append(time.perf_counter() - t0)
            assert env["ok"] and env["result"]["removed"], env
    return prov, ends


async def first_initialize(op: Copy, runs: int, http: bool) -> tuple[list[float], list[float], list[float]]:
    """(provision -> initialize answered, provision alone, spawn -> initialize answered)."""
    total, prov, spawn = [], [], []
    async with sdk_stdio(op) as (session, _):
        for _ in range(runs):
            t0 = time.perf_counter()
            env = sdk_envelope(await session.call_tool("provision-session", {"mcpServer": http}))
            t1 = time.perf_counter()
            assert env["ok"], env
            h = env["result"]
            copy = session_copy(op, h)
            if http:
                proc, stderr_path = start_process(copy, [])
                try:
                    wait_for_port(proc, h["port"], "session copy")
                    body = json.dumps(rpc("initialize", INIT_PARAMS, id=1)).encode()
                    resp = raw_http(h["port"], body=body, headers={"Authorization": h["authorization"]})
                    t2 = time.perf_counter()
                    assert resp.status == 200, (resp.status, resp.body, stderr_path.read_text())
                finally:
                    stop_process(proc)
            else:
                server = RawStdio(copy)
                try:
                    server.send(rpc("initialize", INIT_PARAMS, id=1))
                    resp = server.response_to(1)
                    t2 = time.perf_counter()
                    assert resp["result"]["serverInfo"]["name"] == "mcec", resp
                finally:
                    server.kill()
            total.append(t2 - t0)
            prov.append(t1 - t0)
            spawn.append(t2 - t1)
            env = sdk_envelope(
                await session.call_tool("end-session", {"sessionId": h["sessionId"], "token": h["token"]})
            )
            assert env["ok"], env
    return total, prov, spawn


# --------------------------------------------------------------------------- reaper


def clone_stale(template: Path, count: int, link_exe: bool) -> None:
    """`count` copies of a session directory under fresh ids, backdated past the reap age."""
    root = template.parent
    made = 0
    while made < count:
        dest = root / secrets.token_hex(6)
        if dest.exists():
            continue
        dest.mkdir(mode=0o700)
        for entry in template.iterdir():
            target = dest / entry.name
            if entry.name == "mcec" and link_exe:
                os.link(entry, target)
            else:
                shutil.copy2(entry, target)
        backdate(dest, STALE_AGE_S)
        made += 1


def timed_reap(op: Copy) -> tuple[float, dict]:
    t0 = time.perf_counter()
    code, out, err = run_cli(op, ["sessions", "reap", "--json"])
    dt = time.perf_counter() - t0
    assert code == 0, err
    return dt, json.loads(out)


def reaper_run(root: Path, name: str, count: int, link_exe: bool) -> tuple[float, int]:
    op = manual_copy(root / name, settings=SETTINGS)
    code, out, err = run_cli(op, ["provision", "--json", "--no-mcp-server"])
    assert code == 0, err
    template = Path(json.loads(out)["directory"])
    clone_stale(template, count - 1, link_exe)
    backdate(template, STALE_AGE_S)
    dt, report = timed_reap(op)
    assert len(report["removed"]) == count and not report["errors"], {k: len(v) for k, v in report.items()}
    left = [p for p in sessions_root(op).iterdir() if p.name != ".mcec-sessions.lock"]
    assert not left, left[:5]
    return dt, len(report["removed"])


def main() -> int:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.environ.get("MCEC_BIN"), help="mcec binary (default: target/debug/mcec)")
    parser.add_argument("--runs", type=int, default=30, help="provisions per mcpServer setting")
    parser.add_argument("--start-runs", type=int, default=10, help="provision -> initialize runs per transport")
    parser.add_argument("--stale", type=int, default=1000, help="stale sessions for the reaper run")
    parser.add_argument("--full-copies", type=int, default=50, help="stale sessions with real exe copies")
    args = parser.parse_args()
    if args.bin:
        mcec_e2e.BIN = Path(args.bin).resolve()
    elif (release := mcec_e2e.REPO / "target" / "release" / "mcec").is_file():
        mcec_e2e.BIN = release
    print(f"binary: {mcec_e2e.BIN} ({mcec_e2e.BIN.stat().st_size / 1e6:.1f} MB)")

    with tempfile.TemporaryDirectory(prefix="mcec-bench-sessions-") as tmp:
        root = Path(tmp)
        op = manual_copy(root / "op", settings=SETTINGS)
        prov_http, end_http = anyio.run(provision_times, op, args.runs, True)
        prov_stdio, end_stdio = anyio.run(provision_times, op, args.runs, False)
        start_stdio = anyio.run(first_initialize, op, args.start_runs, False)
        start_http = anyio.run(first_initialize, op, args.start_runs, True)

        empty = manual_copy(root / "empty", settings=SETTINGS)
        baseline = [timed_reap(empty)[0] for _ in range(10)]
        reap_linked, n_linked = reaper_run(root, "linked", args.stale, link_exe=True)
        reap_full, n_full = reaper_run(root, "full", args.full_copies, link_exe=False)

    print()
    print(f"{'measurement (ms)':<52} {'n':>5} {'p50':>10} {'p90':>10}")
    print("-" * 80)
    print(row("provision-session (mcpServer=true)", prov_http))
    print(row("provision-session (mcpServer=false)", prov_stdio))
    print(row("end-session (stopped copy, after mcpServer=true)", end_http))
    print(row("end-session (stopped copy, after mcpServer=false)", end_stdio))
    print(row("stdio: provision -> first initialize answered", start_stdio[0]))
    print(row("   provision part", start_stdio[1]))
    print(row("   spawn `<dir>/mcec mcp` -> initialize answered", start_stdio[2]))
    print(row("HTTP: provision -> first initialize answered", start_http[0]))
    print(row("   provision part", start_http[1]))
    print(row("   spawn `<dir>/mcec` -> port -> initialize answered", start_http[2]))
    print(row("`mcec sessions reap`, empty root (start-up baseline)", baseline))
    print()
    print(f"reaper over {n_linked} stale sessions (exe hard-linked): {reap_linked * 1000:.0f} ms "
          f"({reap_linked / n_linked * 1e6:.0f} us/session incl. start-up)")
    print(f"reaper over {n_full} stale sessions (exe really copied): {reap_full * 1000:.0f} ms "
          f"({reap_full / n_full * 1e3:.2f} ms/session incl. start-up)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
