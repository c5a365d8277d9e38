"""The desktop tools end to end: a real `mcec mcp` on a plain Xvfb, driven through the official
MCP Python SDK as an agent would, acting on `mcec-testwin` (a window that draws four coloured
quadrants and prints every input event it receives).

Covers: click position and button, exact Unicode typing, drag start to end with the button
left up, `key` leaving no modifier held, capture as a PNG image block whose pixels match the
pattern, `windows` listing and waiting, `launch` finding the new window, `send_command` with its
per-kind switches and its bounded queue, and bad input refused by name with nothing pressed.

Build first: `cargo build -p mcec && cargo build -p mcec-desktop-x11 --bin mcec-testwin`."""

from __future__ import annotations

import base64
import os
import signal
import struct
import threading
import zlib
from pathlib import Path
from typing import Any

import pytest

from mcec_e2e import Copy, manual_copy, sdk_envelope, sdk_stdio
from xdesk import TESTWIN, ProbeWindow, Screen, wait_until

COMMANDS = (
    "displays",
    "windows",
    "capture",
    "click",
    "drag",
    "type",
    "key",
    "window",
    "focus",
    "launch",
    "record",
    "send_command",
    "send_command.chars",
    "send_command.key",
    "send_command.mouse",
    # `send_command.pause` is left disabled on purpose.
)
# The test window's default place and size (no window manager moves it).
WIN_X, WIN_Y, WIN_W, WIN_H = 100, 100, 400, 300
RED, GREEN, BLUE, WHITE, BLACK = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255), (0, 0, 0)

pytestmark = pytest.mark.anyio


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def screen():
    if not TESTWIN.is_file():
        pytest.fail(f"{TESTWIN} is missing; run `cargo build -p mcec-desktop-x11 --bin mcec-testwin`")
    with Screen() as s:
        yield s


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)


@pytest.fixture
def windows(screen: Screen):
    """Open test windows; every one is killed at teardown."""
    opened: list[ProbeWindow] = []

    def open_window(*args: str) -> ProbeWindow:
        w = ProbeWindow(screen.env(), *args)
        opened.append(w)
        return w

    yield open_window
    for w in opened:
        w.close()


async def call(session: Any, tool: str, args: dict | None = None) -> tuple[dict, Any]:
    result = await session.call_tool(tool, args or {})
    return sdk_envelope(result), result


async def ok(session: Any, tool: str, args: dict | None = None) -> Any:
    env, _ = await call(session, tool, args)
    assert env["ok"], f"{tool} {args}: {env}"
    return env["result"]


async def refused(session: Any, tool: str, args: dict) -> dict:
    env, result = await call(session, tool, args)
    assert env["ok"] is False and result.is_error, f"{tool} {args} should fail: {env}"
    return env["error"]


def nothing_held(screen: Screen) -> None:
    assert wait_until(lambda: not screen.keys_down() and not screen.buttons_down()), (
        f"held: keys {screen.keys_down()}, buttons {screen.buttons_down()}"
    )


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB bytes) of an 8-bit RGB PNG, with no imaging library."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert (depth, colour) == (8, 2), "8-bit RGB expected"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * 3, [], bytes(width * 3)
    for y in range(height):
        filt, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            b, c = prev[i], prev[i - 3] if i >= 3 else 0
            if filt == 1:
                line[i] = (line[i] + a) & 0xFF
            elif filt == 2:
                line[i] = (line[i] + b) & 0xFF
            elif filt == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = bytes(line)
    return width, height, rows


def pixel(image: tuple[int, int, list[bytes]], x: int, y: int) -> tuple[int, int, int]:
    row = image[2][y]
    return row[x * 3], row[x * 3 + 1], row[x * 3 + 2]


def image_of(result: Any) -> bytes:
    images = [c for c in result.content if getattr(c, "type", None) == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png", result.content
    assert result.content[0] is images[0], "the image block comes before the envelope"
    return base64.b64decode(images[0].data)


def agent(copy: Copy, screen: Screen):
    return sdk_stdio(copy, env_extra={"DISPLAY": screen.display})


# --------------------------------------------------------------------------- observation


async def test_capture_is_a_png_of_the_right_size_with_the_pattern(copy: Copy, screen: Screen, windows) -> None:
    windows()
    async with agent(copy, screen) as (session, _):
        env, result = await call(session, "capture")
        assert env["ok"], env
        png = image_of(result)
        image = decode_png(png)
        assert image[:2] == Screen.SIZE
        assert (env["result"]["width"], env["result"]["height"]) == Screen.SIZE
        assert env["result"]["byteSize"] == len(png)
        quarter_w, quarter_h = WIN_W // 4, WIN_H // 4
        assert pixel(image, WIN_X + quarter_w, WIN_Y + quarter_h) == RED
        assert pixel(image, WIN_X + 3 * quarter_w, WIN_Y + quarter_h) == GREEN
        assert pixel(image, WIN_X + quarter_w, WIN_Y + 3 * quarter_h) == BLUE
        assert pixel(image, WIN_X + 3 * quarter_w, WIN_Y + 3 * quarter_h) == WHITE
        assert pixel(image, 20, 20) == BLACK

        region = {"x": WIN_X, "y": WIN_Y, "width": WIN_W, "height": WIN_H}
        env, result = await call(session, "capture", {"region": region, "maxWidth": 200})
        assert env["ok"], env
        small = decode_png(image_of(result))
        assert small[:2] == (200, 150)
        assert pixel(small, 50, 37) == RED and pixel(small, 150, 112) == WHITE


async def test_windows_lists_the_test_window_and_waits_for_it(copy: Copy, screen: Screen, windows) -> None:
    async with agent(copy, screen) as (session, _):
        later: list[ProbeWindow] = []
        opener = threading.Timer(0.3, lambda: later.append(windows("--class", "Waited", "--title", "waited for")))
        opener.start()
        found = await ok(session, "windows", {"className": "Waited", "condition": "appears", "timeoutMs": 20000})
        opener.join()
        assert [w["title"] for w in found["windows"]] == ["waited for"]

        listed = await ok(session, "windows", {"title": "WAITED"})
        assert [w["id"] for w in listed["windows"]] == [later[0].id]
        assert listed["windows"][0]["pid"] == later[0].proc.pid
        assert listed["windows"][0]["process"] == "mcec-testwin"

        closer = threading.Timer(0.3, later[0].close)
        closer.start()
        gone = await ok(session, "windows", {"className": "Waited", "condition": "disappears", "timeoutMs": 20000})
        closer.join()
        assert gone["windows"] == []
        err = await refused(session, "windows", {"className": "Waited", "condition": "appears", "timeoutMs": 50})
        assert err["code"] == "timeout", err


async def test_launch_finds_the_new_window(copy: Copy, screen: Screen) -> None:
    async with agent(copy, screen) as (session, _):
        launched = await ok(
            session, "launch", {"path": str(TESTWIN), "args": ["--class", "Launched", "--title", "launched one"]}
        )
        try:
            assert launched["window"]["className"] == "Launched"
            assert launched["window"]["title"] == "launched one"
            assert launched["window"]["pid"] == launched["pid"]
            listed = await ok(session, "windows", {"pid": launched["pid"]})
            assert [w["id"] for w in listed["windows"]] == [launched["window"]["id"]]
        finally:
            os.kill(launched["pid"], signal.SIGKILL)


# --------------------------------------------------------------------------- actuation


async def test_click_lands_at_the_point_with_the_button(copy: Copy, screen: Screen, windows) -> None:
    win = windows("--class", "Clicky")
    async with agent(copy, screen) as (session, _):
        res = await ok(session, "click", {"at": {"x": 50, "y": 60}, "className": "Clicky", "button": "right"})
        assert res["at"] == {"x": WIN_X + 50, "y": WIN_Y + 60}
        assert win.wait_for(lambda line: line.startswith("press")) == "press 3 50 60 0"
        assert win.wait_for(lambda line: line.startswith("release")).startswith("release 3 50 60 ")

        await ok(session, "click", {"at": {"x": WIN_X + 10, "y": WIN_Y + 20}, "count": 2})
        presses = [line for line in win.drain() if line.startswith("press")]
        assert presses == ["press 1 10 20 0", "press 1 10 20 0"]

        await ok(session, "click", {"at": {"x": WIN_X + 30, "y": WIN_Y + 40}, "button": "middle"})
        assert win.wait_for(lambda line: line.startswith("press")) == "press 2 30 40 0"
    nothing_held(screen)


async def test_typed_text_arrives_exactly(copy: Copy, screen: Screen, windows) -> None:
    win = windows("--class", "Typist")
    async with agent(copy, screen) as (session, _):
        focused = await ok(session, "focus", {"className": "Typist"})
        assert focused["window"]["foreground"] is True
        text = "héllo ✓ Ω World!\n\t~🙂 ß€"
        res = await ok(session, "type", {"text": text})
        assert res["characters"] == len(text)
        assert win.typed(len(text)) == text
    nothing_held(screen)


async def test_drag_goes_from_start_to_end_and_leaves_the_button_up(copy: Copy, screen: Screen, windows) -> None:
    win = windows("--class", "Dragger")
    async with agent(copy, screen) as (session, _):
        res = await ok(
            session,
            "drag",
            {"from": {"x": WIN_X + 20, "y": WIN_Y + 30}, "to": {"x": WIN_X + 300, "y": WIN_Y + 250}, "durationMs": 150},
        )
        assert res["points"] > 20
        assert win.wait_for(lambda line: line.startswith("press")) == "press 1 20 30 0"
        lines = win.drain()
        releases = [line for line in lines if line.startswith("release")]
        assert len(releases) == 1 and releases[0].startswith("release 1 300 250 "), lines
        motions = [line for line in lines if line.startswith("motion")]
        assert len(motions) > 10, "the drag walked in steps"
    nothing_held(screen)


async def test_key_leaves_no_modifier_held(copy: Copy, screen: Screen, windows) -> None:
    win = windows("--class", "Keyed")
    async with agent(copy, screen) as (session, _):
        await ok(session, "focus", {"className": "Keyed"})
        await ok(session, "key", {"keys": "ctrl+shift+t Return", "holdMs": 20})
        # The `t` arrives with Control (4) and Shift (1) held; Return arrives with none.
        t_line = win.wait_for(lambda line: line.startswith("key ") and line.split()[3] in ("54", "74"))
        assert int(t_line.split()[2]) & 0x5 == 0x5, t_line
        ret = win.wait_for(lambda line: line.startswith("key ") and line.split()[3] == "ff0d")
        assert int(ret.split()[2]) == 0, ret
    nothing_held(screen)


async def test_send_command_runs_enabled_kinds_and_refuses_disabled_ones(copy: Copy, screen: Screen, windows) -> None:
    win = windows("--class", "Raw")
    async with agent(copy, screen) as (session, _):
        await ok(session, "focus", {"className": "Raw"})
        line = f"mouse:click {WIN_X + 50} {WIN_Y + 60} right; chars:hi ü\\;; key:ctrl+s; mouse:move {WIN_X + 5} {WIN_Y + 6}"
        assert (await ok(session, "send_command", {"command": line}))["ran"] == 4
        assert win.wait_for(lambda l: l.startswith("press")) == "press 3 50 60 0"
        assert win.typed(5) == "hi ü;"
        ctrl_s = win.wait_for(lambda l: l.startswith("key ") and l.split()[3] == "73")
        assert int(ctrl_s.split()[2]) & 0x4, ctrl_s
        assert win.wait_for(lambda l: l.startswith("motion")) == "motion 5 6"
        win.drain()

        err = await refused(session, "send_command", {"command": "chars:x; pause:10"})
        assert err["code"] == "command-disabled", err
        assert "`pause:`" in err["detail"] and "[send_command.pause]" in err["detail"], err

        many = ";".join(["chars:x"] * 51)
        err = await refused(session, "send_command", {"command": many})
        assert err["code"] == "queue-full", err
        assert "51" in err["detail"], err

        err = await refused(session, "send_command", {"command": "chars:x; mouse:click 5000 5"})
        assert err["code"] == "bad-arguments" and err["detail"].startswith("`command`: command 2:"), err
        err = await refused(session, "send_command", {"command": "chars:x; shell:rm"})
        assert err["code"] == "bad-arguments" and "unknown kind `shell`" in err["detail"], err

        fifty = ";".join(["chars:y"] * 50)
        assert (await ok(session, "send_command", {"command": fifty}))["ran"] == 50
        assert win.typed(50) == "y" * 50, "the refused lines typed nothing before these"
    nothing_held(screen)


# --------------------------------------------------------------------------- bad input

BAD_INPUT = [
    ("click", {"at": {"x": 5000, "y": 10}}, "bad-arguments", "`at`"),
    ("click", {"at": {"x": -3, "y": 10}}, "bad-arguments", "`at`"),
    ("click", {"at": {"x": 1, "y": 1}, "button": "fourth"}, "bad-arguments", "`button`"),
    ("drag", {"from": {"x": 10, "y": 10}, "to": {"x": 10, "y": 9000}}, "bad-arguments", "`to`"),
    ("drag", {"from": {"x": 10, "y": 10}, "to": {"x": 20, "y": 20}, "durationMs": 20000}, "bad-arguments", "`durationMs`"),
    ("capture", {"region": {"x": 0, "y": 0, "width": -1, "height": 10}}, "bad-arguments", "`region`"),
    ("capture", {"region": {"x": 0, "y": 0, "width": 20000, "height": 10}}, "bad-arguments", "`region`"),
    ("capture", {"region": {"x": 0, "y": 0, "width": 10000, "height": 10000}}, "bad-arguments", "`region`"),
    ("window", {"action": "resize", "className": "Victim", "width": -5, "height": 10}, "bad-arguments", "`width`"),
    ("click", {"at": {"x": 1, "y": 1}, "handle": 987654321}, "window-not-found", "987654321"),
    ("focus", {"handle": 987654321}, "window-not-found", "987654321"),
    ("key", {"keys": ""}, "bad-arguments", "`keys`"),
    ("key", {"keys": "   "}, "bad-arguments", "`keys`"),
    ("key", {"keys": "ctrl+nosuchkey"}, "bad-arguments", "`keys`"),
    ("type", {"text": "a\u0007b"}, "bad-arguments", "`text`"),
    ("type", {"text": "ok\u001b[31m"}, "bad-arguments", "`text`"),
    ("record", {"action": "stop"}, "bad-arguments", "`action`"),
    ("send_command", {"command": ""}, "bad-arguments", "`command`"),
    ("send_command", {"command": "key:"}, "bad-arguments", "`command`"),
    ("send_command", {"command": "mouse:move -1 -1"}, "bad-arguments", "`command`"),
]


async def test_bad_input_is_refused_by_name_and_presses_nothing(copy: Copy, screen: Screen, windows) -> None:
    win = windows("--class", "Victim")
    async with agent(copy, screen) as (session, _):
        await ok(session, "focus", {"className": "Victim"})
        win.drain()
        for tool, args, code, named in BAD_INPUT:
            err = await refused(session, tool, args)
            assert err["code"] == code, (tool, args, err)
            assert named in err["detail"], (tool, args, err)
            if code == "bad-arguments":
                assert err["detail"].startswith(named), (tool, args, err)
        # The window is where it was and saw no input at all.
        listed = await ok(session, "windows", {"className": "Victim"})
        assert listed["windows"][0]["bounds"] == {"x": WIN_X, "y": WIN_Y, "width": WIN_W, "height": WIN_H}
    acted = [line for line in win.drain() if line.split()[0] in ("press", "release", "key", "keyup", "motion")]
    assert acted == [], acted
    nothing_held(screen)
