"""`EmergencyStopEnabled = false`, the one setting that removes the stop: what runs and what
does not, end to end on the Xvfb + Xephyr desk.

mcec's policy (docs/decisions.md): the operator's explicit choice is honoured. Nothing is
armed: the physical chord neither latches nor opens a prompt, and the agent's tools work,
actuation included. The choice is audited at start so the log shows the desk ran unguarded."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from mcec_e2e import manual_copy, sdk_envelope, sdk_stdio
from xdesk import Desk, ProbeWindow

CHORD = "ctrl+alt+shift+s"
PROMPT_TITLE = "mcec: emergency stop"

pytestmark = pytest.mark.anyio


def chord_key(line: str) -> bool:
    """The chord's main key as `mcec-testwin` reports it (keysym `s` or `S`)."""
    return line.startswith("key ") and line.split()[3] in ("73", "53")


async def test_with_the_stop_disabled_the_chord_does_nothing_and_tools_run(tmp_path: Path) -> None:
    copy = manual_copy(
        tmp_path / "c",
        settings="AgentCommandsEnabled = true\nEmergencyStopEnabled = false\n",
        commands=("displays", "click"),
    )
    with Desk() as desk:
        win = ProbeWindow(desk.inner_env(), "--x", "0", "--y", "0", "--width", "1024",
                          "--height", "768", "--title", "stop disabled")
        try:
            async with sdk_stdio(copy, env_extra={"DISPLAY": desk.inner}) as (s, _):
                assert sdk_envelope(await s.call_tool("displays", {}))["ok"]
                await anyio.to_thread.run_sync(desk.physical, "key", CHORD)
                # Positive control: the physical chord reached the display (the window got its `s`).
                line = await anyio.to_thread.run_sync(win.wait_for, chord_key)
                assert line
                env = sdk_envelope(await s.call_tool("click", {"at": {"x": 300, "y": 200}}))
                assert env["ok"], env
                await anyio.to_thread.run_sync(win.wait_for, lambda l: l.startswith("press 1 300 200"))
                assert not desk.visible_window(PROMPT_TITLE), "a re-arm prompt opened with the stop disabled"
        finally:
            win.close()
    log = copy.log()
    assert "AGENT-AUDIT: emergency-stop-disabled;" in log
    assert "emergency-stop; engaged" not in log
    assert "emergency-stop-armed" not in log
