"""A client's cancel stops the call's hands: the official SDK abandons a `tools/call` (its
task is cancelled, so it sends `notifications/cancelled`), or an HTTP client hangs up, and mcec
stops that call at its next step, releases what it held, audits `code=cancelled` with how far the call got, and goes on
serving: a call running beside it, and the next call, complete normally.

What "stopped at its next step" means here is checked against what the target saw, never
against a clock: the last event `mcec-testwin` received is the last one the audit line says
was sent, nothing arrives afterwards, and no button or key is left down."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Callable

import anyio
import pytest

from mcec_e2e import (
    HANG_GUARD_S,
    Copy,
    host_settings,
    manual_copy,
    read_http_response,
    rpc,
    sdk_envelope,
    sdk_stdio,
    start_host,
)
from test_hands_at_exit import post
from xdesk import ProbeWindow, Screen, wait_until

COMMANDS = ("windows", "drag", "type", "key", "focus", "send_command", "send_command.chars", "send_command.pause")
WIN_X, WIN_Y = 100, 100
DRAG = {"from": {"x": WIN_X + 10, "y": WIN_Y + 10}, "to": {"x": WIN_X + 380, "y": WIN_Y + 10}, "durationMs": 3000}

pytestmark = pytest.mark.anyio


@pytest.fixture
def win(screen: Screen):
    w = ProbeWindow(screen.env(), "--title", "cancel target", "--class", "CancelTarget")
    yield w
    w.close()


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)


def agent(copy: Copy, screen: Screen):
    return sdk_stdio(copy, env_extra={"DISPLAY": screen.display})


async def cancel_after(session: Any, tool: str, args: dict, ready: Callable[[], object]) -> None:
    """Start `tool`, wait for `ready` (blocking, run in a thread), then abandon the call the
    way an SDK user does: by cancelling the task that awaits it."""
    answered: list[Any] = []

    async def run() -> None:
        answered.append(await session.call_tool(tool, args))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await anyio.to_thread.run_sync(ready)
        tg.cancel_scope.cancel()
    assert not answered, f"{tool} answered before it was cancelled: {answered}"


def cancelled_line(copy: Copy, tool: str) -> str:
    """The audit line of the cancelled call (waits for it: the call may still be unwinding)."""
    needle = f"tool={tool} ok=false code=cancelled"
    assert wait_until(lambda: needle in copy.log(), timeout=HANG_GUARD_S), copy.log()[-3000:]
    return next(line for line in copy.log().splitlines() if needle in line)


def nothing_held(screen: Screen) -> None:
    assert wait_until(lambda: not screen.buttons_down() and not screen.keys_down()), (
        f"held: buttons {screen.buttons_down()}, keys {screen.keys_down()}"
    )


async def still_serves(session: Any) -> None:
    """The session was not torn down: a short drag runs to its end."""
    done = sdk_envelope(await session.call_tool("drag", {**DRAG, "durationMs": 0}))
    assert done["ok"], done


async def test_a_cancelled_drag_stops_at_its_next_point_while_a_call_beside_it_completes(
    copy: Copy, screen: Screen, win: ProbeWindow
) -> None:
    async with agent(copy, screen) as (session, _), agent(copy, screen) as (other, _):
        beside: list[dict] = []
        later: list[ProbeWindow] = []

        async def wait_beside(s: Any) -> None:
            args = {"title": "opened later", "condition": "appears", "timeoutMs": 20000}
            beside.append(sdk_envelope(await s.call_tool("windows", args)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_beside, session)
            tg.start_soon(wait_beside, other)
            started = time.monotonic()

            def pressed_then_a_while() -> None:
                win.wait_for(lambda line: line.startswith("press 1 10 10"))
                time.sleep(max(0.0, 0.4 - (time.monotonic() - started)))

            await cancel_after(session, "drag", DRAG, pressed_then_a_while)
            line = cancelled_line(copy, "drag")
            later.append(await anyio.to_thread.run_sync(lambda: ProbeWindow(screen.env(), "--title", "opened later")))
        try:
            assert [e["ok"] for e in beside] == [True, True], beside
            events = win.drain(1.0)
            m = re.search(r"aborted after (\d+) of (\d+) points, at \((-?\d+), (-?\d+)\)", line)
            assert m, line
            done, total, x, y = (int(g) for g in m.groups())
            assert done < total, line
            motions = [ln for ln in events if ln.startswith("motion ")]
            assert motions, events
            assert motions[-1] == f"motion {x - WIN_X} {y - WIN_Y}", (line, events[-5:])
            after = events[events.index(motions[-1]) + 1 :]
            assert [e.split()[0] for e in after] == ["release"], f"events after the last point: {after}"
            nothing_held(screen)
            await still_serves(session)
        finally:
            for w in later:
                w.close()


async def test_a_cancelled_type_stops_between_characters(copy: Copy, screen: Screen, win: ProbeWindow) -> None:
    text = "abcdefghij" * 1000
    async with agent(copy, screen) as (session, _):
        focused = sdk_envelope(await session.call_tool("focus", {"className": "CancelTarget"}))
        assert focused["ok"], focused
        await cancel_after(session, "type", {"text": text}, lambda: win.wait_for(lambda l: l.startswith("key ")))
        line = cancelled_line(copy, "type")
        m = re.search(r"Typed (\d+) of (\d+) characters", line)
        assert m, line
        done = int(m.group(1))
        assert 0 < done < len(text), line
        events = [ln for ln in win.drain(1.0) if ln.startswith("key ")]
        # The first key line was consumed by the wait above; every other one is a typed character.
        assert len(events) + 1 == done, (line, len(events))
        nothing_held(screen)
        await still_serves(session)


async def test_a_cancelled_key_hold_lets_go(copy: Copy, screen: Screen, win: ProbeWindow) -> None:
    async with agent(copy, screen) as (session, _):
        focused = sdk_envelope(await session.call_tool("focus", {"className": "CancelTarget"}))
        assert focused["ok"], focused
        args = {"keys": "ctrl+a ctrl+b ctrl+c ctrl+d", "holdMs": 2000}
        await cancel_after(session, "key", args, lambda: win.wait_for(lambda l: l.startswith("key ") and " 61 " in l))
        line = cancelled_line(copy, "key")
        assert "Pressed 1 of 4 chords (the last one while it was held)" in line, line
        events = win.drain(1.0)
        assert not [e for e in events if e.startswith("key ")], f"a key pressed after the cancel: {events}"
        assert sum(e.startswith("keyup ") for e in events) == 2, events
        nothing_held(screen)
        await still_serves(session)


async def test_a_cancelled_windows_wait_ends_at_once(copy: Copy, screen: Screen) -> None:
    async with agent(copy, screen) as (session, _):
        args = {"title": "never opens", "condition": "appears", "timeoutMs": 20000}
        await cancel_after(session, "windows", args, lambda: time.sleep(0.4))
        line = cancelled_line(copy, "windows")
        assert re.search(r"The wait ended after \d+ of 20000 ms", line), line
        assert "code=timeout" not in copy.log(), line
        await still_serves(session)


async def test_a_cancelled_command_line_drops_the_rest(copy: Copy, screen: Screen, win: ProbeWindow) -> None:
    letters = "abcdefghijklmnopqrst"
    command = "; ".join(f"chars:{c}; pause:200" for c in letters)
    async with agent(copy, screen) as (session, _):
        focused = sdk_envelope(await session.call_tool("focus", {"className": "CancelTarget"}))
        assert focused["ok"], focused
        await cancel_after(
            session, "send_command", {"command": command}, lambda: win.wait_for(lambda l: l.startswith("key "))
        )
        line = cancelled_line(copy, "send_command")
        m = re.search(r"Ran (\d+) of (\d+) commands", line)
        assert m, line
        ran, total = int(m.group(1)), int(m.group(2))
        assert total == 2 * len(letters) and 0 < ran < total, line
        typed = 1 + len([ln for ln in win.drain(1.0) if ln.startswith("key ")])
        assert typed == (ran + 1) // 2, (line, typed)
        nothing_held(screen)
        await still_serves(session)


# --------------------------------------------------------------------------- HTTP: the client hangs up

HTTP_CASES = {
    "windows": ({"title": "never opens", "condition": "appears", "timeoutMs": 20000}, None),
    "type": ({"text": "abcdefghij" * 1000}, "key "),
    "send_command": ({"command": "; ".join(f"chars:{c}; pause:200" for c in "abcdefghij")}, "key "),
}


@pytest.mark.parametrize("tool", sorted(HTTP_CASES))
def test_an_http_client_hanging_up_cancels_its_call(
    tmp_path: Path, screen: Screen, win: ProbeWindow, port: int, token: str, tool: str
) -> None:
    copy = manual_copy(tmp_path / "h", settings=host_settings(port, token), commands=COMMANDS)
    copy.extra_env["DISPLAY"] = screen.display
    host = start_host(copy, port, token)
    args, first_event = HTTP_CASES[tool]
    try:
        if first_event:
            focus = post(port, token, rpc("tools/call", {"name": "focus", "arguments": {"className": "CancelTarget"}}))
            status, body = read_http_response(focus)
            focus.close()
            assert status == 200 and '\\"ok\\":true' in body.decode(), body
        sock = post(port, token, rpc("tools/call", {"name": tool, "arguments": args}, id="long"))
        if first_event:
            win.wait_for(lambda line: line.startswith(first_event))
        else:
            time.sleep(0.4)
        sock.close()
        line = cancelled_line(copy, tool)
        assert "code=timeout" not in copy.log(), line
        if first_event:
            events = [ln for ln in win.drain(1.0) if ln.startswith("key ")]
            if tool == "type":
                done = int(re.search(r"Typed (\d+) of", line).group(1))
                assert len(events) + 1 == done, (line, len(events))
            else:
                ran = int(re.search(r"Ran (\d+) of", line).group(1))
                assert len(events) + 1 == (ran + 1) // 2, (line, len(events))
        nothing_held(screen)
    finally:
        host.stop()
