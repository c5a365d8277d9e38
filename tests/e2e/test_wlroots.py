"""mcec on a wlroots compositor without sway's IPC (issue 27): the layout from `wl_output`, the
windows from `wlr-foreign-toplevel-management`, pixels from `wlr-screencopy`, and no stop.

A real sway 1.7 on an Xvfb (`swaydesk.py`) with `SWAYSOCK` removed from mcec's environment:
sway implements both protocols, so it stands for labwc, river, Hyprland or wayfire, which
have no sway IPC. Driven through the official MCP Python SDK, with `swaymsg` (the test's own,
not mcec's) as the witness. `displays` answers sway's output; `windows` lists a Wayland-native
window (`foot`) without `bounds`, with the protocol's limit as `boundsUnavailable`, and not a
window with one of mcec's own app ids; a capture shows the window's pixels, and none of the
own window's (blanked, said in `leftOut`); capturing a window answers `unavailable` naming the
protocol. Actuation is refused `emergency-stop-unavailable` naming the compositor; with
`UnsafeAllowActuationWithoutStopOnWayland`, `focus` focuses the window, and a click relative
to a window answers `unavailable` (no geometry).

Build first: `cargo build -p mcec`."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

import anyio
import pytest

from mcec_e2e import Copy, audit_lines, manual_copy, sdk_stdio
from swaydesk import SwayDesk, views
from test_desktop import call, decode_png, ok
from test_picture import image_block
from test_sway import clients, focused, sway, until  # noqa: F401 (clients, sway: the shared fixtures)

COMMANDS = ("displays", "windows", "capture", "click", "focus")
UNSAFE = "UnsafeAllowActuationWithoutStopOnWayland = true\n"
PROTOCOL = "wlr-foreign-toplevel-management"
RED, GREEN = (255, 0, 0), (0, 255, 0)

pytestmark = pytest.mark.anyio


def without_ipc(sway: SwayDesk) -> dict[str, str | None]:
    """The session as a compositor without sway's IPC shows it: no `SWAYSOCK`."""
    return {**sway.session_env(), "SWAYSOCK": None}


def copy_with(tmp_path: Path, extra: str = "") -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n" + extra, commands=COMMANDS)


def foot(sway: SwayDesk, clients, app_id: str, colour: str) -> dict:
    """A `foot` with `app_id` painted `colour` (hex), once sway lists it."""
    before = {v["id"] for v in views(sway.tree())}
    clients("foot", "--app-id", app_id, "--title", app_id, "-o", f"colors.background={colour}", "sh", "-c", "sleep 600")
    return until(f"{app_id}'s window", lambda: next((v for v in views(sway.tree()) if v["id"] not in before), None))


def share(rows: list[bytes], colour: tuple[int, int, int]) -> float:
    """The share of the pixels that are `colour`."""
    want, total, hits = bytes(colour), 0, 0
    for row in rows:
        for i in range(0, len(row), 3):
            total += 1
            hits += row[i : i + 3] == want
    return hits / max(total, 1)


async def listed(session: Any, app_id: str) -> dict | None:
    windows = (await ok(session, "windows"))["windows"]
    return next((w for w in windows if w["className"] == app_id), None)


def json_outputs(sway: SwayDesk) -> list[dict]:
    """sway's own account of its outputs (the witness)."""
    return json.loads(sway.swaymsg("-t", "get_outputs").stdout)


def shown(sway: SwayDesk, app_id: str) -> bool:
    """Whether sway shows a window with `app_id`."""
    return any(v.get("app_id") == app_id and v.get("visible") for v in views(sway.tree()))


async def until_async(f: Callable[[], Any]) -> Any:
    """`f()` (awaited when it is a coroutine) once it is truthy; 20 s is a hang guard."""
    deadline = time.monotonic() + 20.0
    while True:
        got = f()
        if hasattr(got, "__await__"):
            got = await got
        if got:
            return got
        assert time.monotonic() < deadline, "timed out"
        await anyio.sleep(0.05)


async def test_windows_displays_and_capture_come_from_the_protocols_and_actuation_is_refused(
    tmp_path: Path, sway: SwayDesk, clients
) -> None:
    copy = copy_with(tmp_path)
    foot(sway, clients, "mcec-e2e-red", "ff0000")
    async with sdk_stdio(copy, env_extra=without_ipc(sway)) as (session, _):
        status = await ok(session, "session-status")
        assert status["emergencyStop"]["armed"] is False, status
        displays = await ok(session, "displays")
        (output,) = [o for o in json_outputs(sway) if o["active"]]
        rect = output["rect"]
        assert [(d["bounds"]["width"], d["bounds"]["height"]) for d in displays["displays"]] == [
            (rect["width"], rect["height"])
        ], displays
        red = await until_async(lambda: listed(session, "mcec-e2e-red"))
        assert "bounds" not in red and PROTOCOL in red["boundsUnavailable"], red
        assert red["title"] == "mcec-e2e-red", red

        env, result = await call(session, "capture", {})
        assert env["ok"], env
        _, _, rows = decode_png(image_block(result)[0])
        assert share(rows, RED) > 0.5, "the red window's pixels are in the capture"

        env, _ = await call(session, "capture", {"handle": red["id"]})
        assert env["error"]["code"] == "unavailable" and PROTOCOL in env["error"]["detail"], env

        env, _ = await call(session, "click", {"at": {"x": 10, "y": 10}})
        assert env["error"]["code"] == "emergency-stop-unavailable", env
        assert "`sway`" in env["error"]["detail"], env

        # A window with one of mcec's own app ids: never listed, never in a picture.
        foot(sway, clients, "mcec-overlay", "00ff00")
        await until_async(lambda: shown(sway, "mcec-overlay"))
        assert await listed(session, "mcec-overlay") is None
        env, result = await call(session, "capture", {})
        assert env["ok"], env
        assert env["result"]["leftOut"]["how"] == "blanked", env["result"]
        _, _, rows = decode_png(image_block(result)[0])
        assert share(rows, GREEN) == 0.0, "mcec's own window is blanked"
    log = copy.log()
    assert any("emergency-stop-unavailable" in line and "`sway`" in line for line in audit_lines(log)), log


async def test_with_the_unsafe_key_focus_works_and_window_relative_points_are_refused(
    tmp_path: Path, sway: SwayDesk, clients
) -> None:
    copy = copy_with(tmp_path, UNSAFE)
    left = foot(sway, clients, "mcec-e2e-left", "ff0000")
    right = foot(sway, clients, "mcec-e2e-right", "0000ff")
    until("the newest window focused", lambda: focused(sway) == right["id"])
    async with sdk_stdio(copy, env_extra=without_ipc(sway)) as (session, _):
        target = await until_async(lambda: listed(session, "mcec-e2e-left"))
        assert target["foreground"] is False, target
        result = await ok(session, "focus", {"handle": target["id"]})
        assert result["window"]["foreground"] is True, result
        until("the left window focused in sway", lambda: focused(sway) == left["id"])
        env, _ = await call(session, "click", {"handle": target["id"], "at": {"x": 5, "y": 5}})
        assert env["error"]["code"] == "unavailable" and PROTOCOL in env["error"]["detail"], env
