"""A call admitted before the emergency stop but still queued on the input lock when the
operator stops must never act afterwards.

One agent session starts a slow actuation (a 3 s `drag`, or `key` holding shift for 3 s), then
queues a second one behind it (`click`, `key`, `type` or `window`), then the operator presses
the chord on the physical keyboard (the outer display of the Xvfb + Xephyr desk). Both calls
must answer `emergency-stopped`, the queued one saying it was waiting, and `mcec-testwin`, which
fills the inner screen and prints every event it gets, must see nothing of the queued call.
Each case first runs the queued call unstopped, so the window provably reports its effect."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from mcec_e2e import host_settings, manual_copy, sdk_envelope, sdk_http, sdk_stdio, start_host
from xdesk import Desk, ProbeWindow, wait_until

CHORD = "ctrl+alt+shift+s"
COMMANDS = ("displays", "windows", "click", "drag", "key", "type", "window")
XTEST_POINTER, XTEST_KEYBOARD = "Virtual core XTEST pointer", "Virtual core XTEST keyboard"
BLOCKERS = {
    "drag": ("drag", {"from": {"x": 100, "y": 100}, "to": {"x": 700, "y": 100}, "durationMs": 3000}),
    "key-hold": ("key", {"keys": "shift", "holdMs": 3000}),
}
# What the queued call does, and how to tell from the window's report that it did.
QUEUED = {
    "click": ("click", {"at": {"x": 900, "y": 600}}),
    "key": ("key", {"keys": "a"}),
    "type": ("type", {"text": "qz"}),
    "window": ("window", {"action": "move", "x": 60, "y": 40}),
}

pytestmark = pytest.mark.anyio


def acted(victim: str, lines: list[str], origin: tuple[int, int] | None) -> bool:
    """True when the window's report shows the queued call's effect."""
    chars = {
        chr(int(line.rsplit(" ", 1)[1], 16))
        for line in lines
        if line.startswith("key ") and not line.endswith(" -")
    }
    if victim == "click":
        return any(line.startswith("press 1 900 600") for line in lines)
    if victim == "key":
        return "a" in chars
    if victim == "type":
        return bool(chars & {"q", "z"})
    return origin == (60, 40)


async def call(session, tool: str, args: dict) -> dict:
    return sdk_envelope(await session.call_tool(tool, args))


@pytest.mark.parametrize("victim", sorted(QUEUED))
@pytest.mark.parametrize("blocker", sorted(BLOCKERS))
async def test_a_call_queued_before_the_stop_does_not_act_after_it(tmp_path: Path, blocker: str, victim: str) -> None:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)
    with Desk() as desk:
        win = ProbeWindow(desk.inner_env(), "--x", "0", "--y", "0", "--width", "1024",
                          "--height", "768", "--title", "queued target")
        try:
            async with sdk_stdio(copy, env_extra={"DISPLAY": desk.inner}) as (s, _):
                tool, args = QUEUED[victim]
                if victim == "window":
                    args = {**args, "handle": win.id}
                    control = {**args, "x": 20, "y": 10}
                else:
                    control = args
                # Positive control: unstopped, the queued call's effect is reported.
                assert (await call(s, tool, control))["ok"]
                seen = await anyio.to_thread.run_sync(win.drain)
                if victim == "window":
                    assert wait_until(lambda: desk.window_origin("queued target") == (20, 10))
                else:
                    assert acted(victim, seen, None), f"the control {tool} {control} left no trace: {seen}"

                answers: dict[str, dict] = {}

                async def run(name: str, tool: str, args: dict) -> None:
                    answers[name] = await call(s, tool, args)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(run, "blocker", *BLOCKERS[blocker])
                    # The blocker holds the input lock once its first event reaches the window.
                    first = "press 1" if blocker == "drag" else "key "
                    await anyio.to_thread.run_sync(win.wait_for, lambda line: line.startswith(first))
                    tg.start_soon(run, "queued", tool, args)
                    await anyio.sleep(0.6)
                    await anyio.to_thread.run_sync(desk.physical, "key", CHORD)

                assert answers["blocker"]["ok"] is False, answers["blocker"]
                assert answers["blocker"]["error"]["code"] == "emergency-stopped"
                queued = answers["queued"]
                assert queued["ok"] is False and queued["error"]["code"] == "emergency-stopped", queued
                # It was admitted and waiting on the lock when the stop engaged: the case this
                # test exists for, not a call refused at the door.
                assert "waiting behind another action" in queued["error"]["detail"], queued
                after = await anyio.to_thread.run_sync(win.drain, 1.0)
                origin = desk.window_origin("queued target")
                assert not acted(victim, after, origin), f"{tool} acted after the stop: {after}, origin {origin}"
            assert desk.buttons_down(XTEST_POINTER) == []
            assert desk.keys_down(XTEST_KEYBOARD) == []
        finally:
            win.close()
    assert "AGENT-AUDIT: emergency-stop; engaged" in copy.log()


async def test_calls_from_two_http_sessions_share_the_lock_and_the_stop(tmp_path: Path, port: int, token: str) -> None:
    """One host, two MCP sessions over HTTP: session A drags, session B's click queues behind
    it on the host's one input lock; the physical chord refuses both and B never clicks."""
    copy = manual_copy(tmp_path / "c", settings=host_settings(port, token), commands=COMMANDS)
    with Desk() as desk:
        copy.extra_env["DISPLAY"] = desk.inner
        win = ProbeWindow(desk.inner_env(), "--x", "0", "--y", "0", "--width", "1024",
                          "--height", "768", "--title", "queued target")
        host = start_host(copy, port, token)
        try:
            headers = host.auth_headers()
            async with sdk_http(host.url, headers) as (a, _), sdk_http(host.url, headers) as (b, _):
                tool, args = QUEUED["click"]
                assert (await call(b, tool, args))["ok"]  # control: B's click lands when unstopped
                assert acted("click", await anyio.to_thread.run_sync(win.drain), None)
                answers: dict[str, dict] = {}

                async def run(name: str, session, tool: str, args: dict) -> None:
                    answers[name] = await call(session, tool, args)

                async with anyio.create_task_group() as tg:
                    # Low on the screen: the host's own window sits at the top left.
                    low_drag = {"from": {"x": 100, "y": 650}, "to": {"x": 700, "y": 650}, "durationMs": 3000}
                    tg.start_soon(run, "a", a, "drag", low_drag)
                    await anyio.to_thread.run_sync(win.wait_for, lambda line: line.startswith("press 1"))
                    tg.start_soon(run, "b", b, tool, args)
                    await anyio.sleep(0.6)
                    await anyio.to_thread.run_sync(desk.physical, "key", CHORD)
                assert answers["a"]["error"]["code"] == "emergency-stopped", answers
                assert answers["b"]["error"]["code"] == "emergency-stopped", answers
                assert "waiting behind another action" in answers["b"]["error"]["detail"], answers
                after = await anyio.to_thread.run_sync(win.drain, 1.0)
                assert not acted("click", after, None), f"session B clicked after the stop: {after}"
            assert desk.buttons_down(XTEST_POINTER) == []
        finally:
            host.stop()
            win.close()


async def test_a_button_held_by_mouse_down_is_released_by_the_stop(tmp_path: Path) -> None:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("mouse",))
    with Desk() as desk:
        win = ProbeWindow(desk.inner_env(), "--x", "0", "--y", "0", "--width", "1024",
                          "--height", "768", "--title", "held button")
        try:
            async with sdk_stdio(copy, env_extra={"DISPLAY": desk.inner}) as (s, _):
                held = await call(s, "mouse", {"action": "down", "at": {"x": 500, "y": 400}, "button": "right"})
                assert held["ok"], held
                await anyio.to_thread.run_sync(win.wait_for, lambda line: line.startswith("press 3 500 400"))
                assert desk.buttons_down(XTEST_POINTER) == [3], "the button is down before the stop"
                await anyio.to_thread.run_sync(desk.physical, "key", CHORD)
                await anyio.to_thread.run_sync(win.wait_for, lambda line: line.startswith("release 3 "))
                assert wait_until(lambda: desk.buttons_down(XTEST_POINTER) == [])
                after = await call(s, "mouse", {"action": "up", "button": "right"})
                assert after["error"]["code"] == "emergency-stopped", after
        finally:
            win.close()
