#!/usr/bin/env python3
"""Desktop tools side by side: mcec against the two servers a user would pick instead.

    .venv/bin/python bench/bench_desktop_peers.py [--mcec PATH] [--ccm PATH] [--cum PATH]
        [--iters 40] [--capture-iters 30] [--cold-runs 10] [--only mcec,ccm,cum] [--keep-images DIR]

One harness, one run, one Xvfb desk, one client (the official MCP Python SDK over stdio):
  * mcec            -- this repo (`mcec mcp` from a manual copy with the desktop tools enabled);
  * ccm             -- PyPI `computer-control-mcp` (PyAutoGUI + mss);
  * cum             -- npm `computer-use-mcp` (nut.js).

The peers are never installed into the repo. Point at them with flags or env vars:
  PEER_CCM_BIN  the `computer-control-mcp` console script
                (default /work/peers/venv/bin/computer-control-mcp; install with
                 `python3 -m venv /work/peers/venv && /work/peers/venv/bin/pip install computer-control-mcp`)
  PEER_CUM_JS   computer-use-mcp's dist/main.js, run with `node`
                (default /work/peers/npm/node_modules/computer-use-mcp/dist/main.js; install with
                 `npm install --prefix /work/peers/npm computer-use-mcp`)
A missing peer is skipped with a line saying how to install it, so the bench runs without them.

The desk is Xvfb 1280x800x24 (later restarted at 1920x1080 for the second capture size) made
busy: a colourful plasma background (ImageMagick) or a solid colour, two xterms, and
xeyes/xclock/xlogo when x11-apps is installed. Operations are interleaved round-robin across
the servers so load from other work on the machine spreads evenly over all of them.

At the end, mcec on its own with p50/p90/p99: `mouse move` and the default-size capture of
the 3840x2160 desk, each through the SDK and over a raw JSON-RPC pipe (`RawStdio`, no SDK:
the difference is the Python SDK's own cost per call).

Measured (p50/p90, ms): the cheapest call, full-screen capture at both sizes, click, type
"hello", key ctrl+a; cold start (spawn -> initialize result); peak RSS of each server's
process tree (VmHWM summed over the process and its descendants, from /proc). Each capture
is also checked: image size, distinct colours (1 = blank) and RMSE against a reference
grab of the root window taken with ImageMagick `import`. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from stats import pct  # noqa: E402
import mcec_e2e  # noqa: E402
from mcec_e2e import RawStdio, manual_copy, unwrap_groups  # noqa: E402
from xdesk import start_server  # noqa: E402

SMALL = (1280, 800)
LARGE = (1920, 1080)
# A point inside the target xterm (placed at +20+20, 90x28 cells), away from the other windows.
CLICK_AT = (300, 200)
OPS = ("cheapest", "capture", "capture-default", "capture-jpeg", "click", "type", "key", "scroll", "move")
# Captures measured again on the larger desks (mcec's default size only differs there).
CAPTURE_OPS = ("capture", "capture-default", "capture-jpeg")
HUGE = (3840, 2160)

# The issue's measured peer medians (computer-control-mcp, computer-use-mcp), for context.
ISSUE_REFERENCE = {
    "cheapest": ("11 ms", "3 ms"),
    "click": ("117 ms", "104 ms"),
    "type hello": ("121 ms", "68 ms"),
    "capture 1280x800": ("409 ms", "1442 ms (blank on X11)"),
    "cold start": ("2.5 s", "1.0 s"),
    "peak RSS": ("~200 MB", "~260 MB"),
}


# --------------------------------------------------------------------------- servers


@dataclass
class Server:
    """How to start one MCP server and how its tools map onto the benchmark's operations."""

    key: str
    label: str
    argv: list[str]
    env: dict[str, str]
    ops: dict[str, tuple[str, dict]]
    failed: Callable[[Any], bool]
    cwd: str | None = None
    iters_cap: int | None = None  # fewer iterations for slow servers, if asked
    tools: list[str] = field(default_factory=list)
    version: str = "?"  # serverInfo from initialize


def base_env(root: Path, display: str) -> dict[str, str]:
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(root / "xdg-config"),
        "XDG_STATE_HOME": str(root / "xdg-state"),
        "XDG_CACHE_HOME": str(root / "xdg-cache"),
        "LANG": "C.UTF-8",
        "DISPLAY": display,
    }


def text_blocks(result: Any) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


def is_error_flag(result: Any) -> bool:
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def mcec_failed(result: Any) -> bool:
    if is_error_flag(result):
        return True
    texts = text_blocks(result)
    try:
        return not json.loads(texts[-1]).get("ok", False)
    except (IndexError, ValueError):
        return True


def ccm_failed(result: Any) -> bool:
    # computer-control-mcp reports failures as a plain "Error ..." string result.
    return is_error_flag(result) or any(t.lstrip('"').startswith("Error") for t in text_blocks(result))


def cum_failed(result: Any) -> bool:
    return is_error_flag(result)


MCEC_COMMANDS = ("displays", "capture", "click", "type", "key", "scroll", "mouse")


def mcec_copy(binary: Path, dest: Path) -> mcec_e2e.Copy:
    mcec_e2e.BIN = binary
    return manual_copy(dest, settings="AgentCommandsEnabled = true\n", commands=MCEC_COMMANDS)


def make_mcec(binary: Path, root: Path, display: str) -> Server:
    copy = mcec_copy(binary, root / "mcec")
    env = copy.env(DISPLAY=display)
    x, y = CLICK_AT
    return Server(
        key="mcec",
        label="mcec",
        argv=[str(copy.exe), "mcp"],
        env=env,
        cwd=str(copy.root),
        ops={
            "cheapest": ("displays", {}),
            # PNG like the peers' (a default capture of the plasma desk would be JPEG).
            "capture": ("capture", {"full": True, "format": "png"}),
            "capture-default": ("capture", {}),
            "capture-jpeg": ("capture", {"format": "jpeg"}),
            "click": ("click", {"at": {"x": x, "y": y}}),
            "type": ("type", {"text": "hello"}),
            "key": ("key", {"keys": "ctrl+a"}),
            "scroll": ("scroll", {"at": {"x": x, "y": y}, "direction": "down", "notches": 1}),
            "move": ("mouse", {"action": "move", "at": {"x": x, "y": y}}),
        },
        failed=mcec_failed,
    )


def make_ccm(script: Path, root: Path, display: str) -> Server:
    x, y = CLICK_AT
    return Server(
        key="ccm",
        label="computer-control-mcp",
        argv=[str(script)],
        env=base_env(root / "ccm", display),
        ops={
            "cheapest": ("get_screen_size", {}),
            "capture": ("take_screenshot", {}),
            "click": ("click_screen", {"x": x, "y": y}),
            "type": ("type_text", {"text": "hello"}),
            "key": ("press_keys", {"keys": [["ctrl", "a"]]}),
            "move": ("move_mouse", {"x": x, "y": y}),
        },
        failed=ccm_failed,
    )


def make_cum(main_js: Path, root: Path, display: str) -> Server:
    x, y = CLICK_AT
    node = shutil.which("node") or "node"
    return Server(
        key="cum",
        label="computer-use-mcp",
        argv=[node, str(main_js)],
        env=base_env(root / "cum", display),
        ops={
            "cheapest": ("computer", {"action": "get_cursor_position"}),
            "capture": ("computer", {"action": "get_screenshot"}),
            "click": ("computer", {"action": "left_click", "coordinate": [x, y]}),
            "type": ("computer", {"action": "type", "text": "hello"}),
            "key": ("computer", {"action": "key", "text": "ctrl+a"}),
            "scroll": ("computer", {"action": "scroll", "coordinate": [x, y], "text": "down"}),
            "move": ("computer", {"action": "mouse_move", "coordinate": [x, y]}),
        },
        failed=cum_failed,
    )


# --------------------------------------------------------------------------- desk


def start_xvfb(size: tuple[int, int]) -> tuple[subprocess.Popen, str]:
    argv = ["Xvfb", "-screen", "0", f"{size[0]}x{size[1]}x24", "-nolisten", "tcp", "-noreset"]
    return start_server(argv, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")})


class Desk:
    """An Xvfb of one size with a busy desktop on it; everything it starts is killed by PID."""

    def __init__(self, size: tuple[int, int], work: Path) -> None:
        self.size = size
        self.work = work
        self.xvfb, self.display = start_xvfb(size)
        self.clients: list[subprocess.Popen] = []
        self.notes: list[str] = []
        self._dress()

    def _run(self, argv: list[str]) -> None:
        subprocess.run(argv, env=self.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)

    def _spawn(self, argv: list[str]) -> None:
        if shutil.which(argv[0]) is None:
            self.notes.append(f"{argv[0]} missing (apt-get install x11-apps), desk is less busy")
            return
        self.clients.append(
            subprocess.Popen(argv, env=self.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "DISPLAY": self.display, "HOME": str(self.work)}

    def _dress(self) -> None:
        w, h = self.size
        self._run(["xsetroot", "-solid", "#3a6ea5"])
        if shutil.which("convert") and shutil.which("display"):
            bg = self.work / f"plasma-{w}x{h}.png"
            if not bg.exists():
                self._run(["convert", "-seed", "7", "-size", f"{w}x{h}", "plasma:fractal", str(bg)])
            self._run(["display", "-window", "root", str(bg)])
        else:
            self.notes.append("ImageMagick missing: solid background only")
        self._spawn(["xterm", "-geometry", "90x28+20+20", "-e", "sh", "-c", "cat >/dev/null"])
        self._spawn(
            ["xterm", "-geometry", "80x24+700+60", "-e", "sh", "-c", "ls -l /usr/bin | head -40; exec sleep 100000"]
        )
        self._spawn(["xeyes", "-geometry", "200x150+760+500"])
        self._spawn(["xclock", "-update", "1", "-geometry", "180x180+1000+480"])
        self._spawn(["xlogo", "-geometry", "150x150+600+520"])
        time.sleep(1.5)  # let the windows map and draw before anyone captures

    def reference(self, path: Path) -> bool:
        if shutil.which("import") is None:
            return False
        self._run(["import", "-window", "root", str(path)])
        return path.exists()

    def close(self) -> None:
        for proc in [*self.clients, self.xvfb]:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)


# --------------------------------------------------------------------------- measuring helpers


def children_of(pid: int) -> set[int]:
    kids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # ppid is the 2nd field after the parenthesised command name.
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[1]) == pid:
            kids.add(int(entry.name))
    return kids


def tree_hwm_kib(pid: int) -> int:
    """VmHWM summed over a process and all its living descendants."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        todo.extend(children_of(p))
    return total


def image_of(result: Any) -> tuple[bytes, str] | None:
    for c in result.content:
        if getattr(c, "type", None) == "image":
            mime = getattr(c, "mime_type", None) or getattr(c, "mimeType", None) or "?"
            return base64.b64decode(c.data), mime
    return None


def check_image(data: bytes, mime: str, path: Path, reference: Path | None) -> str:
    """Size, distinct colours (1 = blank) and RMSE vs a reference grab, via ImageMagick."""
    path.write_bytes(data)
    if shutil.which("identify") is None:
        return f"{mime}, {len(data)} B (ImageMagick missing: content unchecked)"
    out = subprocess.run(
        ["identify", "-format", "%w %h %k", str(path)], capture_output=True, text=True, timeout=120
    ).stdout.split()
    if len(out) < 3:
        return f"{mime}, {len(data)} B, unreadable image"
    w, h, colours = out[0], out[1], int(out[2])
    # The busy desk has tens of thousands of colours; a handful means a blank grab with an
    # overlay drawn on it (computer-use-mcp draws its cursor crosshair on whatever it got).
    verdict = "BLANK" if colours <= 1 else "NEAR-BLANK" if colours < 256 else "not blank"
    text = f"{w}x{h} {mime.split('/')[-1]} {len(data) // 1024} KiB, {colours} colours ({verdict})"
    if reference is not None and reference.exists():
        cmp = subprocess.run(
            ["compare", "-metric", "RMSE", str(path), "(", str(reference), "-resize", f"{w}x{h}!", ")", "null:"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        # stderr reads like "1234.5 (0.0188)": the normalised value is in parentheses.
        norm = cmp.stderr.strip().rpartition("(")[2].rstrip(")")
        with contextlib.suppress(ValueError):
            text += f", RMSE vs root grab {float(norm):.3f}"
    return text


# --------------------------------------------------------------------------- sessions


class Live:
    """One connected SDK session to one server, with its process id."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.session: Any = None
        self.pid: int | None = None
        self.cold_s: float | None = None
        self.samples: dict[str, list[float]] = {}
        self.failures: dict[str, list[str]] = {}

    async def call(self, op: str) -> tuple[float, Any]:
        tool, args = self.server.ops[op]
        t0 = time.perf_counter()
        result = await self.session.call_tool(tool, args)
        return time.perf_counter() - t0, result


@contextlib.asynccontextmanager
async def connect(server: Server, errdir: Path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=server.argv[0], args=server.argv[1:], env=server.env, cwd=server.cwd)
    errdir.mkdir(parents=True, exist_ok=True)
    live = Live(server)
    before = children_of(os.getpid())
    with open(errdir / f"{server.key}-stderr.txt", "a") as errlog:
        t0 = time.perf_counter()
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                live.cold_s = time.perf_counter() - t0
                info = getattr(init, "server_info", None) or getattr(init, "serverInfo", None)
                server.version = f"{info.name} {info.version}" if info else "?"
                live.session = session
                new = children_of(os.getpid()) - before
                live.pid = min(new) if new else None
                yield live


async def cold_starts(server: Server, runs: int, errdir: Path) -> list[float]:
    samples = []
    for _ in range(runs):
        with unwrap_groups():
            async with connect(server, errdir) as live:
                samples.append(live.cold_s)
    return samples


async def measure_ops(
    lives: list[Live], ops: tuple[str, ...], iters: dict[str, int], warmup: int, out: Path, desk: Desk
) -> dict[str, str]:
    """Round-robin each op over all servers; returns the capture check per server."""
    checks: dict[str, str] = {}
    reference: Path | None = None
    for op in ops:
        n = iters[op]
        lives_with_op = [live for live in lives if op in live.server.ops]
        for live in lives_with_op:
            for _ in range(warmup):
                await live.call(op)
        if op == "capture":
            # Grabbed now, with every server connected, so overlays (mcec's activity banner)
            # are on screen both here and in the captures compared with it.
            ref = out / "root-grab.png"
            reference = ref if desk.reference(ref) else None
        for i in range(n):
            for live in lives_with_op:
                cap = live.server.iters_cap
                if cap is not None and op == "capture" and i >= cap:
                    continue
                dt, result = await live.call(op)
                live.samples.setdefault(op, []).append(dt)
                if live.server.failed(result):
                    live.failures.setdefault(op, []).append(" | ".join(text_blocks(result))[:300])
                if op == "capture" and i == 0:
                    img = image_of(result)
                    if img is None:
                        checks[live.server.key] = "no image block in the result"
                    else:
                        path = out / f"{live.server.key}-capture.{img[1].split('/')[-1]}"
                        checks[live.server.key] = check_image(img[0], img[1], path, reference)
        print(f"  measured {op} x{n}", flush=True)
    return checks


def raw_pipe_samples(binary: Path, root: Path, display: str, op: tuple[str, dict], n: int, warmup: int) -> list[float]:
    """`op` (tool, arguments) timed over a raw JSON-RPC pipe to `mcec mcp`, no SDK."""
    server = RawStdio(mcec_copy(binary, root / f"mcec-raw-{op[0]}-{time.monotonic_ns()}"),
                      env_extra={"DISPLAY": display})
    try:
        server.initialize()
        samples = []
        for i in range(warmup + n):
            t0 = time.perf_counter()
            resp = server.call(op[0], op[1], id=i)
            dt = time.perf_counter() - t0
            if resp["result"].get("isError"):
                raise AssertionError(f"raw {op[0]} failed: {resp}")
            if i >= warmup:
                samples.append(dt)
        return samples
    finally:
        server.kill()


def p50_90_99(samples: list[float]) -> str:
    return " / ".join(f"{pct(samples, p):.3f}" for p in (50, 90, 99)) + f" ms (n={len(samples)})"


# --------------------------------------------------------------------------- report


def fmt_ms(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v / 1000:.2f} s" if v >= 1000 else f"{v:.1f}"


def row(label: str, cells: list[str], widths: list[int]) -> str:
    return "  ".join([label.ljust(widths[0])] + [c.rjust(w) for c, w in zip(cells, widths[1:])])


def report(
    servers: list[Server], stats: dict[str, dict[str, tuple[float, float]]], rss: dict[str, dict[str, int]]
) -> None:
    keys = [s.key for s in servers]
    peers = [s for s in servers if s.key != "mcec"]
    header = ["p50 / p90"] * len(servers)
    widths = [24] + [22] * len(servers) + [14] * len(peers)
    print()
    print(row("", [s.label for s in servers] + [f"mcec/{s.key} p50" for s in peers], widths))
    print(row("operation", header + ["" for _ in peers], widths))
    rows = [
        ("cheapest call (ms)", "cheapest"),
        ("capture 1280x800 (ms)", "capture@small"),
        ("capture 1920x1080 (ms)", "capture@large"),
        ("default capture 1920x1080", "capture-default@large"),
        ("default capture 3840x2160", "capture-default@huge"),
        ("JPEG capture 1280x800", "capture-jpeg@small"),
        ("JPEG capture 1920x1080", "capture-jpeg@large"),
        ("click (ms)", "click"),
        ('type "hello" (ms)', "type"),
        ("key ctrl+a (ms)", "key"),
        ("scroll 1 notch (ms)", "scroll"),
        ("mouse move (ms)", "move"),
        ("cold start (ms)", "cold"),
    ]
    for label, name in rows:
        cells, mcec_p50 = [], stats.get("mcec", {}).get(name, (None, None))[0]
        for k in keys:
            p50, p90 = stats.get(k, {}).get(name, (None, None))
            cells.append("-" if p50 is None else f"{fmt_ms(p50)} / {fmt_ms(p90)}")
        for p in peers:
            peer_p50 = stats.get(p.key, {}).get(name, (None, None))[0]
            cells.append("-" if not (mcec_p50 and peer_p50) else f"{mcec_p50 / peer_p50:.3f}")
        print(row(label, cells, widths))
    for label, phase in (("peak RSS 1280x800 (MB)", "small"), ("peak RSS 1920x1080 (MB)", "large")):
        cells = []
        for k in keys:
            v = rss.get(k, {}).get(phase)
            cells.append("-" if v is None else f"{v / 1024:.1f}")
        m = rss.get("mcec", {}).get(phase)
        for p in peers:
            v = rss.get(p.key, {}).get(phase)
            cells.append("-" if not (m and v) else f"{m / v:.3f}")
        print(row(label, cells, widths))
    print("(ratio = mcec p50 / peer p50; below 1 means mcec is faster or smaller)")
    print()
    print("Issue's reference peer medians (computer-control-mcp, computer-use-mcp), measured elsewhere:")
    for name, (a, b) in ISSUE_REFERENCE.items():
        print(f"  {name:18} {a:>8}   {b}")


# --------------------------------------------------------------------------- main


def resolve_servers(args: argparse.Namespace, root: Path, display: str) -> tuple[list[Server], list[str]]:
    wanted = set(args.only.split(","))
    servers, skipped = [], []
    mcec_bin = Path(args.mcec)
    if "mcec" in wanted:
        if mcec_bin.is_file():
            servers.append(make_mcec(mcec_bin, root, display))
        else:
            skipped.append(f"mcec: skipped, no binary at {mcec_bin} (cargo build --release -p mcec, or --mcec PATH)")
    if "ccm" in wanted:
        ccm = Path(args.ccm)
        if ccm.is_file():
            s = make_ccm(ccm, root, display)
            s.iters_cap = args.peer_capture_iters
            servers.append(s)
        else:
            skipped.append(
                f"computer-control-mcp: skipped, not found at {ccm}. Install it outside the repo with "
                "`python3 -m venv /work/peers/venv && /work/peers/venv/bin/pip install computer-control-mcp` "
                "or point PEER_CCM_BIN / --ccm at its console script."
            )
    if "cum" in wanted:
        cum = Path(args.cum)
        if cum.is_file() and shutil.which("node"):
            s = make_cum(cum, root, display)
            s.iters_cap = args.peer_capture_iters
            servers.append(s)
        else:
            skipped.append(
                f"computer-use-mcp: skipped, {'node missing' if not shutil.which('node') else f'not found at {cum}'}. "
                "Install it outside the repo with `npm install --prefix /work/peers/npm computer-use-mcp` "
                "or point PEER_CUM_JS / --cum at its dist/main.js."
            )
    return servers, skipped


def with_display(server: Server, display: str) -> Server:
    env = dict(server.env)
    env["DISPLAY"] = display
    return Server(**{**server.__dict__, "env": env, "tools": list(server.tools)})


async def run_phase(
    servers: list[Server], desk: Desk, ops: tuple[str, ...], iters: dict[str, int], warmup: int, work: Path, tag: str
) -> tuple[dict[str, Live], dict[str, str], dict[str, int]]:
    """Connect all servers at once, measure `ops` round-robin, read RSS, disconnect."""
    lives: dict[str, Live] = {}
    rss: dict[str, int] = {}
    with unwrap_groups():
        async with contextlib.AsyncExitStack() as stack:
            for s in servers:
                try:
                    live = await stack.enter_async_context(connect(s, work / "stderr"))
                except Exception as e:  # a peer that cannot start must not sink the run
                    print(f"  {s.label}: could not start ({type(e).__name__}: {e}); see {work / 'stderr'}")
                    continue
                tools = await live.session.list_tools()
                s.tools = [t.name for t in tools.tools]
                missing = sorted(op for op, (t, _) in s.ops.items() if t not in s.tools)
                if missing:
                    print(f"  {s.label}: no tool for {', '.join(missing)}; those rows show '-'")
                    s.ops = {op: v for op, v in s.ops.items() if op not in missing}
                lives[s.key] = live
            checks = await measure_ops(list(lives.values()), ops, iters, warmup, work / tag, desk)
            for key, live in lives.items():
                if live.pid is not None:
                    rss[key] = tree_hwm_kib(live.pid)
    return lives, checks, rss


async def main_async(args: argparse.Namespace) -> int:
    for tool in ("Xvfb", "xsetroot", "xterm"):
        if shutil.which(tool) is None:
            print(f"{tool} is missing: apt-get install xvfb x11-xserver-utils xterm (x11-apps imagemagick optional)")
            return 2
    with tempfile.TemporaryDirectory(prefix="mcec-peers-") as tmp:
        work = Path(tmp)
        for sub in ("small", "large"):
            (work / sub).mkdir()
        desk = Desk(SMALL, work)
        try:
            servers, skipped = resolve_servers(args, work, desk.display)
            print(f"desk {SMALL[0]}x{SMALL[1]} on {desk.display}; " + ("; ".join(desk.notes) or "busy desktop up"))
            for line in skipped:
                print(line)
            if not servers:
                return 1
            iters = {op: args.capture_iters if op.startswith("capture") else args.iters for op in OPS}
            stats: dict[str, dict[str, tuple[float, float]]] = {s.key: {} for s in servers}
            rss: dict[str, dict[str, int]] = {s.key: {} for s in servers}

            print(f"cold start: {args.cold_runs} runs each")
            for s in servers:
                try:
                    cs = await cold_starts(s, args.cold_runs, work / "stderr")
                    stats[s.key]["cold"] = (pct(cs, 50), pct(cs, 90))
                except Exception as e:
                    print(f"  {s.label}: cold start failed ({type(e).__name__}: {e})")

            print(f"phase {SMALL[0]}x{SMALL[1]}: {', '.join(OPS)}")
            lives, checks_small, rss_small = await run_phase(
                servers, desk, OPS, iters, args.warmup, work, "small"
            )
            mcec_server = next((s for s in servers if s.key == "mcec"), None)
            raw_move: list[float] = []
            if mcec_server is not None and args.raw_move_iters:
                print(f"mcec mouse move over a raw pipe x{args.raw_move_iters}")
                raw_move = raw_pipe_samples(
                    Path(args.mcec), work, desk.display, mcec_server.ops["move"], args.raw_move_iters, 20
                )
        finally:
            desk.close()

        print("tool mapping (operation -> tool(arguments)):")
        for s in servers:
            print(f"  {s.label} ({s.version}, {' '.join(s.argv)}): offers {', '.join(s.tools) or '?'}")
            for op in OPS:
                if op in s.ops:
                    tool, a = s.ops[op]
                    print(f"    {op:15} -> {tool}({json.dumps(a)})")

        desk = Desk(LARGE, work)
        try:
            print(f"phase {LARGE[0]}x{LARGE[1]} on {desk.display}: {', '.join(CAPTURE_OPS)}")
            large_servers = [with_display(s, desk.display) for s in servers]
            lives_large, checks_large, rss_large = await run_phase(
                large_servers, desk, CAPTURE_OPS, iters, args.warmup, work, "large"
            )
        finally:
            desk.close()

        desk = Desk(HUGE, work)
        try:
            print(f"phase {HUGE[0]}x{HUGE[1]} on {desk.display}: capture-default (mcec only)")
            huge_servers = [with_display(s, desk.display) for s in servers if s.key == "mcec"]
            lives_huge, _, _ = await run_phase(huge_servers, desk, ("capture-default",), iters, args.warmup, work, "huge")
            raw_huge: list[float] = []
            if huge_servers and args.raw_move_iters:
                print(f"mcec default capture over a raw pipe x{args.capture_iters}")
                raw_huge = raw_pipe_samples(
                    Path(args.mcec), work, desk.display, huge_servers[0].ops["capture-default"], args.capture_iters, 3
                )
        finally:
            desk.close()

        for key, live in lives.items():
            for op, samples in live.samples.items():
                name = f"{op}@small" if op.startswith("capture") else op
                stats[key][name] = (pct(samples, 50), pct(samples, 90))
            rss[key]["small"] = rss_small.get(key)
        for tag, phase_lives in (("large", lives_large), ("huge", lives_huge)):
            for key, live in phase_lives.items():
                for op, samples in live.samples.items():
                    stats[key][f"{op}@{tag}"] = (pct(samples, 50), pct(samples, 90))
        for key in lives_large:
            rss[key]["large"] = rss_large.get(key)

        report(servers, stats, rss)
        print()
        if "mcec" in lives:
            print("mcec on its own, p50 / p90 / p99:")
            sdk_move = lives["mcec"].samples.get("move", [])
            if sdk_move:
                print(f"  mouse move, SDK         {p50_90_99(sdk_move)}")
            if raw_move:
                print(f"  mouse move, raw pipe    {p50_90_99(raw_move)}")
            huge = lives_huge.get("mcec")
            if huge and huge.samples.get("capture-default"):
                print(f"  default capture {HUGE[0]}x{HUGE[1]}, SDK       {p50_90_99(huge.samples['capture-default'])}")
            if raw_huge:
                print(f"  default capture {HUGE[0]}x{HUGE[1]}, raw pipe  {p50_90_99(raw_huge)}")
            print()
        print("capture check (first capture of each run; colours = distinct colours, 1 = blank;")
        print("RMSE = normalised difference to an ImageMagick grab of the root window, 0 = identical):")
        for s in servers:
            print(f"  {s.label:22} 1280x800: {checks_small.get(s.key, '-')}")
            print(f"  {'':22} 1920x1080: {checks_large.get(s.key, '-')}")
        if args.keep_images:
            keep = Path(args.keep_images)
            keep.mkdir(parents=True, exist_ok=True)
            for tag in ("small", "large"):
                for f in (work / tag).iterdir():
                    shutil.copy2(f, keep / f"{tag}-{f.name}")
            print(f"  captures and root grabs kept in {keep}")
        print()
        all_lives = [*lives.values(), *lives_large.values(), *lives_huge.values()]
        bad = [(lv.server.label, op, msgs) for lv in all_lives for op, msgs in lv.failures.items()]
        if bad:
            print("failed calls (counted in the timings):")
            for label, op, msgs in bad:
                print(f"  {label} {op}: {len(msgs)} failed, e.g. {msgs[0]!r}")
        else:
            print("failed calls: none")
    return 0


def main() -> int:
    default_mcec = os.environ.get("MCEC_BIN", str(REPO / "target" / "release" / "mcec"))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mcec", default=default_mcec, help="mcec binary (env MCEC_BIN; default target/release/mcec)")
    p.add_argument(
        "--ccm",
        default=os.environ.get("PEER_CCM_BIN", "/work/peers/venv/bin/computer-control-mcp"),
        help="computer-control-mcp console script (env PEER_CCM_BIN)",
    )
    p.add_argument(
        "--cum",
        default=os.environ.get("PEER_CUM_JS", "/work/peers/npm/node_modules/computer-use-mcp/dist/main.js"),
        help="computer-use-mcp dist/main.js (env PEER_CUM_JS)",
    )
    p.add_argument("--only", default="mcec,ccm,cum", help="comma list of mcec,ccm,cum")
    p.add_argument("--iters", type=int, default=40, help="timed calls per op and server")
    p.add_argument("--capture-iters", type=int, default=30, help="timed captures per size and server")
    p.add_argument("--peer-capture-iters", type=int, default=None, help="cap the peers' captures (slow peers)")
    p.add_argument("--warmup", type=int, default=3, help="untimed calls per op and server first")
    p.add_argument("--keep-images", default=None, metavar="DIR", help="copy the checked captures here")
    p.add_argument("--cold-runs", type=int, default=10, help="spawn -> initialize runs per server")
    p.add_argument(
        "--raw-move-iters", type=int, default=300, help="mcec mouse moves over a raw pipe (0: no raw-pipe rows)"
    )
    return asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
