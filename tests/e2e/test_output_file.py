"""`capture` and `record` write their `file` only as a regular file, end to end through the
official MCP Python SDK: a FIFO (which a plain open waits on until someone reads it, forever if
no one does), a socket or a directory in its place is `bad-arguments` naming `file`, answered
at once, and the server goes on serving. Positive control in each case: a regular file in the
same directory is written. The hang guard is a hang detector, not a speed assertion."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcec_e2e import HANG_GUARD_S, Copy, manual_copy, sdk_envelope, sdk_stdio
from xdesk import Screen

pytestmark = pytest.mark.anyio

CALLS = [
    pytest.param("capture", {}, "png", id="capture"),
    pytest.param("record", {"action": "oneshot", "durationMs": 300, "fps": 2}, "gif", id="record-oneshot"),
    pytest.param("record", {"action": "start", "fps": 2}, "gif", id="record-start"),
]


@pytest.fixture(scope="module")
def screen():
    with Screen() as s:
        yield s


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("capture", "record"))


def plant(path: Path, kind: str) -> socket.socket | None:
    """Put a FIFO, a listening socket or a directory at `path`."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(1)
        return listener
    return None


async def call(session: Any, tool: str, args: dict) -> dict:
    with anyio.fail_after(HANG_GUARD_S):
        return sdk_envelope(await session.call_tool(tool, args))


@pytest.mark.parametrize("kind", ["fifo", "socket", "directory"])
@pytest.mark.parametrize(("tool", "args", "ext"), CALLS)
async def test_a_file_that_is_not_a_regular_file_is_bad_arguments_at_once(
    copy: Copy, screen: Screen, tmp_path: Path, kind: str, tool: str, args: dict, ext: str
) -> None:
    special = tmp_path / f"special.{ext}"
    listener = plant(special, kind)
    try:
        async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
            refused = await call(s, tool, {**args, "file": str(special)})
            assert refused["ok"] is False, f"{kind} accepted: {refused}"
            assert refused["error"]["code"] == "bad-arguments", refused
            assert refused["error"]["detail"].startswith("`file`"), refused
            # Positive control: the same call with a regular file beside it is served.
            regular = tmp_path / f"regular.{ext}"
            served = await call(s, tool, {**args, "file": str(regular)})
            assert served["ok"], served
            if args.get("action") == "start":
                assert (await call(s, "record", {"action": "stop"}))["ok"]
            assert regular.stat().st_size > 0
    finally:
        if listener is not None:
            listener.close()
    assert special.is_dir() if kind == "directory" else not special.is_file(), "the special file is left alone"
