"""The pointer tools an agent needs beyond click and drag, end to end through the official MCP
Python SDK on a plain Xvfb, acting on `mcec-testwin` (which prints every event it receives,
wheel buttons 4-7 and the modifier state of each press included): `scroll`, `mouse` (hover,
press and release across calls, position), `wait`, modifiers on `click`/`drag`/`scroll`,
window-relative drags with any button, and the raw `mouse:scroll`/`mouse:down`/`mouse:up`.
After every test no button and no key is held; a button held by `mouse down` is let go when
the client goes away. X11 state masks: Shift 1, Control 4."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from mcec_e2e import Copy, RawStdio, envelope_of, manual_copy, sdk_envelope, sdk_stdio
from xdesk import ProbeWindow, Screen, wait_until

COMMANDS = ("displays", "windows", "click", "drag", "scroll", "mouse", "wait", "send_command",
            "send_command.mouse")
WIN_X, WIN_Y = 100, 100  # mcec-testwin's default place (no window manager moves it)
SHIFT, CTRL = 1, 4

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def screen():
    with Screen() as s:
        yield s


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)


@pytest.fixture
def win(screen: Screen):
    w = ProbeWindow(screen.env(), "--class", "Pointer")
    yield w
    w.close()
    assert wait_until(lambda: not screen.buttons_down() and not screen.keys_down()), (
        f"held after the test: buttons {screen.buttons_down()}, keys {screen.keys_down()}"
    )


async def ok(session: Any, tool: str, args: dict) -> dict:
    env = sdk_envelope(await session.call_tool(tool, args))
    assert env["ok"], f"{tool} {args}: {env}"
    return env["result"]


async def refused(session: Any, tool: str, args: dict) -> dict:
    env = sdk_envelope(await session.call_tool(tool, args))
    assert env["ok"] is False, f"{tool} {args} should fail: {env}"
    return env["error"]


def presses(lines: list[str]) -> list[tuple[int, int, int, int]]:
    """(button, x, y, state) of every press line."""
    return [tuple(int(v) for v in line.split()[1:5]) for line in lines if line.startswith("press ")]  # type: ignore[misc]


async def drained(win: ProbeWindow) -> list[str]:
    return await anyio.to_thread.run_sync(win.drain)


def agent(copy: Copy, screen: Screen):
    return sdk_stdio(copy, env_extra={"DISPLAY": screen.display})


async def test_scroll_turns_the_wheel_each_way_with_modifiers_only_while_it_lasts(copy, screen, win) -> None:
    async with agent(copy, screen) as (s, _):
        res = await ok(s, "scroll", {"at": {"x": 50, "y": 60}, "className": "Pointer", "direction": "down"})
        assert res == {"at": {"x": WIN_X + 50, "y": WIN_Y + 60}, "direction": "down", "notches": 3}
        assert presses(await drained(win)) == [(5, 50, 60, 0)] * 3
        await ok(s, "scroll", {"at": {"x": WIN_X + 10, "y": WIN_Y + 10}, "direction": "up", "notches": 2,
                               "modifiers": ["ctrl"]})
        assert presses(await drained(win)) == [(4, 10, 10, CTRL)] * 2
        for direction, button in (("left", 6), ("right", 7)):
            await ok(s, "scroll", {"at": {"x": WIN_X + 20, "y": WIN_Y + 20}, "direction": direction, "notches": 1})
            assert presses(await drained(win)) == [(button, 20, 20, 0)]
        # The modifier was let go: a plain click right after carries no state.
        await ok(s, "click", {"at": {"x": WIN_X + 5, "y": WIN_Y + 5}})
        assert presses(await drained(win)) == [(1, 5, 5, 0)]


async def test_shift_and_ctrl_clicks_and_a_window_relative_right_drag(copy, screen, win) -> None:
    async with agent(copy, screen) as (s, _):
        await ok(s, "click", {"at": {"x": 30, "y": 40}, "className": "Pointer", "modifiers": ["shift"]})
        await ok(s, "click", {"at": {"x": 31, "y": 41}, "className": "Pointer", "modifiers": ["ctrl", "shift"]})
        assert presses(await drained(win)) == [(1, 30, 40, SHIFT), (1, 31, 41, SHIFT | CTRL)]
        res = await ok(s, "drag", {"from": {"x": 10, "y": 10}, "to": {"x": 200, "y": 150}, "className": "Pointer",
                                   "button": "right", "modifiers": ["ctrl"]})
        assert res["from"] == {"x": WIN_X + 10, "y": WIN_Y + 10} and res["to"] == {"x": WIN_X + 200, "y": WIN_Y + 150}
        lines = await drained(win)
        assert presses(lines) == [(3, 10, 10, CTRL)]
        assert [line for line in lines if line.startswith("release")][-1].startswith("release 3 200 150 ")
        err = await refused(s, "drag", {"from": {"x": 10, "y": 10}, "to": {"x": 900, "y": 10}, "className": "Pointer"})
        assert err["code"] == "bad-arguments" and err["detail"].startswith("`to`: (900, 10) lies outside the window")
        assert presses(await drained(win)) == []


async def test_mouse_hovers_holds_across_calls_releases_and_says_where_it_is(copy, screen, win) -> None:
    async with agent(copy, screen) as (s, _):
        res = await ok(s, "mouse", {"action": "move", "at": {"x": WIN_X + 300, "y": WIN_Y + 200},
                                    "path": [{"x": WIN_X + 20, "y": WIN_Y + 20}], "durationMs": 200})
        assert res["at"] == {"x": WIN_X + 300, "y": WIN_Y + 200}
        lines = await drained(win)
        assert lines[-1] == "motion 300 200" and len([x for x in lines if x.startswith("motion")]) > 5, lines
        assert presses(lines) == [], "hovering presses nothing"
        where = await ok(s, "mouse", {"action": "position"})
        assert where["at"] == {"x": WIN_X + 300, "y": WIN_Y + 200}
        assert [w["id"] for w in where["windows"]] == [win.id]

        down = await ok(s, "mouse", {"action": "down", "at": {"x": 40, "y": 50}, "className": "Pointer"})
        assert down["releasedAfterMs"] == 60000
        assert presses(await drained(win)) == [(1, 40, 50, 0)]
        assert screen.buttons_down() == [1], "the button stays down between calls"
        await ok(s, "mouse", {"action": "move", "at": {"x": WIN_X + 90, "y": WIN_Y + 80}})
        up = await ok(s, "mouse", {"action": "up"})
        assert up["wasHeld"] is True and up["at"] == {"x": WIN_X + 90, "y": WIN_Y + 80}
        assert [line for line in await drained(win) if line.startswith("release")] == ["release 1 90 80 256"]
        assert screen.buttons_down() == []


async def test_a_button_held_by_mouse_down_is_let_go_when_the_client_goes_away(copy, screen, win) -> None:
    mcp = RawStdio(copy, env_extra={"DISPLAY": screen.display})
    try:
        mcp.initialize()
        env, _ = envelope_of(mcp.call("mouse", {"action": "down", "at": {"x": WIN_X + 5, "y": WIN_Y + 5},
                                                "button": "middle"}))
        assert env["ok"], env
        assert wait_until(lambda: screen.buttons_down() == [2]), screen.buttons_down()
        assert mcp.wait_exit() == 0
    finally:
        mcp.kill()
    assert wait_until(lambda: screen.buttons_down() == []), f"still held after exit: {screen.buttons_down()}"
    assert any(line.startswith("release 2 ") for line in win.drain())


async def test_raw_scroll_down_and_up(copy, screen, win) -> None:
    async with agent(copy, screen) as (s, _):
        x, y = WIN_X + 15, WIN_Y + 25
        res = await ok(s, "send_command", {"command": f"mouse:scroll {x} {y} down 2; mouse:down {x} {y} right; "
                                                      f"mouse:up {x + 5} {y} right"})
        assert res == {"ran": 3}
        lines = await drained(win)
        assert presses(lines) == [(5, 15, 25, 0), (5, 15, 25, 0), (3, 15, 25, 0)]
        assert lines[-1].startswith("release 3 20 25 ")


async def test_wait_waits_and_bad_pointer_input_is_refused_with_nothing_pressed(copy, screen, win) -> None:
    async with agent(copy, screen) as (s, _):
        assert await ok(s, "wait", {"ms": 150}) == {"waitedMs": 150}
        at = {"x": WIN_X + 5, "y": WIN_Y + 5}
        cases = [
            ("scroll", {"at": at, "direction": "down", "notches": 0}, "`notches`: must be 1 to 50"),
            ("scroll", {"at": at, "direction": "down", "notches": 1000000}, "`notches`: must be 1 to 50"),
            ("scroll", {"at": at, "direction": "down", "notches": -2}, "notches"),
            ("scroll", {"at": at, "direction": "sideways"}, "direction"),
            ("scroll", {"at": {"x": 9000, "y": 5}, "direction": "up"}, "`at`: (9000, 5) lies on no screen"),
            ("click", {"at": at, "modifiers": ["hyper"]}, "modifiers"),
            ("click", {"at": at, "button": "fourth"}, "button"),
            ("mouse", {"action": "down"}, "`at`: is required"),
            ("mouse", {"action": "fly", "at": at}, "action"),
            ("mouse", {"action": "down", "at": at, "button": "back"}, "button"),
            ("wait", {"ms": 0}, "`ms`: must be 1 to 30000"),
            ("wait", {"ms": 30001}, "`ms`: must be 1 to 30000"),
            ("send_command", {"command": f"mouse:scroll {at['x']} {at['y']} down 0"}, "notches must be 1 to 50"),
        ]
        for tool, args, want in cases:
            err = await refused(s, tool, args)
            assert err["code"] == "bad-arguments" and want in err["detail"], (tool, args, err)
        assert presses(await drained(win)) == []
