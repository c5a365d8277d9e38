"""The agent never sees mcec: captures (screen and window) and recordings show the
application's pixels where mcec's banner lies, pixel by pixel, while the operator's view of the
screen (ImageMagick `import -window root`) shows the banner there. End to end through the
official MCP Python SDK on Xvfb, with `mcec-testwin` drawing a striped pattern (every row a
different colour) under the banner."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcec_e2e import Copy, manual_copy, sdk_envelope, sdk_stdio
from test_desktop import decode_png
from test_picture import image_block
from xdesk import TESTWIN, ProbeWindow, Screen, wait_until

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "target" / "test-artifacts"
W, H = Screen.SIZE
#: The overlay is 640 px wide, centred at the top, at least 44 px high (overlay.rs).
BANNER = (W // 2 - 320, 0, 640, 44)
#: The overlay's background while an agent acts (ACTING_BG in overlay.rs).
ACTING_BG = (0x1F, 0x2A, 0x44)

pytestmark = pytest.mark.anyio


def pattern(x: int, y: int) -> tuple[int, int, int]:
    """What `mcec-testwin --stripes 1` draws at (x, y) when it fills the 1280x800 screen."""
    right, bottom = x >= W // 2, y >= H // 2
    r, g, b = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)][right + 2 * bottom]
    return r, g ^ (y * 8 % 256), b


def operator_view(display: str, path: Path) -> list[bytes]:
    """The screen as the operator sees it: `import -window root`, as RGB rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["import", "-window", "root", str(path)], env={"DISPLAY": display, "PATH": os.environ.get("PATH", "")}, check=True, timeout=30)
    raw = subprocess.run(
        ["convert", str(path), "-depth", "8", "rgb:-"], capture_output=True, check=True, timeout=30
    ).stdout
    return [raw[y * W * 3 : (y + 1) * W * 3] for y in range(H)]


def px(rows: list[bytes], x: int, y: int, ox: int = 0, oy: int = 0) -> tuple[int, int, int]:
    row = rows[y - oy]
    i = (x - ox) * 3
    return row[i], row[i + 1], row[i + 2]


def banner_showing(rows: list[bytes]) -> bool:
    return px(rows, W // 2, 8) == ACTING_BG


def mismatches(
    rows: list[bytes], ox: int, oy: int, tolerance: int = 0, client: tuple[int, int] = (0, 0)
) -> list[tuple[int, int]]:
    """Pixels of the banner's rectangle whose colour is not the pattern's; `rows` show the
    desktop from (ox, oy) on, the test window's client area starts at `client` (rows above
    it, a window manager's title bar, are not compared)."""
    bx, by, bw, bh = BANNER
    cx, cy = client
    bad = []
    for y in range(max(by, cy), by + bh):
        for x in range(bx, bx + bw):
            got, want = px(rows, x, y, ox, oy), pattern(x - cx, y - cy)
            if any(abs(a - b) > tolerance for a, b in zip(got, want)):
                bad.append((x, y))
    return bad


@pytest.fixture(scope="module")
def screen():
    with Screen() as s:
        yield s


@pytest.fixture
def striped(screen: Screen):
    w = ProbeWindow(
        screen.env(), "--x", "0", "--y", "0", "--width", str(W), "--height", str(H), "--stripes", "1"
    )
    yield w
    w.close()


def xprop(display: str, *args: str) -> str:
    env = {"DISPLAY": display, "PATH": os.environ.get("PATH", "")}
    return subprocess.run(["xprop", *args], env=env, capture_output=True, text=True, timeout=30).stdout


def client_origin(display: str, window: int) -> tuple[int, int]:
    env = {"DISPLAY": display, "PATH": os.environ.get("PATH", "")}
    out = subprocess.run(["xwininfo", "-id", str(window)], env=env, capture_output=True, text=True, check=True).stdout
    fields = dict(line.strip().split(":", 1) for line in out.splitlines() if ":" in line)
    return int(fields["Absolute upper-left X"]), int(fields["Absolute upper-left Y"])


def probe_shows(screen: Screen) -> bool:
    probe = subprocess.Popen(
        [str(TESTWIN), "--title", "probe", "--width", "10", "--height", "10"],
        env=screen.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert probe.stdout is not None
        ready, _, _ = select.select([probe.stdout], [], [], 2.0)
        return bool(ready) and probe.stdout.readline().startswith("ready")
    finally:
        probe.kill()
        probe.wait(timeout=10)


@pytest.fixture
def managed():
    """A fresh Xvfb with openbox managing it and the striped test window framed by openbox."""
    with Screen() as s:
        wm = subprocess.Popen(
            ["openbox", "--sm-disable"], env=s.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            assert wait_until(lambda: "window id" in xprop(s.display, "-root", "_NET_SUPPORTING_WM_CHECK"), 15)
            # openbox drops map requests while it is still starting: wait until a probe shows.
            assert wait_until(lambda: probe_shows(s), 30), "openbox does not manage windows"
            w = ProbeWindow(s.env(), "--width", str(W), "--height", str(H), "--stripes", "1")
            try:
                framed = lambda: "=" in xprop(s.display, "-id", str(w.id), "_NET_FRAME_EXTENTS")  # noqa: E731
                assert wait_until(framed, 15), "openbox never framed the test window"
                # openbox's placement is its own (a CI run once found the window centred as if it
                # were 10 px wide): put the frame in the top-left corner so the client area lies
                # under the banner.
                top_left = lambda: client_origin(s.display, w.id)[1] < BANNER[3] - 10  # noqa: E731
                if not top_left():
                    subprocess.run(["xdotool", "windowmove", str(w.id), "0", "0"], env=s.env(), check=True)
                    assert wait_until(top_left, 15), f"openbox keeps the test window at {client_origin(s.display, w.id)}"
                yield s, w
            finally:
                w.close()
        finally:
            wm.terminate()
            wm.wait(timeout=10)


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("displays", "capture", "record"))


async def call(session: Any, tool: str, args: dict) -> tuple[dict, Any]:
    result = await session.call_tool(tool, args)
    return sdk_envelope(result), result


async def test_captures_show_the_application_under_the_banner_not_the_banner(
    copy: Copy, screen: Screen, striped: ProbeWindow
) -> None:
    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
        assert (await call(s, "displays", {}))[0]["ok"]  # an agent call: the banner comes up
        shot = ARTIFACTS / "banner-operator-view.png"
        assert wait_until(lambda: banner_showing(operator_view(screen.display, shot)), timeout=20), (
            "positive control: the operator must see the banner over the test window"
        )
        seen = operator_view(screen.display, shot)
        assert len(mismatches(seen, 0, 0)) > 10_000, "the operator's view has the banner, not the pattern"

        env, result = await call(s, "capture", {"full": True})
        assert env["ok"], env
        data, _ = image_block(result)
        (ARTIFACTS / "banner-agent-view.png").write_bytes(data)
        w, h, rows = decode_png(data)
        assert (w, h) == (W, H)
        assert mismatches(rows, 0, 0) == [], "the agent's capture shows something else under the banner"
        left_out = env["result"]["leftOut"]
        assert left_out["how"] == "recomposed", left_out
        bx, by, bw, bh = BANNER
        assert any(
            a["x"] <= bx and a["y"] <= by and a["x"] + a["width"] >= bx + bw and a["y"] + a["height"] >= bh
            for a in left_out["areas"]
        ), left_out

        env, result = await call(s, "capture", {"className": "McecTestWin", "full": True})
        assert env["ok"], env
        _, _, rows = decode_png(image_block(result)[0])
        assert mismatches(rows, 0, 0) == [], "a window capture shows the banner"

        region = {"x": 300, "y": 0, "width": 680, "height": 120}
        env, result = await call(s, "capture", {"region": region})
        _, _, rows = decode_png(image_block(result)[0])
        assert mismatches(rows, 300, 0) == [], "a region capture shows the banner"

        # Away from mcec's windows nothing is touched.
        env, _ = await call(s, "capture", {"region": {"x": 0, "y": 300, "width": 200, "height": 200}})
        assert "leftOut" not in env["result"], env
        assert banner_showing(operator_view(screen.display, shot)), "the operator still sees the banner"


async def test_under_openbox_the_frame_of_the_banner_is_left_out_too(copy: Copy, managed) -> None:
    screen, window = managed
    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
        assert (await call(s, "displays", {}))[0]["ok"]
        shot = ARTIFACTS / "banner-operator-view-openbox.png"
        assert wait_until(lambda: banner_showing(operator_view(screen.display, shot)), timeout=20)
        client = client_origin(screen.display, window.id)
        assert client[1] < BANNER[3] - 10, f"the window's client area must reach under the banner: {client}"
        assert len(mismatches(operator_view(screen.display, shot), 0, 0, client=client)) > 5_000
        env, result = await call(s, "capture", {"full": True})
        assert env["ok"] and env["result"]["leftOut"]["how"] == "recomposed", env
        data, _ = image_block(result)
        (ARTIFACTS / "banner-agent-view-openbox.png").write_bytes(data)
        _, _, rows = decode_png(data)
        assert mismatches(rows, 0, 0, client=client) == [], "the capture shows the banner under openbox"


@pytest.mark.skipif(shutil.which("xcompmgr") is None, reason="needs xcompmgr")
async def test_under_a_compositing_manager_the_banner_is_still_recomposed(copy: Copy, tmp_path: Path) -> None:
    """xcompmgr holds the Manual redirect of the top-levels and paints the screen itself; mcec's
    Automatic request changes nothing and the windows' pixmaps can still be named."""
    with Screen() as screen:
        comp = subprocess.Popen(["xcompmgr"], env=screen.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        window = ProbeWindow(
            screen.env(), "--x", "0", "--y", "0", "--width", str(W), "--height", str(H), "--stripes", "1"
        )
        try:
            async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
                assert (await call(s, "displays", {}))[0]["ok"]
                shot = tmp_path / "op.png"
                assert wait_until(lambda: banner_showing(operator_view(screen.display, shot)), timeout=20)
                assert comp.poll() is None, "xcompmgr is running"
                env, result = await call(s, "capture", {"full": True})
                assert env["ok"] and env["result"]["leftOut"]["how"] == "recomposed", env
                _, _, rows = decode_png(image_block(result)[0])
                assert mismatches(rows, 0, 0) == [], "the capture shows the banner under xcompmgr"
        finally:
            window.close()
            comp.terminate()
            comp.wait(timeout=10)


@pytest.mark.skipif(shutil.which("convert") is None, reason="needs ImageMagick")
async def test_recordings_show_the_application_under_the_banner(
    copy: Copy, screen: Screen, striped: ProbeWindow, tmp_path: Path
) -> None:
    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
        assert (await call(s, "displays", {}))[0]["ok"]
        assert wait_until(lambda: banner_showing(operator_view(screen.display, tmp_path / "op.png")), timeout=20)
        gif = tmp_path / "rec.gif"
        region = {"x": 300, "y": 0, "width": 680, "height": 120}
        env, _ = await call(
            s, "record", {"action": "oneshot", "region": region, "durationMs": 600, "fps": 5, "file": str(gif)}
        )
        assert env["ok"] and env["result"]["frames"] >= 1, env
        raw = subprocess.run(
            ["convert", f"{gif}[0]", "-depth", "8", "rgb:-"], capture_output=True, check=True, timeout=30
        ).stdout
        rows = [raw[y * 680 * 3 : (y + 1) * 680 * 3] for y in range(120)]
        # GIF frames are quantised to 256 colours: near the pattern, far from the banner's blue.
        assert mismatches(rows, 300, 0, tolerance=40) == [], "the recording shows the banner"
        assert banner_showing(operator_view(screen.display, tmp_path / "op.png"))


def test_without_composite_the_banner_is_blanked_and_the_answer_says_so(tmp_path: Path) -> None:
    """An X server without Composite cannot say what lies beneath: the banner's place is black,
    never the banner, and `leftOut.how` is `blanked`."""
    import anyio

    from xdesk import start_server, stop_server

    proc, display = start_server(
        ["Xvfb", "-screen", "0", f"{W}x{H}x24", "-nolisten", "tcp", "-noreset", "-extension", "Composite"],
        {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    env = {"DISPLAY": display, "PATH": os.environ.get("PATH", "")}
    window = ProbeWindow(env, "--x", "0", "--y", "0", "--width", str(W), "--height", str(H), "--stripes", "1")
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("displays", "capture"))

    async def run() -> None:
        async with sdk_stdio(copy, env_extra={"DISPLAY": display}) as (s, _):
            assert (await call(s, "displays", {}))[0]["ok"]
            assert wait_until(lambda: banner_showing(operator_view(display, tmp_path / "op.png")), timeout=20)
            env, result = await call(s, "capture", {"full": True})
            assert env["ok"] and env["result"]["leftOut"]["how"] == "blanked", env
            _, _, rows = decode_png(image_block(result)[0])
            bx, by, bw, bh = BANNER
            assert all(px(rows, x, y) == (0, 0, 0) for y in range(by, by + bh) for x in range(bx, bx + bw))
            assert px(rows, bx - 1, 5) == pattern(bx - 1, 5), "outside mcec's window the screen is as it is"

    try:
        anyio.run(run)
    finally:
        window.close()
        stop_server(proc)
