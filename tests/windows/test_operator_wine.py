"""The emergency stop of mcec.exe under Wine, with its operator windows: the banner and the
re-arm prompt painted by the CPU painter into Win32 windows (crates/operator/src/soft/win32.rs).

The official MCP Python SDK drives `mcec.exe mcp` under Wine on an Xvfb of the test's own.
xdotool on that Xvfb is the operator's hand (Wine's low-level hooks see it without
`LLKHF_INJECTED`/`LLMHF_INJECTED`); `mcec-send-input.exe`, a second Wine process, is another
program using `SendInput` (flagged injected). Keys reach Wine only while a Wine window has X
focus, so each test opens `mcec-wintest.exe` (a window that prints its clicks) and focuses it.

    scripts/windows-build && .venv/bin/python -m pytest -q tests/windows/test_operator_wine.py
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from pathlib import Path

import anyio
import pytest

from wine_desk import WINE, WineDesk, exe, fields
from test_mcec_wine import call, run, wine_copy
from mcec_e2e import REPO, audit_with, sdk_stdio  # noqa: E402 (wine_desk puts tests/e2e on the path)
from xdesk import PROBE_PATIENCE_S, wait_until  # noqa: E402

CHORD = "ctrl+alt+shift+s"
SETTINGS = "AgentCommandsEnabled = true\n"
COMMANDS = ("displays", "windows", "capture", "click", "drag", "key", "type")
PROMPT_TITLE = "mcec: emergency stop"
#: The prompt's client area on the 1024x768 Xvfb: 460x175, centred (crates/operator/src/prompt.rs).
PROMPT_ORIGIN = (282, 297)
#: The `Re-arm` button, from the prompt's client top-left (the same layout as on X11).
REARM_OFFSET = (41, 130)
#: Where the banner is: the top centre of the screen (640 wide, crates/operator/src/overlay.rs).
BANNER_PIXEL = (512, 10)
TARGET_TITLE = "mcec stop target"
ARTIFACTS = REPO / "target" / "test-artifacts"
SCREENSHOTS = REPO / "docs" / "screenshots"


@pytest.fixture
def copy(desk: WineDesk, tmp_path: Path):
    # A stop left recorded by an earlier test would latch this one's mcec.exe at start.
    desk.forget_stop_record()
    c = wine_copy(desk, tmp_path, SETTINGS)
    c.enable_commands(*COMMANDS)
    return c


class Target:
    """mcec-wintest.exe: a window that prints `DOWN`/`UP` for every click it gets, focused so
    that the operator's keys reach Wine."""

    def __init__(self, desk: WineDesk, x: int, y: int, w: int, h: int) -> None:
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._proc = subprocess.Popen(
            [WINE, str(exe("mcec-wintest")), TARGET_TITLE, "303030", str(x), str(y), str(w), str(h)],
            env=desk.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        self.wait_for("READY")
        desk.focus(TARGET_TITLE)

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            with self._cond:
                self.lines.append(line.strip())
                self._cond.notify_all()

    def wait_for(self, prefix: str) -> str:
        """The first line starting with `prefix` (hang guard only)."""
        deadline = time.monotonic() + PROBE_PATIENCE_S
        with self._cond:
            while True:
                hit = next((l for l in self.lines if l.startswith(prefix)), None)
                if hit is not None:
                    return hit
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the target never printed {prefix!r}: {self.lines}")
                self._cond.wait(left)

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=PROBE_PATIENCE_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)


def screenshot(desk: WineDesk, path: Path) -> Path:
    """The Xvfb root as the operator sees it (Wine's windows included)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["import", "-window", "root", str(path)], env=desk.env(), check=True, timeout=30)
    return path


def pixel(path: Path, x: int, y: int) -> tuple[int, int, int]:
    out = subprocess.run(
        ["convert", str(path), "-crop", f"1x1+{x}+{y}", "-depth", "8", "txt:-"],
        capture_output=True, text=True, check=True,
    ).stdout
    r, g, b = (int(v) for v in out.splitlines()[-1].split("(")[1].split(")")[0].split(",")[:3])
    return r, g, b


def is_red(rgb: tuple[int, int, int]) -> bool:
    r, g, b = rgb
    return r > 150 and g < 90 and b < 90


def window_named(desk: WineDesk, title: str) -> bool:
    out = subprocess.run(["xdotool", "search", "--name", f"^{re.escape(title)}$"], env=desk.env(),
                         capture_output=True, text=True)
    return bool(out.stdout.split())


async def code_of(session, tool: str, **args) -> str | None:
    env = await call(session, tool, **args)
    return None if env["ok"] else env["error"]["code"]


async def wait_for_code(session, want: str | None) -> str | None:
    """Polls one cheap call until it answers `want` (the stop lands on other threads)."""
    got = "never asked"
    for _ in range(200):
        got = await code_of(session, "displays")
        if got == want:
            return got
        await anyio.sleep(0.05)
    return got


def rearm_button() -> list[str]:
    return [str(PROMPT_ORIGIN[0] + REARM_OFFSET[0]), str(PROMPT_ORIGIN[1] + REARM_OFFSET[1])]


def test_physical_chord_latches_refuses_every_tool_and_shows_the_banner(desk: WineDesk, copy) -> None:
    target = Target(desk, 0, 120, 1024, 640)
    shot = ARTIFACTS / "windows-stop-banner.png"

    async def main():
        async with sdk_stdio(copy) as (session, _):
            assert await code_of(session, "displays") is None, "armed: tools work before the chord"
            # Positive control for the banner check: no red at its place before the stop.
            assert not is_red(pixel(screenshot(desk, shot), *BANNER_PIXEL))
            desk.xdotool("key", CHORD)
            assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
            for tool, args in [("displays", {}), ("windows", {}), ("capture", {}), ("click", {"x": 5, "y": 5}),
                               ("type", {"text": "x"}), ("session-status", {}), ("no-such-tool", {})]:
                env = await call(session, tool, **args)
                assert not env["ok"] and env["error"]["code"] == "emergency-stopped", (tool, env)
            assert wait_until(lambda: is_red(pixel(screenshot(desk, shot), *BANNER_PIXEL)), PROBE_PATIENCE_S), (
                f"no red banner at the top: pixel {pixel(shot, *BANNER_PIXEL)}"
            )
            assert wait_until(lambda: window_named(desk, PROMPT_TITLE), PROBE_PATIENCE_S), "no re-arm prompt"

    try:
        run(main)
    finally:
        target.close()
    assert "AGENT-AUDIT: emergency-stop; engaged" in copy.log()
    # Whether Windows (here: Wine) keeps the operator windows out of captures is said once.
    stderr = "".join(p.read_text(errors="replace") for p in copy.root.glob("sdk-stderr*.txt"))
    assert "excluded from screen captures" in stderr or "cannot be excluded from screen captures" in stderr, stderr


def test_sendinput_chords_do_not_latch_and_the_physical_one_then_does(desk: WineDesk, copy) -> None:
    target = Target(desk, 0, 120, 1024, 640)

    async def main():
        async with sdk_stdio(copy) as (session, _):
            sent = desk.wine("mcec-send-input", "chord")
            assert sent.startswith("SENT chord Ctrl+Alt+Shift+S events=8"), sent
            # The agent's own `key` tool sends the chord with SendInput too (marked as mcec's).
            assert (await call(session, "key", keys=CHORD))["ok"] is True
            # SendInput returns after the hooks ran: the latch would have tripped by now.
            assert await code_of(session, "displays") is None, "an injected chord latched the stop"
            desk.focus(TARGET_TITLE)
            desk.xdotool("key", CHORD)
            assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped", (
                "the physical chord did not latch (the positive control)"
            )

    try:
        run(main)
    finally:
        target.close()
    assert len(audit_with(copy, "emergency-stop; engaged")) == 1, copy.log()


def test_a_stop_mid_drag_aborts_it_and_the_button_is_up(desk: WineDesk, copy) -> None:
    # The drag runs along the bottom of the target, clear of the prompt that opens mid-screen.
    target = Target(desk, 0, 120, 1024, 640)
    dragged: dict = {}

    async def main():
        async with sdk_stdio(copy) as (session, _):

            async def drag() -> None:
                args = {"from": {"x": 50, "y": 680}, "to": {"x": 950, "y": 700}, "durationMs": 4000}
                dragged["env"] = await call(session, "drag", **args)

            async with anyio.create_task_group() as tg:
                tg.start_soon(drag)
                # The drag holds the button: the target saw it go down.
                await anyio.to_thread.run_sync(lambda: target.wait_for("DOWN button=left"))
                desk.xdotool("key", CHORD)

    try:
        run(main)
        up = target.wait_for("UP button=left")
    finally:
        target.close()
    env = dragged["env"]
    assert not env["ok"] and env["error"]["code"] == "emergency-stopped", f"the drag was not stopped: {env}"
    assert re.search(r"after \d+ of \d+ points", env["error"]["detail"]), env
    # Released where the stop caught it, short of the drag's end (x 950 on screen, 946 in the client).
    assert int(fields(up)["x"]) < 946, target.lines


def test_injected_click_on_rearm_is_refused_and_a_physical_one_rearms(desk: WineDesk, copy) -> None:
    target = Target(desk, 0, 120, 1024, 640)
    shot = ARTIFACTS / "windows-rearm-prompt.png"

    async def main():
        async with sdk_stdio(copy) as (session, _):
            desk.xdotool("key", CHORD)
            assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
            assert wait_until(lambda: window_named(desk, PROMPT_TITLE), PROBE_PATIENCE_S), "no re-arm prompt"
            # The prompt is painted where the test clicks: the button is not the panel's colour.
            button = rearm_button()
            panel = pixel(screenshot(desk, shot), PROMPT_ORIGIN[0] + 5, PROMPT_ORIGIN[1] + 100)
            assert wait_until(lambda: pixel(screenshot(desk, shot), *map(int, button)) != panel), panel
            # Another program clicks Re-arm with SendInput: the prompt gets the click (the core
            # decides it, the audit says so) and refuses it.
            desk.xdotool("mousemove", *button)
            assert desk.wine("mcec-send-input", "click").startswith("SENT click")
            assert wait_until(lambda: bool(audit_with(copy, "rearm-refused")), PROBE_PATIENCE_S), copy.log()
            assert await code_of(session, "displays") == "emergency-stopped"
            assert window_named(desk, PROMPT_TITLE), "the prompt stays after a refused click"
            # The operator's own click re-arms, and tools work again.
            desk.xdotool("mousemove", *button, "click", "1")
            assert await wait_for_code(session, None) is None, copy.log()
            assert (await call(session, "capture"))["ok"] is True

    try:
        run(main)
    finally:
        target.close()
    refused = audit_with(copy, "rearm-refused")
    assert len(refused) == 1, copy.log()
    assert audit_with(copy, "re-armed"), copy.log()
