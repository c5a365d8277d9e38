"""The stop outlives the process: a physical stop is recorded for the display the moment it
engages; a relaunched mcec (after SIGTERM or SIGKILL, with another HOME and another spelling
of DISPLAY) comes up stopped with the banner and the prompt; a stop seen by one of two
running `mcec mcp` holds in both; the host and a session copy started later come up stopped;
a physical re-arm re-arms every running mcec and the next one; a record deleted by a program
re-arms nothing; a record that cannot be read is a stop.

Real `mcec mcp` processes on the inner display of an Xvfb + Xephyr desk, driven by the
official MCP Python SDK (raw stdio only for the process that is killed by a signal), with
"physical" input sent through the outer display."""

from __future__ import annotations

import os
import pwd
import signal
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import pytest

from mcec_e2e import (
    REPO,
    Copy,
    code_of,
    envelope_of,
    host_settings,
    manual_copy,
    sdk_envelope,
    sdk_http,
    sdk_stdio,
    session_copy,
    start_host,
    wait_for_code,
)
from xdesk import Desk, wait_until

PROMPT_TITLE = "mcec: emergency stop"
REARM_OFFSET = (41, 130)  # the prompt's `Re-arm` button, from the prompt window's top-left corner
CHORD = "ctrl+alt+shift+s"
ARTIFACTS = REPO / "target" / "test-artifacts"
RECORDED = "a stop is recorded for this display"

pytestmark = pytest.mark.anyio


def stop_copy(root: Path, hotkey: str | None = None) -> Copy:
    settings = "AgentCommandsEnabled = true\n"
    if hotkey:
        settings += f'EmergencyStopHotkey = "{hotkey}"\n'
    return manual_copy(root, settings=settings, commands=("displays", "click"))


def record_of(desk: Desk) -> Path:
    """Where mcec keeps the inner display's stop record (the home from the user database)."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    return home / ".local/state/mcec/stop" / f"display-{desk.inner.lstrip(':')}"


@asynccontextmanager
async def agent(copy: Copy, desk: Desk, display: str | None = None):
    async with sdk_stdio(copy, env_extra={"DISPLAY": display or desk.inner}) as (session, _init):
        yield session


def is_red(rgb: tuple[int, int, int]) -> bool:
    r, g, b = rgb
    return r > 150 and g < 90 and b < 90


def banner_and_prompt_shown(desk: Desk, name: str) -> None:
    shot = ARTIFACTS / f"{name}.png"
    assert wait_until(lambda: is_red(desk.pixel(desk.screenshot(shot), 512, 10)), 10), (
        f"no red banner at the top: pixel {desk.pixel(shot, 512, 10)}"
    )
    assert wait_until(lambda: desk.visible_window(PROMPT_TITLE), 10), "the re-arm prompt did not open"


def click_rearm(desk: Desk) -> None:
    """The operator's own click on the (topmost) prompt's Re-arm button, once it is drawn."""
    assert wait_until(lambda: desk.visible_window(PROMPT_TITLE), 10), "the re-arm prompt did not open"
    origin = desk.window_origin(PROMPT_TITLE)
    assert origin is not None
    button = (origin[0] + REARM_OFFSET[0], origin[1] + REARM_OFFSET[1])
    shot = ARTIFACTS / "durable-prompt.png"
    assert wait_until(lambda: desk.pixel(desk.screenshot(shot), *button) != (0, 0, 0)), "prompt not drawn"
    # A click counts once the prompt has been on screen a moment (`SHOW_SETTLE`, 0.3 s).
    desk.physical("sleep", "0.6", "mousemove", str(button[0]), str(button[1]), "click", "1")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
async def test_a_physical_stop_survives_a_signal_and_a_relaunch_comes_up_stopped(
    tmp_path: Path, desk: Desk, raw_stdio, sig: signal.Signals
) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    assert not record.exists(), "the harness starts every display without a record"
    first = raw_stdio(copy, {"DISPLAY": desk.inner})
    first.initialize()
    assert envelope_of(first.call("displays", id=2))[0]["ok"], first.stderr()
    desk.physical("key", CHORD)
    assert wait_until(lambda: record.exists(), 10), "the stop was not recorded"
    assert envelope_of(first.call("displays", id=3))[0]["error"]["code"] == "emergency-stopped"
    first.proc.send_signal(sig)
    # SIGTERM is handled (calls stopped, input released, exit 0); SIGKILL cannot be.
    assert first.proc.wait(timeout=30) == (0 if sig == signal.SIGTERM else -sig)
    assert record.read_text().startswith("mcec-stop v1\nreason: operator pressed Ctrl+Alt+Shift+S"), record.read_text()

    # The same copy, relaunched with its own HOME/XDG dirs and another spelling of the display.
    async with agent(copy, desk, display=f"{desk.inner}.0") as s:
        for tool in ("displays", "click", "session-status", "provision-session", "end-session"):
            assert await code_of(s, tool, {"at": {"x": 5, "y": 5}} if tool == "click" else {}) == "emergency-stopped", tool
        banner_and_prompt_shown(desk, f"durable-relaunch-{sig.name}")
        click_rearm(desk)
        assert await wait_for_code(s, None) is None, "a physical re-arm did not re-arm the relaunched mcec"
    assert not record.exists(), "the re-arm did not remove the record"
    assert f"emergency-stop; engaged; reason={RECORDED}" in copy.log(), copy.log()

    # And the next one starts armed.
    async with agent(copy, desk) as s:
        assert await code_of(s, "displays") is None


async def test_a_stop_seen_by_one_of_two_running_mcec_holds_in_both_and_one_rearm_frees_both(
    tmp_path: Path, desk: Desk
) -> None:
    # `other` listens for a different chord, so it only learns of this stop from the record.
    mine, other = stop_copy(tmp_path / "a"), stop_copy(tmp_path / "b", hotkey="Ctrl+Alt+Shift+X")
    async with AsyncExitStack() as stack:
        a = await stack.enter_async_context(agent(mine, desk))
        b = await stack.enter_async_context(agent(other, desk))
        assert await code_of(a, "displays") is None and await code_of(b, "displays") is None
        desk.physical("key", CHORD)
        assert await wait_for_code(a, "emergency-stopped") == "emergency-stopped"
        assert await wait_for_code(b, "emergency-stopped") == "emergency-stopped"
        assert f"reason={RECORDED}" in other.log(), other.log()
        assert "reason=operator pressed Ctrl+Alt+Shift+S" in mine.log(), mine.log()

        click_rearm(desk)
        assert await wait_for_code(a, None) is None, f"the first mcec stayed stopped:\n{mine.log()}"
        assert await wait_for_code(b, None) is None, f"the second mcec stayed stopped:\n{other.log()}"
        assert not record_of(desk).exists()
        c = await stack.enter_async_context(agent(mine, desk))
        assert await code_of(c, "displays") is None, "a new mcec after the re-arm is not armed"
    logs = mine.log() + other.log()
    assert "re-armed by the operator;" in logs
    assert "re-armed after a re-arm in another mcec (physical input)" in logs


async def test_a_record_deleted_without_a_physical_rearm_rearms_nothing_and_comes_back(
    tmp_path: Path, desk: Desk
) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    async with agent(copy, desk) as s:
        desk.physical("key", CHORD)
        assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped"
        assert wait_until(lambda: record.exists(), 10), "the stop was not recorded"
        await anyio.sleep(2.5)  # the chord itself is older than the re-arm window now
        record.unlink()  # what a program running as the user could do
        assert wait_until(lambda: "rearm-refused" in copy.log(), 10), copy.log()
        assert await code_of(s, "displays") == "emergency-stopped"
        assert wait_until(lambda: record.exists(), 10), "the running mcec did not write the record back"
    assert "re-armed" not in copy.log()


@pytest.mark.parametrize("garbage", [b"not a stop record\n", b"\xff\xfe\x00", b""], ids=["text", "binary", "empty"])
async def test_an_unreadable_record_is_a_stop(tmp_path: Path, desk: Desk, garbage: bytes) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    # The positive control: with no record this copy starts armed.
    async with agent(copy, desk) as s:
        assert await code_of(s, "displays") is None
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_bytes(garbage)
    async with agent(copy, desk) as s:
        assert await code_of(s, "displays") == "emergency-stopped"
        assert await code_of(s, "click", {"at": {"x": 5, "y": 5}}) == "emergency-stopped"
        banner_and_prompt_shown(desk, "durable-garbage")
        click_rearm(desk)
        assert await wait_for_code(s, None) is None
    assert "the stop record cannot be read" in copy.log(), copy.log()
    assert not record.exists()


async def test_a_recorded_stop_holds_in_the_host_and_in_a_session_copy(
    tmp_path: Path, desk: Desk, raw_stdio, port: int, token: str
) -> None:
    settings = host_settings(port, token, extra="AllowSessionProvisioning = true\n")
    operator = manual_copy(tmp_path / "op", settings=settings, commands=("displays",))
    operator.extra_env["DISPLAY"] = desk.inner

    async def host_answers() -> str | None:
        host = start_host(operator, port, token)
        try:
            async with sdk_http(host.url, host.auth_headers()) as (s, _):
                return await code_of(s, "displays")
        finally:
            host.stop()

    # The positive controls, before any stop: the host and a session copy answer.
    assert await host_answers() is None
    async with agent(operator, desk) as s:
        handoff = sdk_envelope(await s.call_tool("provision-session", {"mcpServer": False}))["result"]
    sess = session_copy(operator, handoff)
    async with agent(sess, desk) as s:
        assert await code_of(s, "session-status") is None

    first = raw_stdio(operator, {"DISPLAY": desk.inner})
    first.initialize()
    desk.physical("key", CHORD)
    assert wait_until(lambda: record_of(desk).exists(), 10), "the stop was not recorded"
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(timeout=30)

    assert await host_answers() == "emergency-stopped"
    async with agent(sess, desk) as s:
        assert await code_of(s, "session-status") == "emergency-stopped"


async def test_a_record_that_cannot_be_removed_keeps_the_stop(tmp_path: Path, desk: Desk) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    record.mkdir(parents=True)  # a directory where the record file goes: unreadable, unremovable
    try:
        async with agent(copy, desk) as s:
            assert await code_of(s, "displays") == "emergency-stopped"
            click_rearm(desk)
            assert wait_until(lambda: "the stop record could not be cleared" in copy.log(), 10), copy.log()
            assert await code_of(s, "displays") == "emergency-stopped"
            # The operator deletes it by hand. No physical press came with that, so the running
            # mcec writes the record back (a program could have done it), and stays stopped.
            record.rmdir()
            assert wait_until(lambda: record.is_file(), 10), "the record was not written back"
            assert await code_of(s, "displays") == "emergency-stopped"
            # A fresh prompt (Esc, then the chord) and the operator's click: now it re-arms.
            for _ in range(3):
                desk.physical("key", "Escape")
                if wait_until(lambda: not desk.visible_window(PROMPT_TITLE), timeout=3):
                    break
            desk.physical("key", CHORD)
            click_rearm(desk)
            assert await wait_for_code(s, None) is None, copy.log()
        assert not record.exists()
    finally:
        if record.is_dir():
            record.rmdir()
