#!/usr/bin/env python3
"""How long from the operator's key press to the red STOPPED banner's pixels on the screen.

    cargo build --release -p mcec
    .venv/bin/python bench/bench_banner.py --bin target/release/mcec [--rounds 30] [--only mcp|host]

A real mcec runs on the inner display of an Xvfb + Xephyr desk (tests/e2e/xdesk.py): `mcec
mcp` (its banner painted on the CPU, crates/operator/src/soft/) with an MCP client connected
through the official Python SDK, and the host `mcec` (its banner painted on the CPU too). In every
round Ctrl+Alt+Shift are pressed on the outer display (xdotool, untimed), then the chord's main
key `s` is pressed there through XTEST from this process: t0 is taken just before that request
is flushed. Xephyr replays it through its own keyboard, so on the inner display it is physical.

From t0 the bench reads one pixel of the inner display's root window at the banner's place
(XGetImage of 1x1, the picture on the screen, whatever window it belongs to) every 0.25 ms, and
t1 is the first read that is the banner's red. Each read is one round trip to the X server
(~0.1 ms), so a sample is late by at most one read and one pause. Also printed: t0 to the
`emergency-stop; engaged` audit line in mcec.log (wall clock, ms resolution), which splits
the time into "the stop saw the key" and "the banner was painted".

Between rounds the operator re-arms with a physical click on the prompt's Re-arm button
(xdotool on the outer display), and the next round starts once the banner has gone. Nothing is
subtracted; numbers are printed, never asserted. A frame at 60 Hz is 16.7 ms.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

from stats import pct  # noqa: E402
import mcec_e2e  # noqa: E402
from mcec_e2e import manual_copy, sdk_stdio, start_process, stop_process  # noqa: E402
from xdesk import Desk, wait_until  # noqa: E402

PROMPT_TITLE = "mcec: emergency stop"
OVERLAY_TITLE = "^mcec overlay$"
REARM_OFFSET = (41, 130)  # as in tests/e2e/test_emergency_stop.py
ENGAGED = "AGENT-AUDIT: emergency-stop; engaged"
REARMED = "AGENT-AUDIT: emergency-stop; re-armed by the operator"
# In the banner's red top margin, clear of the host window (420 px wide at the top left): the
# banner is 640 px wide at the top, centred (x 192..832 here) or, where the monitor size is
# unknown as under Xephyr, placed for a 1280 px monitor (x 320..960).
BANNER_PIXEL = (700, 3)
# The host has no re-arm prompt: its menu's `⛔ Re-arm` item (crates/operator/tests/host_window.rs).
HOST_TITLE = "^mcec$"
MENU_BUTTON = (24, 12)
MENU_REARM_ITEM = (110, 40)
STOP_RED = (0xC6, 0x28, 0x28)
ACTING_BLUE = (0x1F, 0x2A, 0x44)
POLL_PAUSE_S = 0.00025
FRAME_MS = 1000 / 60

X11 = ctypes.CDLL("libX11.so.6")
XTST = ctypes.CDLL("libXtst.so.6")
X11.XOpenDisplay.restype = ctypes.c_void_p
X11.XOpenDisplay.argtypes = [ctypes.c_char_p]
X11.XDefaultRootWindow.restype = ctypes.c_ulong
X11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
X11.XGetImage.restype = ctypes.c_void_p
X11.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                          ctypes.c_ulong, ctypes.c_int]
X11.XGetPixel.restype = ctypes.c_ulong
X11.XGetPixel.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
X11.XDestroyImage.argtypes = [ctypes.c_void_p]
X11.XStringToKeysym.restype = ctypes.c_ulong
X11.XStringToKeysym.argtypes = [ctypes.c_char_p]
X11.XKeysymToKeycode.restype = ctypes.c_ubyte
X11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
X11.XFlush.argtypes = [ctypes.c_void_p]
X11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
XTST.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
ALL_PLANES = 0xFFFFFFFF
Z_PIXMAP = 2


class Screen:
    """One Xlib connection that reads a pixel of the root window."""

    def __init__(self, display: str) -> None:
        self.dpy = X11.XOpenDisplay(display.encode())
        if not self.dpy:
            raise RuntimeError(f"cannot open {display}")
        self.root = X11.XDefaultRootWindow(self.dpy)

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        image = X11.XGetImage(self.dpy, self.root, x, y, 1, 1, ALL_PLANES, Z_PIXMAP)
        if not image:
            raise RuntimeError("XGetImage failed")
        value = X11.XGetPixel(image, 0, 0)
        X11.XDestroyImage(image)
        return (value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF


class Keyboard:
    """XTEST on the outer display: the operator's hand as the inner display sees it."""

    def __init__(self, display: str) -> None:
        self.dpy = X11.XOpenDisplay(display.encode())
        if not self.dpy:
            raise RuntimeError(f"cannot open {display}")
        self.s = X11.XKeysymToKeycode(self.dpy, X11.XStringToKeysym(b"s"))

    def press_s(self) -> float:
        t0 = time.perf_counter()
        XTST.XTestFakeKeyEvent(self.dpy, self.s, 1, 0)
        X11.XFlush(self.dpy)
        return t0

    def release_s(self) -> None:
        XTST.XTestFakeKeyEvent(self.dpy, self.s, 0, 0)
        X11.XSync(self.dpy, 0)


def near(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    return all(abs(x - y) <= 6 for x, y in zip(a, b, strict=True))


def log_time(line: str) -> float:
    return datetime.fromisoformat(line.split()[0].replace("Z", "+00:00")).timestamp()


def one_round(
    desk: Desk, screen: Screen, keys: Keyboard, copy, background, out: dict[str, list[float]], clear=None
) -> None:
    """One stop: `background` is the pixel before the press, `clear` (default the same) after
    the re-arm."""
    x, y = BANNER_PIXEL
    if not near(screen.pixel(x, y), background):
        raise RuntimeError(f"the banner's place is not clear before the press: {screen.pixel(x, y)}")
    log_before = len(copy.log().splitlines())
    desk.physical("keydown", "ctrl+alt+shift")
    wall0 = time.time()
    t0 = keys.press_s()
    deadline = t0 + mcec_e2e.HANG_GUARD_S
    while not near(screen.pixel(x, y), STOP_RED):
        if time.perf_counter() > deadline:
            raise RuntimeError(f"no red banner; the pixel is {screen.pixel(x, y)}")
        time.sleep(POLL_PAUSE_S)
    out["banner"].append(time.perf_counter() - t0)
    keys.release_s()
    desk.physical("keyup", "ctrl+alt+shift")
    if not wait_until(lambda: ENGAGED in "\n".join(copy.log().splitlines()[log_before:]), 10):
        raise RuntimeError("no engaged audit line")
    engaged = next(line for line in copy.log().splitlines()[log_before:] if ENGAGED in line)
    out["engaged"].append(log_time(engaged) - wall0)
    rearm(desk, screen, copy, clear or background, out)


def rearm(desk: Desk, screen: Screen, copy, background, out: dict[str, list[float]]) -> None:
    """A physical click on Re-arm (the prompt's button, or the host menu's item; repeated if
    it missed), then wait for the banner (the red one, and the green "Re-armed" that fades) to
    be gone."""
    def rearms() -> int:
        return sum(1 for line in copy.log().splitlines() if REARMED in line)

    before = rearms()
    for attempt in range(1, 6):
        host = desk.window_origin(HOST_TITLE)
        if host is not None:
            menu = [str(host[0] + MENU_BUTTON[0]), str(host[1] + MENU_BUTTON[1])]
            item = [str(host[0] + MENU_REARM_ITEM[0]), str(host[1] + MENU_REARM_ITEM[1])]
            desk.physical("mousemove", *menu, "click", "1", "sleep", "0.4", "mousemove", *item, "click", "1")
        else:
            if not wait_until(lambda: desk.visible_window(PROMPT_TITLE), 10):
                raise RuntimeError(f"the re-arm prompt did not open:\n{copy.log()[-3000:]}")
            origin = desk.window_origin(PROMPT_TITLE)
            if origin is None:
                continue
            bx, by = origin[0] + REARM_OFFSET[0], origin[1] + REARM_OFFSET[1]
            desk.physical("mousemove", str(bx + 3), str(by + 3), "mousemove", str(bx), str(by), "click", "1")
        if not wait_until(lambda: rearms() > before, 3):
            continue  # the click missed; click again
        out["rearm clicks"].append(attempt)
        # The window must be gone, not just show the background for a moment (a resize
        # clears it to black before the green "Re-armed" frame is drawn).
        gone = lambda: not desk.visible_window(OVERLAY_TITLE) and near(screen.pixel(*BANNER_PIXEL), background)  # noqa: E731
        if wait_until(gone, 10):
            return
        raise RuntimeError(f"the banner did not go after a re-arm: pixel {screen.pixel(*BANNER_PIXEL)}, was {background}")
    raise RuntimeError("re-arm did not clear the banner after 5 physical clicks")


def report(name: str, samples: list[float]) -> None:
    over = sum(1 for s in samples if s * 1000 > FRAME_MS)
    print(
        f"  {name:<30} n={len(samples):<3} p50={pct(samples, 50):6.2f} ms  p90={pct(samples, 90):6.2f} ms  "
        f"p99={pct(samples, 99):6.2f} ms  max={max(samples) * 1000:6.2f} ms  over 16.7 ms: {over}"
    )


def measure(desk: Desk, copy, rounds: int, act=None) -> dict[str, list[float]]:
    """`rounds` stops from idle (no banner), and with `act` (an agent call) as many again from
    acting (the blue banner on screen, turned red by the stop)."""
    screen, keys = Screen(desk.inner), Keyboard(desk.outer)
    background = screen.pixel(*BANNER_PIXEL)
    out: dict[str, list[float]] = {"banner": [], "engaged": [], "rearm clicks": []}
    acting: dict[str, list[float]] = {"banner": [], "engaged": [], "rearm clicks": []}
    one_round(desk, screen, keys, copy, background, {"banner": [], "engaged": [], "rearm clicks": []})  # warm-up
    for _ in range(rounds):
        one_round(desk, screen, keys, copy, background, out)
        if act is not None:
            act()
            if not wait_until(lambda: near(screen.pixel(*BANNER_PIXEL), ACTING_BLUE), 10):
                raise RuntimeError("the acting banner did not show")
            one_round(desk, screen, keys, copy, ACTING_BLUE, acting, clear=background)
    out.update({f"acting {k}": v for k, v in acting.items()})
    return out


async def bench_mcp(desk: Desk, tmp: Path, rounds: int) -> dict[str, list[float]]:
    copy = manual_copy(tmp / "mcp", settings="AgentCommandsEnabled = true\n", commands=("displays",))
    async with sdk_stdio(copy, {"DISPLAY": desk.inner}) as (session, _init):

        def act() -> None:
            anyio.from_thread.run(session.call_tool, "displays", {})

        return await anyio.to_thread.run_sync(measure, desk, copy, rounds, act)


def bench_host(desk: Desk, tmp: Path, rounds: int) -> dict[str, list[float]]:
    copy = manual_copy(tmp / "host", settings="AgentCommandsEnabled = true\n")
    proc, _ = start_process(copy, [], env_extra={"DISPLAY": desk.inner})
    try:
        if not wait_until(lambda: desk.visible_window("^mcec$"), 30):
            raise RuntimeError("the host window did not open")
        time.sleep(1)
        return measure(desk, copy, rounds)
    finally:
        stop_process(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, help="the mcec binary (default target/debug/mcec)")
    parser.add_argument("--rounds", type=int, default=30, help="stops per process (default 30)")
    parser.add_argument("--only", choices=("mcp", "host"))
    args = parser.parse_args()
    if args.bin:
        mcec_e2e.BIN = args.bin.resolve()
    print(f"mcec: {mcec_e2e.BIN}; key press -> red banner pixel on the inner display's root window")
    for kind in ("mcp", "host"):
        if args.only and args.only != kind:
            continue
        with tempfile.TemporaryDirectory(prefix="mcec-bench-banner-") as tmp, Desk() as desk:
            if kind == "mcp":
                out = anyio.run(bench_mcp, desk, Path(tmp), args.rounds)
                print("mcec mcp (CPU-painted banner, soft/):")
            else:
                out = bench_host(desk, Path(tmp), args.rounds)
                print("mcec host (banner):")
        report("from idle: key -> red pixels", out["banner"])
        report("from idle: key -> engaged log", out["engaged"])
        if out.get("acting banner"):
            report("from acting: key -> red pixels", out["acting banner"])
            report("from acting: key -> engaged log", out["acting engaged"])
        clicks = out["rearm clicks"] + out.get("acting rearm clicks", [])
        print(f"  physical clicks per re-arm: mean {sum(clicks) / len(clicks):.2f}, max {max(clicks)}")
    print(f"one frame at 60 Hz: {FRAME_MS:.1f} ms")


if __name__ == "__main__":
    main()
