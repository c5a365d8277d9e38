"""`type` and `key` give the right characters under non-US keyboard layouts and with a second
XKB group active, end to end through the official MCP Python SDK on Xvfb. The target is xev
(Xlib's own XKB-aware key lookup, independent of mcec): the keysyms of the key presses it
reports must spell what the agent asked for.

A fresh xev loads its keymap on the first key it reads, which is what made a spare keycode
mapped right after that key invisible to it (one run in five); `MCEC_LAYOUT_RUNS=30` repeats
every case to show such a race is gone."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from mcec_e2e import Copy, manual_copy, sdk_envelope, sdk_stdio
from xdesk import Screen, wait_until

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("setxkbmap") is None or shutil.which("xev") is None, reason="needs setxkbmap, xev"),
]

TEXT = "hé€:"
RUNS = int(os.environ.get("MCEC_LAYOUT_RUNS", "1"))
KEYSYMS = {"h": 0x68, "é": 0xE9, "€": 0x20AC, ":": 0x3A}
KEYSYMS_LATIN = {"z": 0x7A}
#: Shift, Control, Caps/Shift locks, Meta/Alt/Super/Hyper, ISO level shifts and latches.
MODIFIER_KEYSYMS = set(range(0xFFE1, 0xFFEF)) | set(range(0xFE01, 0xFE14))


class XkbState(ctypes.Structure):
    _fields_ = [
        ("group", ctypes.c_ubyte),
        ("locked_group", ctypes.c_ubyte),
        ("base_group", ctypes.c_ushort),
        ("latched_group", ctypes.c_ushort),
        ("mods", ctypes.c_ubyte),
        ("base_mods", ctypes.c_ubyte),
        ("latched_mods", ctypes.c_ubyte),
        ("locked_mods", ctypes.c_ubyte),
        ("compat_state", ctypes.c_ubyte),
        ("grab_mods", ctypes.c_ubyte),
        ("compat_grab_mods", ctypes.c_ubyte),
        ("lookup_mods", ctypes.c_ubyte),
        ("compat_lookup_mods", ctypes.c_ubyte),
        ("ptr_buttons", ctypes.c_ushort),
    ]


def xkb_group(display: str, lock: int | None = None) -> int:
    """The core keyboard's effective XKB group (0-based), after locking `lock` if given (what a
    layout switcher does when the operator picks the second layout)."""
    xlib = ctypes.CDLL("libX11.so.6")
    xlib.XOpenDisplay.restype = ctypes.c_void_p
    dpy = ctypes.c_void_p(xlib.XOpenDisplay(display.encode()))
    assert dpy.value, f"cannot open {display}"
    try:
        use_core_kbd = 0x100
        if lock is not None:
            assert xlib.XkbLockGroup(dpy, use_core_kbd, lock)
            xlib.XSync(dpy, 0)
        state = XkbState()
        assert xlib.XkbGetState(dpy, use_core_kbd, ctypes.byref(state)) == 0
        return state.group
    finally:
        xlib.XCloseDisplay(dpy)


class Xev:
    """xev on its own window filling the screen, reporting key events."""

    def __init__(self, screen: Screen, out: Path) -> None:
        self.out = out
        self._file = open(out, "w")
        self.proc = subprocess.Popen(
            ["xev", "-geometry", "1280x800+0+0", "-event", "keyboard", "-name", "mcec-xev"],
            env=screen.env(),
            stdout=self._file,
            stderr=subprocess.STDOUT,
        )
        shown = lambda: bool(run(screen, "xdotool", "search", "--onlyvisible", "--name", "mcec-xev").strip())  # noqa: E731
        assert wait_until(shown, 15), "xev never showed its window"

    def keysyms(self) -> list[int]:
        """Keysyms of the key presses so far, modifiers left out."""
        text = self.out.read_text(errors="replace")
        out = []
        for block in text.split("\n\n"):
            if block.startswith("KeyPress event"):
                m = re.search(r"keysym (0x[0-9a-f]+)", block)
                if m and int(m.group(1), 16) not in MODIFIER_KEYSYMS:
                    out.append(int(m.group(1), 16))
        return out

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)
        self._file.close()


def run(screen: Screen, *argv: str) -> str:
    return subprocess.run(list(argv), env=screen.env(), capture_output=True, text=True, timeout=30).stdout


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("type", "key"))


def set_layout(screen: Screen, layout: str) -> None:
    subprocess.run(["setxkbmap", "-layout", layout], env=screen.env(), check=True, timeout=30)
    # A fresh server can drop the first keymap upload; set it until the server reports it.
    assert wait_until(
        lambda: f"layout:     {layout}" in run(screen, "setxkbmap", "-query")
        or subprocess.run(["setxkbmap", "-layout", layout], env=screen.env(), timeout=30).returncode != 0,
        10,
    ), run(screen, "setxkbmap", "-query")


@pytest.mark.parametrize("run_no", range(RUNS), ids=lambda i: f"run{i}")
@pytest.mark.parametrize(
    ("layout", "group", "calls"),
    [
        ("de", None, [TEXT]),
        ("fr", None, [TEXT]),
        ("us,ru", 1, [TEXT]),
        # The second call maps its spare keycodes just after the first call's key (kept apart by
        # the quiet time; the SDK's own gap between calls hid this race in 30 runs here).
        ("de", None, ["h", TEXT[1:]]),
    ],
    ids=["de", "fr", "us,ru-group2", "de-two-calls"],
)
async def test_type_and_key_give_the_characters_asked_for(
    copy: Copy, screen: Screen, tmp_path: Path, layout: str, group: int | None, calls: list[str], run_no: int
) -> None:
    set_layout(screen, layout)
    if group is not None:
        assert xkb_group(screen.display, lock=group) == group
    xev = Xev(screen, tmp_path / "xev.txt")
    try:
        run(screen, "xdotool", "mousemove", "640", "400")  # no window manager: focus follows the pointer
        time.sleep(0.2)
        async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
            for text in calls:
                env = sdk_envelope(await s.call_tool("type", {"text": text}))
                assert env["ok"], env
            env = sdk_envelope(await s.call_tool("key", {"keys": ":"}))
            assert env["ok"], env
        want = [KEYSYMS[c] for c in TEXT + ":"]
        assert wait_until(lambda: len(xev.keysyms()) >= len(want), 10), xev.out.read_text(errors="replace")[-2000:]
        assert xev.keysyms() == want, f"{layout}: typed {[hex(k) for k in xev.keysyms()]}"
        if group is not None:
            assert xkb_group(screen.display) == group, "mcec must leave the operator's layout as it was"
    finally:
        xev.close()


async def test_a_layout_switched_while_mcec_runs_is_followed(copy: Copy, screen: Screen, tmp_path: Path) -> None:
    """`z` and `y` trade places between `us` and `de`: a keymap read once at start types `y`."""
    set_layout(screen, "us")
    xev = Xev(screen, tmp_path / "xev.txt")
    try:
        run(screen, "xdotool", "mousemove", "640", "400")
        time.sleep(0.2)
        async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
            env = sdk_envelope(await s.call_tool("type", {"text": "z"}))
            assert env["ok"], env
            set_layout(screen, "de")
            env = sdk_envelope(await s.call_tool("type", {"text": "z"}))
            assert env["ok"], env
        z = KEYSYMS_LATIN["z"]
        assert wait_until(lambda: len(xev.keysyms()) >= 2, 10), xev.out.read_text(errors="replace")[-2000:]
        assert xev.keysyms() == [z, z], f"typed {[hex(k) for k in xev.keysyms()]}"
    finally:
        xev.close()
