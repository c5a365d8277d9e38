#!/usr/bin/env python3
"""The client's view: per-call cost of mcec and its peers through each official MCP SDK.

    .venv/bin/python bench/bench_sdk_clients.py [--mcec PATH] [--ccm PATH] [--cum PATH]
        [--python PY ...] [--ts-sdk DIR] [--rounds 3] [--iters 100] [--warmup 10]
        [--ops cheapest,move,capture]

An agent does not see a server's own latency but what its SDK adds on top: the official SDKs
validate every `tools/call` result against the tool's `outputSchema` (with their default
settings, as here). This bench puts the cheapest call and a pointer move of each server
(and with `--ops …,capture` a full-size PNG of the whole 1280x800 desk, whose result is the
largest a client checks) through each SDK in one sitting, on one busy Xvfb desk (1280x800, from bench_desktop_peers):
  * every `--python` interpreter (default: `/work/peers/venv113/bin/python` and
    `/work/peers/venv2/bin/python` when they exist, else this one) runs a worker with its own
    `mcp` package: `python3 -m venv /work/peers/venv113 && /work/peers/venv113/bin/pip install
    'mcp==1.13.*'`, and the same with the newest `mcp` in /work/peers/venv2;
  * the TypeScript SDK (`--ts-sdk`, the package directory; default
    /work/peers/ts/node_modules/@modelcontextprotocol/sdk, installed with `npm install
    --prefix /work/peers/ts @modelcontextprotocol/sdk`) runs `sdk_clients_worker.mjs` with node;
  * mcec over a raw JSON-RPC pipe (no SDK), for the server's own share.
Servers: mcec (a manual copy of `--mcec`, default target/release/mcec), computer-control-mcp
and computer-use-mcp where installed (see bench/README.md). Each round runs every worker
once, in turn; each worker connects to every server, warms up, then alternates the servers
call by call. p50/p90/p99 in ms over all rounds, each SDK's ratio of mcec's p50 to the
fastest peer's, and the machine's load average before and after. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(HERE))

from stats import pct  # noqa: E402

OPS = ("cheapest", "move")
KNOWN_OPS = ("cheapest", "move", "capture")
PEERS = Path("/work/peers")


# --------------------------------------------------------------------------- worker (any SDK's Python)


def failed(result) -> bool:
    if getattr(result, "is_error", None) or getattr(result, "isError", None):
        return True
    structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    return isinstance(structured, dict) and structured.get("ok") is False


async def worker(config: dict) -> dict:
    """Connect to every server with this interpreter's `mcp`, then time the ops round-robin."""
    import contextlib
    from importlib.metadata import version

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    samples: dict[str, dict[str, list[float]]] = {}
    failures: dict[str, int] = {}
    async with contextlib.AsyncExitStack() as stack:
        sessions = {}
        for s in config["servers"]:
            params = StdioServerParameters(command=s["argv"][0], args=s["argv"][1:], env=s["env"], cwd=s["cwd"])
            errlog = stack.enter_context(open(Path(config["errdir"]) / f"{s['key']}-py-stderr.txt", "a"))
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            await session.list_tools()
            sessions[s["key"]] = (session, s["ops"])
        for op in config["ops"]:
            for key, (session, ops) in sessions.items():
                for _ in range(config["warmup"]):
                    await session.call_tool(*ops[op])
            for _ in range(config["iters"]):
                for key, (session, ops) in sessions.items():
                    t0 = time.perf_counter()
                    result = await session.call_tool(*ops[op])
                    dt = time.perf_counter() - t0
                    samples.setdefault(key, {}).setdefault(op, []).append(dt)
                    if failed(result):
                        failures[f"{key} {op}"] = failures.get(f"{key} {op}", 0) + 1
    return {"sdk": f"python mcp {version('mcp')}", "samples": samples, "failures": failures}


# --------------------------------------------------------------------------- driver


def run_worker(argv: list[str], config_path: Path) -> dict:
    out = subprocess.run([*argv, str(config_path)], capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"{argv} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def raw_samples(binary: Path, root: Path, display: str, ops: dict, n: int, warmup: int) -> dict[str, list[float]]:
    from bench_desktop_peers import raw_pipe_samples

    return {op: raw_pipe_samples(binary, root, display, tuple(spec), n, warmup) for op, spec in ops.items()}


def row(samples: list[float]) -> str:
    return " / ".join(f"{pct(samples, p):7.2f}" for p in (50, 90, 99))


def default_pythons() -> list[str]:
    found = [str(p) for p in (PEERS / "venv113/bin/python", PEERS / "venv2/bin/python") if p.exists()]
    return found or [sys.executable]


def main() -> int:
    import bench_desktop_peers as peers

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mcec", type=Path, default=Path(os.environ.get("MCEC_BIN", REPO / "target/release/mcec")))
    ap.add_argument("--ccm", type=Path, default=Path(os.environ.get("PEER_CCM_BIN", PEERS / "venv/bin/computer-control-mcp")))
    ap.add_argument("--cum", type=Path, default=Path(os.environ.get(
        "PEER_CUM_JS", PEERS / "npm/node_modules/computer-use-mcp/dist/main.js")))
    ap.add_argument("--python", action="append", default=None, help="a Python with an `mcp` package (repeatable)")
    ap.add_argument("--ts-sdk", type=Path, default=PEERS / "ts/node_modules/@modelcontextprotocol/sdk")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=100, help="calls of each op per server per worker per round")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--ops", default=",".join(OPS), help=f"comma-separated, of {', '.join(KNOWN_OPS)}")
    args = ap.parse_args()
    chosen = tuple(op for op in args.ops.split(",") if op)
    unknown = [op for op in chosen if op not in KNOWN_OPS]
    if unknown or not chosen:
        ap.error(f"--ops: unknown {', '.join(unknown) or '(none given)'}; known: {', '.join(KNOWN_OPS)}")

    pythons = args.python or default_pythons()
    workers = [(f"py:{p}", [p, str(Path(__file__).resolve()), "--worker"]) for p in pythons]
    if (args.ts_sdk / "package.json").exists():
        workers.append(("ts", ["node", str(HERE / "sdk_clients_worker.mjs"), str(args.ts_sdk)]))
    else:
        print(f"TypeScript SDK not found at {args.ts_sdk}: `npm install --prefix /work/peers/ts @modelcontextprotocol/sdk`")

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="mcec-bench-sdk-") as tmp:
        root = Path(tmp)
        desk = peers.Desk(peers.SMALL, root)
        try:
            servers = [peers.make_mcec(args.mcec.resolve(), root, desk.display)]
            if args.ccm.exists():
                servers.append(peers.make_ccm(args.ccm, root, desk.display))
            else:
                print(f"computer-control-mcp not found at {args.ccm} (bench/README.md says how to install it)")
            if args.cum.exists():
                servers.append(peers.make_cum(args.cum, root, desk.display))
            else:
                print(f"computer-use-mcp not found at {args.cum} (bench/README.md says how to install it)")
            config = {
                "servers": [
                    {"key": s.key, "argv": s.argv, "env": s.env, "cwd": s.cwd,
                     "ops": {op: list(s.ops[op]) for op in chosen}}
                    for s in servers
                ],
                "ops": list(chosen),
                "iters": args.iters,
                "warmup": args.warmup,
                "errdir": str(root),
            }
            config_path = root / "config.json"
            config_path.write_text(json.dumps(config))
            results: dict[str, dict] = {}
            raw: dict[str, list[float]] = {}
            for r in range(args.rounds):
                for label, argv in workers:
                    got = run_worker(argv, config_path)
                    slot = results.setdefault(label, {"sdk": got["sdk"], "samples": {}, "failures": {}})
                    for key, ops in got["samples"].items():
                        for op, xs in ops.items():
                            slot["samples"].setdefault(key, {}).setdefault(op, []).extend(xs)
                    for k, n in got["failures"].items():
                        slot["failures"][k] = slot["failures"].get(k, 0) + n
                    print(f"  round {r + 1}: {got['sdk']} done", flush=True)
                for op, xs in raw_samples(args.mcec.resolve(), root / f"raw{r}", desk.display,
                                          config["servers"][0]["ops"], args.iters, args.warmup).items():
                    raw.setdefault(op, []).extend(xs)
        finally:
            desk.close()
    load_after = os.getloadavg()

    print()
    print(f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; {os.cpu_count()} CPUs; "
          f"{args.rounds} rounds x {args.iters} calls; mcec {args.mcec}")
    print(f"{'client':<22} {'server':<6} {'op':<9} {'p50 / p90 / p99 ms':>27}  mcec p50 / best peer p50")
    for label, slot in results.items():
        for op in chosen:
            best_peer = min((pct(ops[op], 50) for key, ops in slot["samples"].items() if key != "mcec"), default=None)
            for key, ops in slot["samples"].items():
                ratio = ""
                if key == "mcec" and best_peer:
                    ratio = f"{pct(ops[op], 50) / best_peer:.2f}x"
                print(f"{slot['sdk']:<22} {key:<6} {op:<9} {row(ops[op])}  {ratio}")
        for k, n in slot["failures"].items():
            print(f"{slot['sdk']:<22} FAILED {n} calls: {k}")
    for op in chosen:
        print(f"{'raw pipe (no SDK)':<22} {'mcec':<6} {op:<9} {row(raw[op])}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        print(json.dumps(asyncio.run(worker(json.loads(Path(sys.argv[2]).read_text())))))
        sys.exit(0)
    sys.exit(main())
