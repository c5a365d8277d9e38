#!/usr/bin/env python3
"""Front-door benchmark: how fast mcec answers, measured from outside like a client sees it.

    .venv/bin/python bench/bench_front_door.py [--bin PATH] [--cold-runs 20] [--calls 500]

Reports:
  * cold start: spawn `mcec mcp` -> `initialize` result received (p50/p90);
  * round trip of the cheap `session-status` tool over stdio and over HTTP (p50/p90/p99),
    both with the official MCP Python SDK (one session / one HTTP connection) and with a
    minimal raw client, so the SDK's own overhead can be told apart from the server's;
  * peak RSS (VmHWM) of the stdio server and of the HTTP host at the end of their runs.

Every run uses a fresh manual copy of the binary in a temp dir (settings beside it), no
DISPLAY, and its own free port. The numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
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
    RawStdio,
    free_port,
    host_settings,
    manual_copy,
    rpc,
    sdk_envelope,
    sdk_http,
    sdk_stdio,
    start_host,
)

SETTINGS = "AgentCommandsEnabled = true\n"


def vm_hwm_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


# --------------------------------------------------------------------------- measurements


def cold_start(root: Path, runs: int) -> list[float]:
    copy = manual_copy(root / "cold", settings=SETTINGS)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        server = RawStdio(copy)
        try:
            server.send(rpc("initialize", INIT_PARAMS, id=1))
            resp = server.response_to(1)
            samples.append(time.perf_counter() - t0)
            assert resp["result"]["serverInfo"]["name"] == "mcec"
        finally:
            server.kill()
    return samples


def stdio_raw(root: Path, calls: int) -> tuple[list[float], int | None]:
    copy = manual_copy(root / "stdio-raw", settings=SETTINGS)
    server = RawStdio(copy)
    try:
        server.initialize()
        samples = []
        for i in range(calls + 20):
            t0 = time.perf_counter()
            resp = server.call("session-status", {}, id=i)
            dt = time.perf_counter() - t0
            assert not resp["result"].get("isError"), resp
            if i >= 20:
                samples.append(dt)
        return samples, vm_hwm_kib(server.proc.pid)
    finally:
        server.kill()


async def time_status_calls(session, calls: int, warmup: int = 20) -> list[float]:
    """Round trips of `session-status`, in seconds, after `warmup` untimed calls."""
    samples = []
    for i in range(calls + warmup):
        t0 = time.perf_counter()
        result = await session.call_tool("session-status", {})
        dt = time.perf_counter() - t0
        assert sdk_envelope(result)["ok"], result
        if i >= warmup:
            samples.append(dt)
    return samples


async def stdio_sdk(root: Path, calls: int) -> list[float]:
    copy = manual_copy(root / "stdio-sdk", settings=SETTINGS)
    async with sdk_stdio(copy) as (session, _):
        return await time_status_calls(session, calls)


async def http_sdk(url: str, headers: dict[str, str], calls: int) -> list[float]:
    async with sdk_http(url, headers) as (session, _):
        return await time_status_calls(session, calls)


def http_raw(port: int, headers: dict[str, str], calls: int) -> list[float]:
    """One keep-alive connection, http.client, no SDK."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    all_headers = {**mcec_e2e.MCP_HEADERS, **headers}
    samples = []
    try:
        for i in range(calls + 20):
            body = json.dumps(rpc("tools/call", {"name": "session-status", "arguments": {}}, id=i)).encode()
            t0 = time.perf_counter()
            conn.request("POST", "/mcp", body=body, headers=all_headers)
            resp = conn.getresponse()
            data = resp.read()
            dt = time.perf_counter() - t0
            assert resp.status == 200, (resp.status, data)
            if i >= 20:
                samples.append(dt)
    finally:
        conn.close()
    return samples


# --------------------------------------------------------------------------- report


def row(name: str, samples: list[float], with_p99: bool = True) -> str:
    p99 = f"{pct(samples, 99):9.3f}" if with_p99 else f"{'-':>9}"
    return f"{name:<42} {len(samples):>5} {pct(samples, 50):9.3f} {pct(samples, 90):9.3f} {p99}"


def main() -> int:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.environ.get("MCEC_BIN"), help="mcec binary (default: target/debug/mcec)")
    parser.add_argument("--cold-runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    if args.bin:
        mcec_e2e.BIN = Path(args.bin).resolve()
    print(f"binary: {mcec_e2e.BIN} ({mcec_e2e.BIN.stat().st_size / 1e6:.1f} MB)")

    with tempfile.TemporaryDirectory(prefix="mcec-bench-") as tmp:
        root = Path(tmp)
        cold = cold_start(root, args.cold_runs)
        raw_stdio_samples, stdio_hwm = stdio_raw(root, args.calls)
        sdk_stdio_samples = anyio.run(stdio_sdk, root, args.calls)

        port = free_port()
        token = "bench" + os.urandom(16).hex()
        host_copy = manual_copy(root / "host", settings=host_settings(port, token))
        host = start_host(host_copy, port, token)
        try:
            sdk_http_samples = anyio.run(http_sdk, host.url, host.auth_headers(), args.calls)
            raw_http_samples = http_raw(port, host.auth_headers(), args.calls)
            host_hwm = vm_hwm_kib(host.proc.pid)
        finally:
            host.stop()

    print()
    print(f"{'measurement (ms)':<42} {'n':>5} {'p50':>9} {'p90':>9} {'p99':>9}")
    print("-" * 78)
    print(row("cold start: spawn -> initialize result", cold, with_p99=False))
    print(row("session-status over stdio (SDK)", sdk_stdio_samples))
    print(row("session-status over stdio (raw pipe)", raw_stdio_samples))
    print(row("session-status over HTTP (SDK)", sdk_http_samples))
    print(row("session-status over HTTP (raw keep-alive)", raw_http_samples))
    print()
    print(f"peak RSS (VmHWM) of `mcec mcp` after {args.calls + 20} calls: {fmt_kib(stdio_hwm)}")
    print(f"peak RSS (VmHWM) of the HTTP host after {2 * (args.calls + 20)} calls: {fmt_kib(host_hwm)}")
    return 0


def fmt_kib(kib: int | None) -> str:
    return "unknown" if kib is None else f"{kib / 1024:.1f} MiB ({kib} KiB)"


if __name__ == "__main__":
    sys.exit(main())
