"""The picture an agent gets and the way back from it, end to end through the official MCP
Python SDK: captures are held to a client-friendly size unless asked otherwise, can be JPEG,
say their scale and carry a `captureId`; a point given in a capture's image pixels lands on
the desktop pixel under it (within one pixel) at 1/2, 1/3 and an odd scale, on `mcec-testwin`
filling the screen and reporting where it was clicked."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcec_e2e import Copy, manual_copy, sdk_envelope, sdk_stdio
from xdesk import ProbeWindow, Screen, start_server, stop_server

COMMANDS = ("capture", "click", "drag", "scroll", "mouse")
W, H = Screen.SIZE

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def screen():
    with Screen() as s:
        yield s


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)


@pytest.fixture
def full_window(screen: Screen):
    w = ProbeWindow(screen.env(), "--x", "0", "--y", "0", "--width", str(W), "--height", str(H))
    yield w
    w.close()


async def call(session: Any, tool: str, args: dict) -> tuple[dict, Any]:
    result = await session.call_tool(tool, args)
    return sdk_envelope(result), result


def image_block(result: Any) -> tuple[bytes, str]:
    (img,) = [c for c in result.content if getattr(c, "type", None) == "image"]
    return base64.b64decode(img.data), img.mime_type


@pytest.mark.parametrize("image_width", [W // 2, round(W / 3), 1000], ids=["half", "third", "odd"])
async def test_a_point_in_capture_pixels_lands_on_the_desktop_pixel_under_it(
    copy: Copy, screen: Screen, full_window: ProbeWindow, image_width: int
) -> None:
    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
        env, result = await call(s, "capture", {"maxWidth": image_width})
        shot = env["result"]
        assert shot["width"] == image_width and shot["source"] == {"x": 0, "y": 0, "width": W, "height": H}
        assert abs(shot["scaleX"] - image_width / W) < 1e-9
        png, mime = image_block(result)
        assert mime == "image/png" and png[:8] == b"\x89PNG\r\n\x1a\n"
        ih = shot["height"]
        for ix, iy in [(0, 0), (image_width // 3, ih // 2), (image_width - 1, ih - 1), (17, ih - 5)]:
            env, _ = await call(s, "click", {"at": {"x": ix, "y": iy}, "captureId": shot["captureId"]})
            assert env["ok"], env
            line = full_window.wait_for(lambda line: line.startswith("press 1 "))
            _, _, x, y, _ = line.split()
            want_x, want_y = (ix + 0.5) * W / image_width - 0.5, (iy + 0.5) * H / ih - 0.5
            assert abs(int(x) - want_x) <= 1 and abs(int(y) - want_y) <= 1, (ix, iy, line, want_x, want_y)
            assert env["result"]["at"] == {"x": int(x), "y": int(y)}


async def test_bad_capture_points_and_arguments_are_refused_and_press_nothing(
    copy: Copy, screen: Screen, full_window: ProbeWindow
) -> None:
    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
        shot = (await call(s, "capture", {"scale": 0.5}))[0]["result"]
        cid = shot["captureId"]
        cases = [
            ("click", {"at": {"x": 1, "y": 1}, "captureId": "cap-424242"}, "`captureId`: no capture `cap-424242`"),
            ("click", {"at": {"x": shot["width"], "y": 0}, "captureId": cid}, "lies outside the capture"),
            ("click", {"at": {"x": -1, "y": 0}, "captureId": cid}, "lies outside the capture"),
            ("click", {"at": {"x": 1, "y": 1}, "captureId": cid, "className": "McecTestWin"}, "not both"),
            ("drag", {"from": {"x": 1, "y": 1}, "to": {"x": 5000, "y": 1}, "captureId": cid}, "`to`:"),
            ("capture", {"full": True, "maxWidth": 100}, "`full`:"),
            ("capture", {"format": "png", "quality": 50}, "`quality`: applies to JPEG only"),
            ("capture", {"format": "jpeg", "quality": 0}, "`quality`: must be 1 to 100"),
            ("capture", {"format": "jpeg", "quality": 101}, "`quality`: must be 1 to 100"),
            ("capture", {"format": "gif"}, "format"),
        ]
        cases += [
            ("scroll", {"at": {"x": 0, "y": shot["height"]}, "direction": "up", "captureId": cid}, "lies outside"),
            ("mouse", {"action": "down", "at": {"x": -3, "y": 0}, "captureId": cid}, "lies outside"),
            ("click", {"at": {"x": 1, "y": 1}, "captureId": cid, "modifiers": ["shift", "hyper"]}, "modifiers"),
        ]
        for tool, args, want in cases:
            env, _ = await call(s, tool, args)
            assert env["ok"] is False and env["error"]["code"] == "bad-arguments", (tool, args, env)
            assert want in env["error"]["detail"], (tool, args, env)
        # An id that was issued but is no longer kept (the last 64 are) is refused the same way.
        tiny = {"region": {"x": 0, "y": 0, "width": 1, "height": 1}}
        for _ in range(64):
            assert (await call(s, "capture", tiny))[0]["ok"]
        env, _ = await call(s, "click", {"at": {"x": 1, "y": 1}, "captureId": cid})
        assert env["error"]["code"] == "bad-arguments" and f"no capture `{cid}`" in env["error"]["detail"], env
        assert [line for line in full_window.drain() if line.startswith("press")] == []
        assert screen.buttons_down() == [] and screen.keys_down() == [], "a refused call held nothing"


async def test_jpeg_captures(copy: Copy, screen: Screen) -> None:
    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
        env, result = await call(s, "capture", {"format": "jpeg", "quality": 60})
        data, mime = image_block(result)
        assert mime == "image/jpeg" and env["result"]["mimeType"] == "image/jpeg"
        assert data[:3] == b"\xff\xd8\xff" and env["result"]["byteSize"] == len(data)
        png = image_block((await call(s, "capture", {}))[1])[0]
        assert len(data) < len(png), "the JPEG is the smaller one"


def test_a_4k_screen_is_captured_at_a_client_friendly_size_unless_full(tmp_path: Path) -> None:
    import anyio

    proc, display = start_server(
        ["Xvfb", "-screen", "0", "3840x2160x24", "-nolisten", "tcp", "-noreset"],
        {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)

    async def run() -> None:
        async with sdk_stdio(copy, env_extra={"DISPLAY": display}) as (s, _):
            small = (await call(s, "capture", {}))[0]["result"]
            assert small["width"] <= 1568 and small["height"] <= 1568, small
            assert small["width"] * small["height"] <= 1_150_000, small
            assert abs(small["width"] / small["height"] - 3840 / 2160) < 0.01
            assert small["source"]["width"] == 3840 and small["scaleX"] < 0.5
            full = (await call(s, "capture", {"full": True}))[0]["result"]
            assert (full["width"], full["height"], full["scaleX"]) == (3840, 2160, 1.0)

    try:
        anyio.run(run)
    finally:
        stop_server(proc)


@pytest.mark.parametrize("no_shm", [False, True], ids=["mit-shm", "no-mit-shm"])
def test_a_capture_says_how_its_pixels_were_read(tmp_path: Path, no_shm: bool) -> None:
    """`via` is `xshm` where the X server offers MIT-SHM and `getimage` where it does not,
    for a scaled capture and a full-size one alike."""
    import anyio

    off = ["-extension", "MIT-SHM"] if no_shm else []
    proc, display = start_server(
        ["Xvfb", "-screen", "0", "640x480x24", "-nolisten", "tcp", "-noreset", *off],
        {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)
    want = "getimage" if no_shm else "xshm"

    async def run() -> None:
        async with sdk_stdio(copy, env_extra={"DISPLAY": display}) as (s, _):
            for args in ({"scale": 0.5}, {"full": True}):
                shot = (await call(s, "capture", args))[0]["result"]
                assert shot["via"] == want, (args, shot)

    try:
        anyio.run(run)
    finally:
        stop_server(proc)


async def test_the_pointer_is_drawn_when_asked(copy: Copy, screen: Screen, full_window: ProbeWindow) -> None:
    from test_desktop import decode_png

    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
        # The bottom-right quadrant of the test window is plain white.
        at = {"x": W * 3 // 4, "y": H * 3 // 4}
        assert (await call(s, "mouse", {"action": "move", "at": at}))[0]["ok"]
        region = {"x": at["x"] - 32, "y": at["y"] - 32, "width": 64, "height": 64}
        plain = decode_png(image_block((await call(s, "capture", {"region": region}))[1])[0])
        drawn = decode_png(image_block((await call(s, "capture", {"region": region, "cursor": True}))[1])[0])
        white = bytes([255, 255, 255]) * 64
        assert all(row == white for row in plain[2]), "without `cursor` the area is the window's white"
        changed = sum(a != b for ra, rb in zip(plain[2], drawn[2]) for a, b in zip(ra, rb))
        assert changed > 20, "the pointer was drawn near the middle of the region"


def test_the_default_format_follows_the_picture_and_the_settings(tmp_path: Path) -> None:
    """`auto`: a flat desk comes back as PNG, a photographic one (a fractal plasma filling the
    root window) as a JPEG far smaller than its PNG; `format`, a `.jpg` file name and the
    `CaptureFormat`/`CaptureMaxLongSide` settings override it."""
    import anyio

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    proc, display = start_server(["Xvfb", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"], env)
    xenv = {**env, "DISPLAY": display}
    plasma = tmp_path / "plasma.png"
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)
    fixed = manual_copy(
        tmp_path / "f",
        settings='AgentCommandsEnabled = true\nCaptureFormat = "png"\nCaptureMaxLongSide = 400\n',
        commands=COMMANDS,
    )

    async def run() -> None:
        async with sdk_stdio(copy, env_extra={"DISPLAY": display}) as (s, _):
            flat = (await call(s, "capture", {}))[0]["result"]
            assert flat["mimeType"] == "image/png", "a flat desk stays lossless"
            subprocess.run(["convert", "-seed", "3", "-size", "1280x800", "plasma:fractal", str(plasma)], check=True)
            # `display` exits 1 after setting the root window's background; the capture below
            # shows whether it did.
            subprocess.run(["display", "-window", "root", str(plasma)], env=xenv, timeout=60)
            photo = (await call(s, "capture", {}))[0]["result"]
            png = (await call(s, "capture", {"format": "png"}))[0]["result"]
            assert photo["mimeType"] == "image/jpeg" and png["mimeType"] == "image/png"
            assert photo["byteSize"] * 3 < png["byteSize"], (photo["byteSize"], png["byteSize"])
            named = (await call(s, "capture", {"file": "named.jpg"}))[0]["result"]
            assert named["mimeType"] == "image/jpeg" and Path(named["file"]).read_bytes()[:3] == b"\xff\xd8\xff"
            named = (await call(s, "capture", {"file": "named.png"}))[0]["result"]
            assert named["mimeType"] == "image/png", "the file name asks for PNG"
        async with sdk_stdio(fixed, env_extra={"DISPLAY": display}) as (s, _):
            shot = (await call(s, "capture", {}))[0]["result"]
            assert shot["mimeType"] == "image/png" and shot["width"] == 400, shot

    try:
        anyio.run(run)
    finally:
        stop_server(proc)
