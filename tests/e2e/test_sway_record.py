"""The durable stop record on sway without any X display (issue 27): the record is the Wayland
display's (`wayland-<its socket's path>`), so `mcec stop` stops a serving `mcec mcp` there, a
stop pressed on the operator's keyboard survives a restart of the server, and a record of
another Wayland display (or of an X display) stops nothing.

A real sway 1.7 on an Xvfb (`swaydesk.py`), the session's environment without `DISPLAY` (no
XWayland), the real `mcec mcp` driven through the official MCP Python SDK, and `mcec stop` run
as the operator would from a terminal of the session.

Build first: `cargo build -p mcec`."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from mcec_e2e import Copy, code_of, manual_copy, run_cli, sdk_envelope, sdk_stdio, wait_for_code
from swaydesk import STOP_DIR, SwayDesk, wayland_record_name
from xdesk import forget_stop_record

COMMANDS = ("displays", "key")
COMMAND_REASON = "the operator ran `mcec stop`"

pytestmark = pytest.mark.anyio


@pytest.fixture
def sway() -> Iterator[SwayDesk]:
    for tool in ("sway", "swaymsg", "xdotool", "xhost"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing; run scripts/test (it installs it)")
    with SwayDesk() as desk:
        yield desk


def copy_with(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)


async def acts(session: Any) -> bool:
    """Whether an actuating tool call acts (a shift press is harmless to every window)."""
    env = sdk_envelope(await session.call_tool("key", {"keys": "shift"}))
    assert env["ok"] or env["error"]["code"] == "emergency-stopped", env
    return bool(env["ok"])


async def test_mcec_stop_in_the_session_stops_a_serving_mcec_under_the_wayland_displays_record(
    tmp_path: Path, sway: SwayDesk
) -> None:
    copy = copy_with(tmp_path)
    record = sway.wayland_stop_record()
    async with sdk_stdio(copy, env_extra=sway.wayland_env()) as (session, _):
        status = sdk_envelope(await session.call_tool("session-status", {}))["result"]
        assert status["emergencyStop"]["armed"] is True, status
        assert await acts(session), "the positive control: armed, no record, it acts"
        rc, out, err = run_cli(copy, ["stop"], env_extra=sway.wayland_env())
        assert rc == 0, (rc, out, err)
        assert str(record) in out and f"Wayland display {sway.runtime_dir}" in out, out
        assert f"reason: {COMMAND_REASON}\n" in record.read_text()
        assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"


async def test_a_physical_stop_survives_a_restart_of_the_server(tmp_path: Path, sway: SwayDesk) -> None:
    copy = copy_with(tmp_path)
    record = sway.wayland_stop_record()
    async with sdk_stdio(copy, env_extra=sway.wayland_env()) as (session, _):
        assert await acts(session), "the positive control"
        sway.physical_key("ctrl+alt+shift+s")
        assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
    async with sdk_stdio(copy, env_extra=sway.wayland_env()) as (session, _):
        assert await code_of(session, "key", {"keys": "shift"}) == "emergency-stopped", "the restart re-armed"
        assert await code_of(session, "displays") == "emergency-stopped"
    assert "Ctrl+Alt+Shift+S" in record.read_text(), "the chord's stop is not in the Wayland display's record"


@pytest.fixture
def other_wayland_display() -> Iterator[dict[str, str]]:
    """Another Wayland display's socket (nothing serves on it; `mcec stop` only names it)."""
    runtime = Path(tempfile.mkdtemp(prefix="mcec-other-wl-"))
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(runtime / "wayland-1"))
    try:
        yield {"WAYLAND_DISPLAY": "wayland-1", "XDG_RUNTIME_DIR": str(runtime)}
    finally:
        listener.close()
        (STOP_DIR / wayland_record_name(str(runtime / "wayland-1"))).unlink(missing_ok=True)
        shutil.rmtree(runtime, ignore_errors=True)


async def test_a_record_of_another_wayland_display_or_an_x_display_stops_nothing(
    tmp_path: Path, sway: SwayDesk, other_wayland_display: dict[str, str]
) -> None:
    copy = copy_with(tmp_path)
    # The same name (`wayland-1`) in another runtime directory is another display.
    other = {**sway.wayland_env(), **other_wayland_display}
    other_record = STOP_DIR / wayland_record_name(str(Path(other["XDG_RUNTIME_DIR"]) / "wayland-1"))
    x_display = ":" + str(60_000 + os.getpid() % 5_000)
    try:
        # Written before the server starts: its one look at start, before it serves, decides.
        rc, out, err = run_cli(copy, ["stop"], env_extra=other)
        assert rc == 0, (rc, out, err)
        assert str(other_record) in out and other_record.exists(), out
        rc, out, err = run_cli(copy, ["stop"], env_extra={"DISPLAY": x_display})
        assert rc == 0, (rc, out, err)
        assert not sway.wayland_stop_record().exists()
        async with sdk_stdio(copy, env_extra=sway.wayland_env()) as (session, _):
            assert await acts(session), "another display's record stopped this one at start"
            # Written again while it runs (the follower wakes on its own record's changes and
            # polls), then the positive control: this display's own record stops it.
            run_cli(copy, ["stop"], env_extra=other)
            assert await acts(session), "another display's record stopped this one"
            rc, out, err = run_cli(copy, ["stop"], env_extra=sway.wayland_env())
            assert rc == 0, (rc, out, err)
            assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
    finally:
        forget_stop_record(x_display)
