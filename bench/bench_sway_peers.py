#!/usr/bin/env python3
"""The peer bench rows on sway (issue 27): mcec's sway backend against the X11-only peers, and
against mcec on X11, in one sitting.

    .venv/bin/python bench/bench_sway_peers.py [--mcec PATH] [--ccm PATH] [--cum PATH]
        [--rounds 4] [--iters 15] [--capture-iters 5] [--cold-runs 10]
        [--only mcec-sway,ccm,cum,mcec-x11] [--session-type wayland|tty] [--keep-images DIR] [--keep-stderr DIR]

One sway desk (`tests/e2e/swaydesk.py`: sway 1.7 on a 1280x800 Xvfb with `WLR_BACKENDS=x11`,
its output set to 1280x800, the plasma background of `bench_desktop_peers.py` through swaybg)
with two Wayland-native windows floating where that bench's xterms are: the target, a `foot`
with a magenta background whose shell writes every key it gets to a file
(`stty -icanon -echo; cat > FILE`), and a `foot` listing /usr/bin beside it. sway also runs its
XWayland (`xwayland force`), which is what an X11-only program in a sway session gets. Servers,
each driven by the official MCP Python SDK over stdio:
  * mcec-sway -- `mcec mcp` in the sway session (`WAYLAND_DISPLAY`, `SWAYSOCK`, `DISPLAY` =
                 the XWayland, where its banner goes): the sway backend;
  * ccm, cum  -- computer-control-mcp and computer-use-mcp (see bench_desktop_peers.py for
                 where they are installed), X11-only, given the same session with the XWayland
                 as their `DISPLAY` (and `XDG_SESSION_TYPE=wayland`, as a display manager sets
                 it; `--session-type tty` is sway started from a console);
  * mcec-x11  -- `mcec mcp` on a plain 1280x800 Xvfb dressed as bench_desktop_peers.py's
                 desk (plasma, two xterms, x11-apps): mcec on X11, same machine, same sitting.

First, for each server on the sway desk, what its calls do there (nothing asserted): a click on
the target while the other window has the focus (does sway move the focus to it?), `type
"hello"` into the focused target (does the text reach its file?), and the first full-screen
capture (size, distinct colours, blank or not, RMSE against a grab of the Xvfb under sway, which
shows sway's output, and the mean colour over the target's rectangle: magenta if the target
window is in the picture). Then the rows of bench_desktop_peers.py, timed in interleaved rounds
(each round runs every operation, the servers alternating call by call, the servers' order
rotating by round): the cheapest call, mouse move, click on the target, type "hello", key
ctrl+a, full-screen capture (mcec with `full: true` and PNG, like the peers'); cold start (spawn
-> `initialize` result, the servers alternating run by run) and peak RSS (VmHWM summed over each
server's process tree). p50 / p90 / p99 in ms, and the load average before, between and after.
The first answer of each operation is printed for the peers ("what each answers").
Run it with `nice` on a quiet machine (`uptime`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(HERE))

import bench_desktop_peers as peers  # noqa: E402
from bench_desktop_peers import Live, Server, check_image, connect, image_of, text_blocks, tree_hwm_kib  # noqa: E402
from mcec_e2e import unwrap_groups  # noqa: E402
from stats import pct  # noqa: E402
from swaydesk import SwayDesk, views  # noqa: E402

SIZE = peers.SMALL
OPS = ("cheapest", "move", "click", "type", "key", "capture")
ALL = ("mcec-sway", "ccm", "cum", "mcec-x11")
TARGET_ID = "mcec-bench-target"
OTHER_ID = "mcec-bench-other"
#: Where the two windows float (x, y, width, height): bench_desktop_peers' two xterms.
TARGET_RECT = (20, 20, 544, 368)
OTHER_RECT = (700, 60, 484, 316)
MAGENTA = "ff00ff"
#: Hang guards for the effect checks (how long a click or text may take to show), not timings.
EFFECT_GUARD_S = 2.0
CALL_GUARD_S = 30.0
START_GUARD_S = 60.0


# --------------------------------------------------------------------------- the sway desk


def sway_config(background: Path) -> str:
    w, h = SIZE
    return f"output X11-1 resolution {w}x{h} position 0 0 bg {background} fill\n"


def plasma(work: Path) -> Path:
    """bench_desktop_peers' background, readable by sway's user."""
    w, h = SIZE
    path = work / f"plasma-{w}x{h}.png"
    subprocess.run(["convert", "-seed", "7", "-size", f"{w}x{h}", "plasma:fractal", str(path)], check=True, timeout=120)
    os.chmod(path, 0o644)
    return path


def until(what: str, f) -> Any:
    deadline = time.monotonic() + START_GUARD_S
    while not (got := f()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return got


def view_of(sway: SwayDesk, app_id: str) -> dict | None:
    return next((v for v in views(sway.tree()) if v.get("app_id") == app_id), None)


def placed(sway: SwayDesk, app_id: str, rect: tuple[int, int, int, int]) -> dict | None:
    """The window's view once it floats at `rect`; until then, asks sway to put it there (foot
    may commit its own size after a rule's resize, so this repeats)."""
    v = view_of(sway, app_id)
    if v is None:
        return None
    r = v["rect"]
    if (r["x"], r["y"], r["width"], r["height"]) == rect:
        return v
    x, y, w, h = rect
    sway.swaymsg(f'[app_id="{app_id}"] floating enable, resize set {w} px {h} px, move position {x} px {y} px')
    time.sleep(0.2)
    return None


def focused_app(sway: SwayDesk) -> str | None:
    return next((v.get("app_id") for v in views(sway.tree()) if v.get("focused")), None)


class SwayWindows:
    """The target and the other window on the sway desk."""

    def __init__(self, sway: SwayDesk) -> None:
        self.sway = sway
        self.typed = sway.runtime_dir / "typed"
        self.procs = [
            sway.wayland_client(
                "foot", "--app-id", TARGET_ID, "--override", f"colors.background={MAGENTA}",
                "sh", "-c", f"stty -icanon -echo min 1; exec cat > {self.typed}",
            ),
            sway.wayland_client(
                "foot", "--app-id", OTHER_ID, "sh", "-c", "ls -l /usr/bin | head -60; exec sleep 100000"
            ),
        ]
        try:
            self.target = until("the target window", lambda: placed(sway, TARGET_ID, TARGET_RECT))
            self.other = until("the other window", lambda: placed(sway, OTHER_ID, OTHER_RECT))
            until("the target's file", self.typed.exists)
        except BaseException:
            print(f"windows: {[(v.get('app_id'), v['rect']) for v in views(sway.tree())]}")
            self.close()
            raise

    def focus(self, view: dict) -> None:
        self.sway.swaymsg(f"[con_id={view['id']}] focus")
        until("the focus", lambda: focused_app(self.sway) == view["app_id"])

    def close(self) -> None:
        for p in self.procs:
            p.kill()
            p.wait(timeout=10)


def target_centre() -> tuple[int, int]:
    x, y, w, h = TARGET_RECT
    return x + w // 2, y + h // 2


def root_grab(display: str, path: Path) -> Path | None:
    """The X root window of `display` (on the Xvfb under sway: sway's output)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "DISPLAY": display}
    subprocess.run(["import", "-window", "root", str(path)], env=env, capture_output=True, timeout=60)
    return path if path.exists() else None


def mean_colour(path: Path, rect: tuple[int, int, int, int]) -> str:
    """Mean colour over `rect` (screen pixels, scaled to the image's size) and a verdict."""
    out = subprocess.run(["identify", "-format", "%w %h", str(path)], capture_output=True, text=True, timeout=60)
    try:
        w, h = (int(v) for v in out.stdout.split()[:2])
    except ValueError:
        return "unreadable"
    sx, sy = w / SIZE[0], h / SIZE[1]
    x, y, rw, rh = rect
    crop = f"{max(1, int(rw * sx))}x{max(1, int(rh * sy))}+{int(x * sx)}+{int(y * sy)}"
    fmt = "%[fx:int(255*r)] %[fx:int(255*g)] %[fx:int(255*b)]"
    got = subprocess.run(
        ["convert", str(path), "-crop", crop, "+repage", "-scale", "1x1!", "-format", fmt, "info:"],
        capture_output=True, text=True, timeout=60,
    ).stdout.split()
    try:
        r, g, b = (int(v) for v in got)
    except ValueError:
        return "unreadable"
    verdict = "the target window is in it" if r > 200 and g < 80 and b > 200 else "NO target window"
    return f"mean over the target's rectangle rgb({r},{g},{b}): {verdict}"


# --------------------------------------------------------------------------- servers


def aim(server: Server, x: int, y: int) -> None:
    """Points the server's click and move at (x, y)."""
    ops = server.ops
    if server.label.startswith("mcec"):
        ops["click"] = ("click", {"at": {"x": x, "y": y}})
        ops["move"] = ("mouse", {"action": "move", "at": {"x": x, "y": y}})
    elif server.key == "ccm":
        ops["click"] = ("click_screen", {"x": x, "y": y})
        ops["move"] = ("move_mouse", {"x": x, "y": y})
    else:
        ops["click"] = ("computer", {"action": "left_click", "coordinate": [x, y]})
        ops["move"] = ("computer", {"action": "mouse_move", "coordinate": [x, y]})


def session_env(sway: SwayDesk, session_type: str) -> dict[str, str]:
    """What a program started in the sway session sees, with sway's XWayland as its X display."""
    return {
        "DISPLAY": sway.xwayland_display,
        "WAYLAND_DISPLAY": sway.wayland_display,
        "SWAYSOCK": sway.swaysock,
        "XDG_RUNTIME_DIR": str(sway.runtime_dir),
        "XDG_SESSION_TYPE": session_type,
    }


def make_servers(
    args: argparse.Namespace, work: Path, sway: SwayDesk, x11_display: str
) -> tuple[list[Server], list[str]]:
    wanted = set(args.only.split(","))
    servers: list[Server] = []
    skipped: list[str] = []
    target = target_centre()
    binary = Path(args.mcec).resolve()
    if not binary.is_file():
        skipped.append(f"mcec: no binary at {binary} (cargo build --release -p mcec, or --mcec PATH)")
    for key in ("mcec-sway", "mcec-x11"):
        if key not in wanted or not binary.is_file():
            continue
        on_sway = key == "mcec-sway"
        s = peers.make_mcec(binary, work / key, sway.xwayland_display if on_sway else x11_display)
        s.key, s.label = key, "mcec on sway" if on_sway else "mcec on X11"
        s.ops = {op: s.ops[op] for op in OPS}
        if on_sway:
            s.env.update(session_env(sway, args.session_type))
            aim(s, *target)
        servers.append(s)
    for key, path, make in (("ccm", Path(args.ccm), peers.make_ccm), ("cum", Path(args.cum), peers.make_cum)):
        if key not in wanted:
            continue
        if not path.is_file() or (key == "cum" and shutil.which("node") is None):
            skipped.append(f"{key}: not found at {path} (bench/README.md says how to install it)")
            continue
        s = make(path, work, sway.xwayland_display)
        s.env.update(session_env(sway, args.session_type))
        s.label += " (XWayland)"
        s.ops = {op: v for op, v in s.ops.items() if op in OPS}
        aim(s, *target)
        servers.append(s)
    order = {k: i for i, k in enumerate(ALL)}
    servers.sort(key=lambda s: order[s.key])
    return servers, skipped


# --------------------------------------------------------------------------- measuring


def load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.2f} {b:.2f} {c:.2f}"


def first_answer(result: Any) -> str:
    if result is None:
        return "(no answer)"
    texts = " | ".join(text_blocks(result)).replace("\n", " ")
    images = [c for c in result.content if getattr(c, "type", None) == "image"]
    shown = texts[:160] + ("…" if len(texts) > 160 else "")
    return (shown or "(no text)") + (f" + {len(images)} image(s)" if images else "")


class Conn:
    """One server's SDK session in an asyncio task of its own, fed one operation at a time: the
    SDK's task groups and cancel scopes live in that task, so a server that dies or hangs
    breaks its own task only, never the bench's."""

    def __init__(self, server: Server, errdir: Path) -> None:
        self.server = server
        self.live: Live | None = None
        self._queue: asyncio.Queue = asyncio.Queue()
        self._pending: asyncio.Future | None = None
        self._ready: asyncio.Future = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._run(errdir))

    async def _run(self, errdir: Path) -> None:
        try:
            async with connect(self.server, errdir) as live:
                self.live = live
                self._ready.set_result(None)
                while True:
                    op, fut = await self._queue.get()
                    if op is None:
                        return
                    self._pending = fut
                    with anyio.fail_after(CALL_GUARD_S):
                        got = await live.call(op)
                    self._pending = None
                    fut.set_result(got)
        except BaseException as e:  # noqa: BLE001 -- whatever ended the session ends only it
            while isinstance(e, BaseExceptionGroup):  # the SDK's task groups wrap the cause
                e = e.exceptions[0]
            why = f"no answer within {CALL_GUARD_S:.0f} s" if isinstance(e, TimeoutError) else f"{type(e).__name__}: {e}"
            for fut in (self._ready, self._pending):
                if fut is not None and not fut.done():
                    fut.set_exception(RuntimeError(why))

    async def ready(self) -> None:
        await self._ready

    async def call(self, op: str) -> tuple[float, Any]:
        fut = asyncio.get_running_loop().create_future()
        if self._task.done():
            raise RuntimeError("the session had already ended")
        await self._queue.put((op, fut))
        done, _ = await asyncio.wait({fut, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if not fut.done():
            raise RuntimeError("the session ended")
        return fut.result()

    async def close(self) -> None:
        if not self._task.done():
            await self._queue.put((None, None))
        with contextlib.suppress(BaseException):
            await self._task


class Pool:
    """The connected servers. A call that breaks its server (the process died, or no answer
    within CALL_GUARD_S) is recorded in `broken` and the server is started afresh; an operation
    that broke it twice is not asked of it again, so one fatal operation does not cost the
    server's other rows (the second try rules out a state left by an earlier call)."""

    def __init__(self, servers: list[Server], errdir: Path) -> None:
        self.servers = {s.key: s for s in servers}
        self.errdir = errdir
        self.lives: dict[str, Conn] = {}
        self.broken: dict[str, dict[str, list[str]]] = {}
        self.samples: dict[str, dict[str, list[float]]] = {s.key: {} for s in servers}
        self.failures: dict[str, dict[str, list[str]]] = {s.key: {} for s in servers}
        self.answers: dict[str, dict[str, str]] = {s.key: {} for s in servers}
        self.rss: dict[str, int] = {}

    async def start(self, key: str) -> None:
        conn = Conn(self.servers[key], self.errdir)
        try:
            await conn.ready()
        except Exception as e:  # a peer that cannot start must not sink the run
            print(f"  {self.servers[key].label}: could not start ({e})")
            await conn.close()
            return
        self.lives[key] = conn

    def _note_rss(self, key: str) -> None:
        live = self.lives[key].live
        if live is not None and live.pid is not None:
            self.rss[key] = max(self.rss.get(key, 0), tree_hwm_kib(live.pid))

    def can(self, key: str, op: str) -> bool:
        return key in self.lives and op in self.servers[key].ops and len(self.broken.get(key, {}).get(op, [])) < 2

    async def call(self, key: str, op: str) -> tuple[float, Any]:
        """(seconds, result); result None when the call broke the server."""
        conn = self.lives[key]
        try:
            dt, result = await conn.call(op)
        except Exception as e:
            why = f"{e}"
            self.broken.setdefault(key, {}).setdefault(op, []).append(why)
            self.answers[key].setdefault(op, f"(broke the server: {why})")
            print(f"  {self.servers[key].label}: {op} broke it ({why}); starting it afresh", flush=True)
            self._note_rss(key)
            del self.lives[key]
            await conn.close()
            await self.start(key)
            return 0.0, None
        self.answers[key].setdefault(op, first_answer(result))
        return dt, result

    async def timed(self, key: str, op: str) -> None:
        dt, result = await self.call(key, op)
        if result is None:
            return
        self.samples[key].setdefault(op, []).append(dt)
        if self.servers[key].failed(result):
            self.failures[key].setdefault(op, []).append(first_answer(result))

    async def close(self) -> None:
        for key in list(self.lives):
            self._note_rss(key)
            await self.lives.pop(key).close()


async def effects(pool: Pool, key: str, sway: SwayDesk, wins: SwayWindows) -> dict[str, str]:
    """What one sway-side server's click and type do to the target window."""
    out: dict[str, str] = {}
    failed = pool.servers[key].failed
    wins.focus(wins.other)
    _, result = await pool.call(key, "click")
    deadline = time.monotonic() + EFFECT_GUARD_S
    while focused_app(sway) != TARGET_ID and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    moved = focused_app(sway) == TARGET_ID
    out["click"] = "focused the target" if moved else f"the focus stayed on {focused_app(sway)}"
    if result is None or failed(result):
        out["click"] += f" (failed: {first_answer(result)})"
    if not pool.can(key, "type"):
        return out
    wins.focus(wins.target)
    before = wins.typed.stat().st_size
    _, result = await pool.call(key, "type")
    deadline = time.monotonic() + EFFECT_GUARD_S
    got = b""
    while b"hello" not in got and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        got = wins.typed.read_bytes()[before:]
    out["type"] = "reached the target" if b"hello" in got else f"nothing reached the target ({got!r})"
    if result is None or failed(result):
        out["type"] += f" (failed: {first_answer(result)})"
    return out


async def capture_check(pool: Pool, key: str, out: Path, reference: Path | None, on_sway: bool) -> str:
    _, result = await pool.call(key, "capture")
    img = None if result is None else image_of(result)
    if img is None:
        return f"no image: {first_answer(result) if result is not None else pool.answers[key]['capture']}"
    path = out / f"{key}-capture.{img[1].split('/')[-1]}"
    text = check_image(img[0], img[1], path, reference)
    if on_sway:
        text += "; " + mean_colour(path, TARGET_RECT)
    return text


async def cold_starts(servers: list[Server], runs: int, errdir: Path) -> dict[str, list[float]]:
    got: dict[str, list[float]] = {s.key: [] for s in servers}
    for _ in range(runs):
        for s in servers:
            try:
                with unwrap_groups():
                    async with connect(s, errdir) as live:
                        got[s.key].append(live.cold_s)
            except Exception as e:  # a peer that cannot start must not sink the run
                print(f"  {s.label}: cold start failed ({type(e).__name__}: {e})")
    return got


async def timed_rounds(pool: Pool, rounds: int, iters: int, capture_iters: int, warmup: int) -> None:
    keys = list(pool.servers)
    for op in OPS:
        for key in keys:
            for _ in range(warmup if op != "capture" else 1):
                if pool.can(key, op):
                    await pool.call(key, op)
    for r in range(rounds):
        k = r % len(keys)
        order = keys[k:] + keys[:k]
        for op in OPS:
            for _ in range(capture_iters if op == "capture" else iters):
                for key in order:
                    if pool.can(key, op):
                        await pool.timed(key, op)
        print(f"  round {r + 1}/{rounds} done, load {load()}", flush=True)


# --------------------------------------------------------------------------- report


def cell(samples: list[float], failed: int, broke: int) -> str:
    """p50 / p90 / p99; `error` when every call failed; `breaks it` when none answered."""
    if not samples:
        return "breaks it" if broke else "-"
    text = " / ".join(peers.fmt_ms(pct(samples, p)) for p in (50, 90, 99))
    return f"error ({peers.fmt_ms(pct(samples, 50))})" if failed == len(samples) else text


def report(pool: Pool, samples: dict[str, dict[str, list[float]]], rss: dict[str, int]) -> None:
    servers = list(pool.servers.values())
    widths = [20] + [27] * len(servers) + [12]
    keys = [s.key for s in servers]
    print(peers.row("", [s.label for s in servers] + ["sway/X11"], widths))
    print(peers.row("p50 / p90 / p99 ms", ["" for _ in servers] + ["mcec p50"], widths))
    rows = [
        ("cheapest call", "cheapest"), ("mouse move", "move"), ("click", "click"), ('type "hello"', "type"),
        ("key ctrl+a", "key"), ("capture 1280x800", "capture"), ("cold start", "cold"),
    ]
    for label, op in rows:
        cells = [
            cell(samples.get(k, {}).get(op, []), len(pool.failures[k].get(op, [])), len(pool.broken.get(k, {}).get(op, [])))
            for k in keys
        ]
        a, b = samples.get("mcec-sway", {}).get(op), samples.get("mcec-x11", {}).get(op)
        ratio = f"{pct(a, 50) / pct(b, 50):.2f}" if a and b else "-"
        print(peers.row(label, cells + [ratio], widths))
    cells = [f"{rss[k] / 1024:.1f} MB" if rss.get(k) else "-" for k in keys]
    a, b = rss.get("mcec-sway"), rss.get("mcec-x11")
    print(peers.row("peak RSS", cells + [f"{a / b:.2f}" if a and b else "-"], widths))


# --------------------------------------------------------------------------- main


async def main_async(args: argparse.Namespace) -> int:
    for tool in ("sway", "swaymsg", "swaybg", "foot", "Xwayland", "Xvfb", "xterm", "xhost", "convert", "import"):
        if shutil.which(tool) is None:
            print(f"{tool} is missing (apt-get install sway swaybg foot xwayland xvfb xterm x11-xserver-utils imagemagick)")
            return 2
    print(f"load average at start {load()}; {os.cpu_count()} CPUs; `uptime`: {os.popen('uptime').read().strip()}")
    with tempfile.TemporaryDirectory(prefix="mcec-sway-peers-") as tmp:
        work = Path(tmp)
        os.chmod(work, 0o755)  # sway's user reads the background from here
        (work / "checks").mkdir()
        with contextlib.ExitStack() as stack:
            sway = stack.enter_context(SwayDesk(xwayland=True, config_extra=sway_config(plasma(work))))
            wins = SwayWindows(sway)
            stack.callback(wins.close)
            x11 = peers.Desk(SIZE, work)
            stack.callback(x11.close)
            print(f"sway desk: Xvfb {sway.display}, {sway.wayland_display}, XWayland {sway.xwayland_display}; "
                  f"X11 desk: {x11.display} ({'; '.join(x11.notes) or 'busy desktop up'})")
            servers, skipped = make_servers(args, work, sway, x11.display)
            for line in skipped:
                print(line)
            if not servers:
                return 1
            errdir = work / "stderr"

            print(f"cold start: {args.cold_runs} runs each, servers alternating")
            samples: dict[str, dict[str, list[float]]] = {s.key: {} for s in servers}
            for key, xs in (await cold_starts(servers, args.cold_runs, errdir)).items():
                samples[key]["cold"] = xs

            effect: dict[str, dict[str, str]] = {}
            captures: dict[str, str] = {}
            pool = Pool(servers, errdir)
            try:
                for s in servers:
                    await pool.start(s.key)
                print(f"effects on the sway desk; load {load()}")
                for key in list(pool.lives):
                    if key != "mcec-x11":
                        effect[key] = await effects(pool, key, sway, wins)
                sway_ref = root_grab(sway.display, work / "checks" / "sway-root.png")
                x11_ref = root_grab(x11.display, work / "checks" / "x11-root.png")
                for key in list(pool.lives):
                    on_sway = key != "mcec-x11"
                    captures[key] = await capture_check(
                        pool, key, work / "checks", sway_ref if on_sway else x11_ref, on_sway
                    )
                print(f"timed: {args.rounds} rounds x ({args.iters} calls, captures {args.capture_iters}); "
                      f"load {load()}")
                await timed_rounds(pool, args.rounds, args.iters, args.capture_iters, args.warmup)
            finally:
                await pool.close()
            for key in pool.samples:
                samples[key].update(pool.samples[key])
            if args.keep_stderr and errdir.exists():
                shutil.copytree(errdir, args.keep_stderr, dirs_exist_ok=True)
            if args.keep_images:
                keep = Path(args.keep_images)
                keep.mkdir(parents=True, exist_ok=True)
                for f in (work / "checks").iterdir():
                    shutil.copy2(f, keep / f.name)

    print()
    print(f"load average at the end {load()}; `uptime`: {os.popen('uptime').read().strip()}")
    print(f"{args.rounds} rounds x {args.iters} calls (captures x{args.capture_iters}), cold start x{args.cold_runs}; "
          f"XDG_SESSION_TYPE={args.session_type} on sway; "
          f"mcec {Path(args.mcec).resolve()}")
    print()
    report(pool, samples, pool.rss)
    print("(error: every call answered an error, its p50 in brackets; breaks it: the call killed or hung the server)")
    print()
    print("what the calls did on the sway desk (a click with the other window focused; type into the focused target):")
    for s in servers:
        e = effect.get(s.key)
        if e:
            print(f"  {s.label:34} click: {e['click']}; type: {e['type']}")
    print("first full-screen capture (colours: distinct colours, 1 = blank; RMSE vs a grab of the desk's Xvfb):")
    for s in servers:
        print(f"  {s.label:34} {captures.get(s.key, '-')}")
    print("what each peer answers (first call of each operation):")
    for s in servers:
        if not s.label.startswith("mcec"):
            for op, text in pool.answers.get(s.key, {}).items():
                print(f"  {s.label:34} {op:9} {text}")
    for key, ops in pool.broken.items():
        for op, whys in ops.items():
            then = "not asked again" if len(whys) > 1 else "it answered the second time"
            print(f"{pool.servers[key].label}: {op} broke the server {len(whys)}x ({'; '.join(whys)}); "
                  f"started afresh each time, {then} (stderr: {args.keep_stderr or 'pass --keep-stderr DIR'})")
    failed = [(s.label, op, msgs) for s in servers for op, msgs in pool.failures[s.key].items()]
    if failed:
        print("failed calls (counted in the timings):")
        for label, op, msgs in failed:
            print(f"  {label} {op}: {len(msgs)} failed, e.g. {msgs[0]!r}")
    else:
        print("failed calls: none")
    if args.keep_images:
        print(f"captures and grabs kept in {args.keep_images}")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mcec", default=os.environ.get("MCEC_BIN", str(REPO / "target" / "release" / "mcec")),
                   help="mcec binary (env MCEC_BIN; default target/release/mcec)")
    p.add_argument("--ccm", default=os.environ.get("PEER_CCM_BIN", "/work/peers/venv/bin/computer-control-mcp"),
                   help="computer-control-mcp console script (env PEER_CCM_BIN)")
    p.add_argument("--cum", default=os.environ.get(
        "PEER_CUM_JS", "/work/peers/npm/node_modules/computer-use-mcp/dist/main.js"),
        help="computer-use-mcp dist/main.js (env PEER_CUM_JS)")
    p.add_argument("--only", default=",".join(ALL), help=f"comma list of {','.join(ALL)}")
    p.add_argument("--rounds", type=int, default=4, help="interleaved rounds of every operation")
    p.add_argument("--iters", type=int, default=15, help="timed calls per operation, server and round")
    p.add_argument("--capture-iters", type=int, default=5, help="timed captures per server and round")
    p.add_argument("--warmup", type=int, default=3, help="untimed calls per operation and server first")
    p.add_argument("--cold-runs", type=int, default=10, help="spawn -> initialize runs per server")
    p.add_argument("--keep-images", default=None, metavar="DIR", help="copy the checked captures here")
    p.add_argument("--session-type", default="wayland",
                   help="XDG_SESSION_TYPE in the sway session (wayland: from a display manager; tty: from a console)")
    p.add_argument("--keep-stderr", default=None, metavar="DIR", help="copy the servers' stderr here")
    return asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
