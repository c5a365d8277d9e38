#!/usr/bin/env python3
"""PNG bytes and encode time of a real desk: mcec's encoder, its candidates, and the peers'.

    .venv/bin/python bench/bench_png.py [--rounds 20] [--keep DIR] [--no-zlib-rs]

Makes two 1280x800 Xvfb desks and grabs each root window's pixels (ImageMagick `import`,
binary PPM): `peers`, the desk of bench_desktop_peers.py (fractal plasma background, two
xterms, xeyes/xclock/xlogo), where issue 30 measured mcec's full-size PNG at 741 KB against
the peers' 536-646 KB; and `windows`, a plain background with an xterm listing files and
GTK's demo (gtk3-demo, from gtk-3-examples). Over the same pixels:

  * `cargo bench -p mcec-desktop --bench png_bench` -- mcec's `encode_png` and the png crate
    under other deflate levels and row filters, every setting once per round, p50/p90/p99;
    run again with `--features zlib-rs` for the deflate levels on zlib-rs (skip: --no-zlib-rs);
  * the computer-control-mcp peer's encoder, Pillow's `Image.save(format="PNG")` (zlib level 6,
    adaptive filters), and Pillow with `optimize=True`, in the peers' venv
    (PEER_PY, default /work/peers/venv/bin/python; skipped with a note when missing).

Prints the machine's load first. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_desktop_peers import Desk  # noqa: E402
from stats import pct  # noqa: E402

SIZE = (1280, 800)

PEER_ENCODERS = [
    ("Pillow save (zlib 6, as computer-control-mcp)", {}),
    ("Pillow save optimize=True", {"optimize": True}),
]

# Runs in the peers' venv (Pillow); prints each encoder's size and times as JSON.
PIL_BENCH = r"""
import io, json, sys, time
from PIL import Image
img = Image.open(sys.argv[1]).convert("RGB")
out = {}
for name, kw in json.loads(sys.argv[3]):
    ts = []
    for _ in range(int(sys.argv[2])):
        buf = io.BytesIO()
        t = time.perf_counter()
        img.save(buf, format="PNG", **kw)
        ts.append(time.perf_counter() - t)
    out[name] = {"bytes": len(buf.getvalue()), "times": ts}
print(json.dumps(out))
"""


class PlainDesk(Desk):
    """A plain background with real application windows: GTK's demo and an xterm."""

    def _dress(self) -> None:
        self._run(["xsetroot", "-solid", "#2e3440"])
        # No window manager: GTK maps at the origin, so the demo is moved to the middle.
        if shutil.which("gtk3-demo") is None:
            self.notes.append("gtk3-demo missing (apt-get install gtk-3-examples)")
        else:
            self._spawn(["gtk3-demo"])
            time.sleep(3)  # GTK takes a moment to map and draw
            self._move(self.clients[-1].pid, 300, 120)
        ls = "ls -l /usr/bin | head -40; exec sleep 100000"
        self._spawn(["xterm", "-geometry", "80x24+820+20", "-e", "sh", "-c", ls])
        time.sleep(2)

    def _move(self, pid: int, x: int, y: int) -> None:
        move = ["xdotool", "search", "--onlyvisible", "--pid", str(pid), ".", "windowmove", "%@", str(x), str(y)]
        try:
            done = subprocess.run(move, env=self.env(), capture_output=True, timeout=10)
            if done.returncode != 0:
                self.notes.append(f"could not move the window of pid {pid}: {done.stderr.decode().strip()}")
        except (OSError, subprocess.TimeoutExpired) as e:
            self.notes.append(f"could not move the window of pid {pid}: {e}")

    def env(self) -> dict[str, str]:
        env = super().env()
        env["NO_AT_BRIDGE"] = "1"  # no accessibility bus to wait for
        return env


def grab(desk: Desk, path: Path) -> None:
    subprocess.run(["import", "-window", "root", "-depth", "8", f"ppm:{path}"], env=desk.env(), check=True, timeout=60)


def rust_bench(ppm: Path, rounds: int, zlib_rs: bool) -> str:
    argv = ["cargo", "bench", "-q", "-p", "mcec-desktop", "--bench", "png_bench"]
    if zlib_rs:
        argv += ["--features", "zlib-rs"]
    out = subprocess.run([*argv, "--", str(ppm), str(rounds)], cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        return f"png_bench failed:\n{out.stderr[-2000:]}"
    return out.stdout.rstrip()


def pil_bench(ppm: Path, rounds: int) -> str:
    python = Path(os.environ.get("PEER_PY", "/work/peers/venv/bin/python"))
    if not python.exists():
        return f"peers' encoder skipped: no {python} (python3 -m venv /work/peers/venv && pip install pillow)"
    argv = [str(python), "-c", PIL_BENCH, str(ppm), str(rounds), json.dumps(PEER_ENCODERS)]
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        return f"Pillow failed: {out.stderr[-2000:]}"
    lines = []
    for name, got in json.loads(out.stdout).items():
        n, ts = got["bytes"], got["times"]
        lines.append(
            f"{name:<48} {n:>8} bytes ({n // 1024:>5} KB)  "
            f"p50 {pct(ts, 50):>8.2f} ms  p90 {pct(ts, 90):>8.2f} ms  p99 {pct(ts, 99):>8.2f} ms"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--keep", type=Path, help="keep the desks' PPM files here")
    ap.add_argument("--no-zlib-rs", action="store_true")
    args = ap.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="mcec-png-bench-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        desks = []
        for name, kind in (("peers", Desk), ("windows", PlainDesk)):
            desk = kind(SIZE, Path(tmp))
            try:
                ppm = work / f"desk-{name}-{SIZE[0]}x{SIZE[1]}.ppm"
                grab(desk, ppm)
                desks.append((name, ppm, desk.notes))
            finally:
                desk.close()
        for name, ppm, notes in desks:
            print(f"\n== desk `{name}` ({ppm.name}){'; ' + '; '.join(notes) if notes else ''}")
            print(rust_bench(ppm, args.rounds, zlib_rs=False))
            if not args.no_zlib_rs:
                print(rust_bench(ppm, args.rounds, zlib_rs=True))
            print(pil_bench(ppm, args.rounds))
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
