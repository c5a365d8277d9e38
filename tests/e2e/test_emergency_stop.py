"""The emergency stop, end to end: a real `mcec mcp` on the inner display of an Xvfb + Xephyr
desk, driven by the official MCP Python SDK, with "physical" input sent through the outer
display and injected input sent on the inner one.

Also the stop's bad-input cases: the forged XI1 chord (`mcec-forge`, caught by RECORD as
tampering), a burst of injected chords, a drag stopped mid-way, a display that disappears,
a garbage hotkey in the settings, and `mcec hotkey check`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession

from mcec_e2e import REPO, Copy, all_stderr, audit_with, code_of, manual_copy, sdk_stdio, wait_for_code
from xdesk import Desk, ProbeWindow, wait_until

PROMPT_TITLE = "mcec: emergency stop"
REARM_OFFSET = (41, 130)  # the prompt's `Re-arm` button, from the prompt window's top-left corner
ARTIFACTS = REPO / "target" / "test-artifacts"
CHORD = "ctrl+alt+shift+s"
FORGE = Path(os.environ.get("MCEC_FORGE_BIN", str(REPO / "target" / "debug" / "mcec-forge")))
POINTERS = ("Virtual core XTEST pointer", "Xephyr virtual mouse")
KEYBOARDS = ("Virtual core XTEST keyboard", "Xephyr virtual keyboard")
#: Keycodes of the inner server (Xephyr's keymap).
LEFT_MODIFIERS, RIGHT_MODIFIERS = {37, 64, 50}, {105, 108, 62}

pytestmark = pytest.mark.anyio


@pytest.fixture
def stop_copy(tmp_path: Path) -> Copy:
    return manual_copy(
        tmp_path / "c",
        settings="AgentCommandsEnabled = true\n",
        commands=("displays", "capture", "click", "drag", "key", "type", "send_command"),
    )


@asynccontextmanager
async def agent(copy: Copy, desk: Desk):
    async with sdk_stdio(copy, env_extra={"DISPLAY": desk.inner}) as (session, _init):
        yield session


def is_red(rgb: tuple[int, int, int]) -> bool:
    r, g, b = rgb
    return r > 150 and g < 90 and b < 90


def envelope(result) -> dict:
    return json.loads(result.content[-1].text)


async def only_the_physical_chord_trips(s: ClientSession, copy: Copy, desk: Desk) -> None:
    """The positive control after injected chords. The monitor reads the inner server's events
    in the order the server handled them, so a physical chord pressed now is read after every
    injected event sent before it: it must latch, and be the first trip. A second physical
    press is logged by the stop worker after every earlier trip (it logs them in order), so
    once its line is there, exactly one engagement and one re-press mean nothing injected
    ever tripped the latch."""
    assert await code_of(s, "displays") is None
    desk.physical("key", CHORD)
    assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped", "the physical chord did not latch"
    desk.physical("key", CHORD)
    assert wait_until(lambda: bool(audit_with(copy, "pressed again while stopped"))), copy.log()
    engaged = audit_with(copy, "emergency-stop; engaged")
    again = audit_with(copy, "pressed again while stopped")
    assert (len(engaged), len(again)) == (1, 1), f"an injected chord tripped the latch:\n{copy.log()}"


async def test_physical_chord_latches_and_every_call_is_refused(stop_copy: Copy, desk: Desk) -> None:
    async with agent(stop_copy, desk) as s:
        assert await code_of(s, "displays") is None
        desk.physical("key", CHORD)
        assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped"
        for tool in ["click", "capture", "session-status", "send_command", "provision-session",
                     "end-session", "no-such-tool"]:
            result = await s.call_tool(tool, {})
            env = envelope(result)
            assert result.is_error and env["error"]["code"] == "emergency-stopped", tool
            assert "do not retry" in env["error"]["detail"]
        # The protocol itself still answers.
        await s.send_ping()
        assert any(t.name == "session-status" for t in (await s.list_tools()).tools)
        shot = ARTIFACTS / "stopped-banner.png"
        assert wait_until(lambda: is_red(desk.pixel(desk.screenshot(shot), 512, 10))), (
            f"no red banner at the top: pixel {desk.pixel(shot, 512, 10)}"
        )
    log = stop_copy.log()
    assert "AGENT-AUDIT: emergency-stop; engaged" in log
    assert log.count("code=emergency-stopped") >= 7


async def test_injected_chord_does_not_latch(stop_copy: Copy, desk: Desk) -> None:
    async with agent(stop_copy, desk) as s:
        desk.injected("key", CHORD)
        for _ in range(20):
            desk.injected("key", CHORD)
        assert await code_of(s, "key", {"keys": CHORD}) is None  # the agent's own chord, too
        await only_the_physical_chord_trips(s, stop_copy, desk)


async def test_held_modifier_is_released_by_the_stop(stop_copy: Copy, desk: Desk) -> None:
    async with agent(stop_copy, desk) as s:
        async with anyio.create_task_group() as tg:
            held: dict = {}

            async def hold_shift() -> None:
                held["env"] = envelope(await s.call_tool("key", {"keys": "shift", "holdMs": 4000}))

            tg.start_soon(hold_shift)
            # The agent's Shift is down (on the XTEST keyboard) before the operator's chord.
            shift_down = await anyio.to_thread.run_sync(wait_until, lambda: desk.keys_down(KEYBOARDS[0]) == [50])
            assert shift_down, desk.keys_down(KEYBOARDS[0])
            assert "env" not in held, f"the key call returned before the chord: {held}"
            desk.physical("key", CHORD)
        assert held["env"]["ok"] is False and held["env"]["error"]["code"] == "emergency-stopped"
    for device in KEYBOARDS:
        down = desk.keys_down(device)
        assert down == [], f"keys still down on {device} after the stop: {down}"


def hold_right_hand_modifiers(desk: Desk) -> None:
    """Hold Control_R, Alt_R and Shift_R on the physical keyboard, until the inner server holds
    exactly those three. Xephyr keeps its modifiers in step with the state of the outer
    server's key events, pressing the first key of its own map (Control_L) when an event's
    state says Control before Xephyr saw Control_R go down; that happened once in a fresh-clone
    run. Such an attempt is released and made again, at most three times."""

    def held() -> set[int]:
        return set(desk.keys_down(KEYBOARDS[1]))

    for _ in range(3):
        desk.physical("keydown", "Control_R+Alt_R+Shift_R")
        if wait_until(lambda: held() == RIGHT_MODIFIERS):
            return
        desk.physical("keyup", "Control_R+Alt_R+Shift_R")
        wait_until(lambda: not held())
    pytest.fail(f"the inner server holds {sorted(held())}, not only the right-hand modifiers")


async def test_right_hand_modifiers_latch(stop_copy: Copy, desk: Desk) -> None:
    desk.right_hand_modifiers()
    async with agent(stop_copy, desk) as s:
        assert await code_of(s, "displays") is None
        hold_right_hand_modifiers(desk)
        # What the inner server holds is exactly the three right-hand keys, none on the left.
        assert not LEFT_MODIFIERS & set(desk.keys_down(KEYBOARDS[1]))
        assert await code_of(s, "displays") is None, "modifiers alone latched"
        desk.physical("key", "s")
        assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped"
        desk.physical("keyup", "Control_R+Alt_R+Shift_R")
    assert audit_with(stop_copy, "emergency-stop; engaged", "Ctrl+Alt+Shift+S"), stop_copy.log()


async def test_rearm_needs_physical_input_and_esc_leaves_it_stopped(stop_copy: Copy, desk: Desk) -> None:
    async with agent(stop_copy, desk) as s:
        desk.physical("key", CHORD)
        assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped"
        assert wait_until(lambda: desk.visible_window(PROMPT_TITLE)), "the re-arm prompt did not open"
        origin = desk.window_origin(PROMPT_TITLE)
        assert origin is not None
        rearm_button = [str(origin[0] + REARM_OFFSET[0]), str(origin[1] + REARM_OFFSET[1])]
        shot = ARTIFACTS / "rearm-prompt.png"
        assert wait_until(lambda: desk.pixel(desk.screenshot(shot), *map(int, rearm_button)) != (0, 0, 0)), (
            "prompt not drawn"
        )

        # An injected click on Re-arm presses the button, and is refused.
        desk.injected("mousemove", *rearm_button, "click", "1")
        await anyio.sleep(0.5)
        assert await code_of(s, "displays") == "emergency-stopped"
        assert wait_until(lambda: "AGENT-AUDIT: rearm-refused" in stop_copy.log())

        # One Esc (physical) leaves it stopped and closes the prompt.
        desk.physical("key", "Escape")
        assert wait_until(lambda: not desk.visible_window(PROMPT_TITLE)), "the first Esc did not close the prompt"
        assert len(audit_with(stop_copy, "rearm-prompt; dismissed")) == 1
        assert await code_of(s, "displays") == "emergency-stopped"

        # The chord again reopens the prompt.
        desk.physical("key", CHORD)
        assert wait_until(lambda: desk.visible_window(PROMPT_TITLE)), "a second chord did not reopen the prompt"

        # A physical click on Re-arm re-arms (once the prompt has been on screen a moment and
        # no program has moved the pointer for a second: `SHOW_SETTLE`, `STEER_WINDOW`).
        origin = desk.window_origin(PROMPT_TITLE)
        assert origin is not None
        rearm_button = [str(origin[0] + REARM_OFFSET[0]), str(origin[1] + REARM_OFFSET[1])]
        desk.physical("sleep", "1.3", "mousemove", *rearm_button, "click", "1")
        assert await wait_for_code(s, None) is None
        status = envelope(await s.call_tool("session-status", {}))["result"]
        assert status["emergencyStopped"] is False
        assert len(status["stops"]) == 1 and status["stops"][0]["rearmedAt"] is not None
        assert status["refusals"]["emergency-stopped"] >= 1
    log = stop_copy.log()
    assert "rearm-prompt; dismissed; still stopped" in log
    assert "re-armed by the operator;" in log and "counted" in log


def rearm_button_of(desk: Desk) -> list[str]:
    """Where the prompt's Re-arm button is now, as xdotool arguments."""
    assert wait_until(lambda: desk.visible_window(PROMPT_TITLE)), "the re-arm prompt did not open"
    origin = desk.window_origin(PROMPT_TITLE)
    assert origin is not None
    return [str(origin[0] + REARM_OFFSET[0]), str(origin[1] + REARM_OFFSET[1])]


async def test_forged_xi1_chord_is_tampering_and_latches(stop_copy: Copy, desk: Desk) -> None:
    if not FORGE.is_file():
        pytest.fail(f"{FORGE} is missing; build it with `cargo build -p mcec-desktop-x11 --bin mcec-forge`")
    async with agent(stop_copy, desk) as s:
        assert await code_of(s, "displays") is None
        forged = await anyio.run_process([str(FORGE)], env=desk.inner_env(), check=False)
        forged_at = time.monotonic()
        assert forged.returncode == 0, forged.stderr.decode(errors="replace")
        assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped"
        # The chord detector may see the forged keys before the RECORD watch flags them (the
        # stop then engages as a chord and the tampering lands as a re-trigger): either way a
        # stop audit line names the tampering.
        assert wait_until(lambda: bool(audit_with(stop_copy, "emergency-stop;", "tampering detected"))), (
            f"no tampering audit line:\n{stop_copy.log()}"
        )
        # A physical click on Re-arm inside the quiet period is refused, with the reason.
        button = rearm_button_of(desk)
        shot = ARTIFACTS / "tamper-prompt.png"
        assert wait_until(lambda: desk.pixel(desk.screenshot(shot), *map(int, button)) != (0, 0, 0)), (
            "prompt not drawn"
        )
        desk.physical("sleep", "0.6", "mousemove", *button, "click", "1")
        assert wait_until(lambda: bool(audit_with(stop_copy, "rearm-refused"))), "the re-arm click was not decided"
        assert time.monotonic() - forged_at < 10, "the click came after the quiet period; nothing was tested"
        refused = audit_with(stop_copy, "rearm-refused")
        assert "tampering" in refused[0], refused
        assert await code_of(s, "displays") == "emergency-stopped"
    assert "re-armed by the operator" not in stop_copy.log()


async def test_a_thousand_injected_chords_never_latch_and_calls_keep_answering(stop_copy: Copy, desk: Desk) -> None:
    answered: list[str | None] = []
    async with agent(stop_copy, desk) as s:
        done = anyio.Event()

        async def burst() -> None:
            await anyio.to_thread.run_sync(lambda: desk.injected("key", "--delay", "0", *[CHORD] * 1000))
            done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(burst)
            while not done.is_set():
                answered.append(await code_of(s, "displays"))
                await anyio.sleep(0.01)
        await only_the_physical_chord_trips(s, stop_copy, desk)
    assert answered and all(code is None for code in answered), set(answered)


async def test_slow_drag_is_stopped_mid_way_and_the_button_is_up(stop_copy: Copy, desk: Desk) -> None:
    async with agent(stop_copy, desk) as s:
        dragged: dict = {}

        async def drag() -> None:
            args = {"from": {"x": 100, "y": 100}, "to": {"x": 700, "y": 500}, "durationMs": 3000}
            dragged["env"] = envelope(await s.call_tool("drag", args))

        async with anyio.create_task_group() as tg:
            tg.start_soon(drag)
            await anyio.sleep(1.0)
            if "env" not in dragged:
                assert wait_until(lambda: 1 in desk.buttons_down(POINTERS[0]), 1.0), "the drag holds no button"
                desk.physical("key", CHORD)
        env = dragged["env"]
        assert not env["ok"], f"the drag was not stopped: {env}"
        detail = env["error"]["detail"]
        if env["error"]["code"] == "bad-arguments" and "durationMs" in detail:
            pytest.fail(f"`drag` has no `durationMs` yet (crates/desktop/src/requests/act.rs): {detail}")
        assert env["error"]["code"] == "emergency-stopped", env
        assert re.search(r"after \d+ of \d+ points", detail), detail
    for device in POINTERS:
        assert desk.buttons_down(device) == [], f"buttons still down on {device}"


GREEK = "αβγδεζηθικλμνξοπρστυφχψω"


async def test_long_type_is_stopped_mid_way_and_says_how_far_it_got(stop_copy: Copy, desk: Desk) -> None:
    # Letters the keymap lacks: each is typed through a remapped keycode, which takes
    # tens of milliseconds, so the physical chord lands mid-way (10 000 ASCII letters take about
    # 0.2 s, often over before the chord arrives).
    text = GREEK * 20
    target = ProbeWindow(desk.inner_env(), "--title", "type target", "--x", "0", "--y", "0")
    try:
        desk.injected("windowfocus", "--sync", str(target.id))
        target.wait_for(lambda line: line == "focus-in")
        async with agent(stop_copy, desk) as s:
            typed: dict = {}

            async def type_it() -> None:
                typed["env"] = envelope(await s.call_tool("type", {"text": text}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(type_it)
                # Typing has begun: the window has the first characters.
                first = await anyio.to_thread.run_sync(lambda: target.typed(10))
                desk.physical("key", CHORD)
        env = typed["env"]
        assert not env["ok"] and env["error"]["code"] == "emergency-stopped", f"the type was not stopped: {env}"
        match = re.search(r"Typed (\d+) of (\d+) characters", env["error"]["detail"])
        assert match, env
        said = int(match.group(1))
        # Every character the window got, until it has been quiet a while after the stop (the
        # chord's own keys are Latin; the operator's Shift may have raised the case).
        after = target.drain(quiet=1.0)
        rest = "".join(
            chr(int(line.rsplit(" ", 1)[1], 16)).lower()
            for line in after
            if line.startswith("key ") and not line.endswith(" -")
        )
        received = first + "".join(c for c in rest if c in GREEK)
        print(f"type stopped after {said} of {len(text)} characters; the window received {len(received)}")
        assert 10 <= said < len(text), env
        assert received == text[:said], f"the tool says {said} typed, the window received {len(received)}; after the first 10: {after}"
    finally:
        target.close()


async def test_display_that_disappears_is_survived_and_logged(stop_copy: Copy, desk: Desk) -> None:
    async with agent(stop_copy, desk) as s:
        assert await code_of(s, "displays") is None
        # The operator windows are up (their hidden stand-in window exists) before the display goes.
        assert wait_until(lambda: bool(desk.window_ids("^mcec operator$"))), "the operator windows never started"
        desk.kill_inner()
        assert await wait_for_code(s, "no-desktop") == "no-desktop"
        assert await code_of(s, "click", {"at": {"x": 5, "y": 5}}) == "no-desktop"
        # The stop worker notices the monitor's lost display by itself and says so.
        assert wait_until(lambda: "AGENT-AUDIT: display-lost" in stop_copy.log(), 10), stop_copy.log()
        assert envelope(await s.call_tool("session-status", {}))["ok"]
        assert await code_of(s, "displays") == "no-desktop"
        await s.send_ping()
    # It ran until the client hung up, and said the operator windows are gone: either winit
    # panicked on the dead connection (the UI thread catches it: "operator windows
    # unavailable"; the panic hook's message goes to stderr only) or Xlib's I/O-error handler
    # caught it first ("lost their X display"). Nothing in the log panicked.
    log = stop_copy.log()
    assert "AGENT-AUDIT: stdio-closed" in log, log + all_stderr(stop_copy)
    assert "panicked" not in log, log
    gone = ("operator windows unavailable", "the operator windows lost their X display")
    assert wait_until(lambda: any(line in stop_copy.log() for line in gone)), stop_copy.log()


@pytest.mark.parametrize("spec", ["Ctrl+Alt+Banana", "Ctrl+Shift"])
async def test_garbage_hotkey_warns_and_arms_the_default(tmp_path: Path, desk: Desk, spec: str) -> None:
    settings = f'AgentCommandsEnabled = true\nEmergencyStopHotkey = "{spec}"\n'
    copy = manual_copy(tmp_path / "c", settings=settings, commands=("displays",))
    async with agent(copy, desk) as s:
        assert await code_of(s, "displays") is None
        warned = [line for line in copy.log().splitlines() if " WARN " in line and f"`{spec}` is invalid" in line]
        assert warned, copy.log()
        assert "emergency-stop-armed; chord=Ctrl+Alt+Shift+S" in copy.log(), copy.log()
        desk.physical("key", CHORD)
        assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped"


@pytest.mark.parametrize(
    ("spec", "code", "stdout"), [("ctrl + alt+shift+s", 0, "Ctrl+Alt+Shift+S\n"), ("ctrl+shift", 2, "")]
)
def test_hotkey_check(stop_copy: Copy, spec: str, code: int, stdout: str) -> None:
    argv = [str(stop_copy.exe), "hotkey", "check", spec]
    done = subprocess.run(argv, env=stop_copy.env(), capture_output=True, text=True, timeout=30, check=False)
    assert (done.returncode, done.stdout) == (code, stdout), done.stderr
    if code:
        assert "invalid hotkey" in done.stderr, done.stderr
