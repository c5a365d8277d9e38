"""`mcec mcp --session` on an installed copy: one config entry, a fresh session copy per
connection, through the official MCP Python SDK.

Two clients at once get two different copies, each driving its own process; a disconnect
ends the copy and removes its directory; a relay killed with SIGKILL leaves a copy that the
next reaper pass removes (while a young session that was not relayed stays); without the
operator's opt-in the client gets the bootstrap-only surface and instructions that say what
to do. The relay never logs what passes through it. No display is needed: the copies serve
`session-status` and list their tools without one."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from mcec_e2e import HANG_GUARD_S, RawStdio, installed_copy, run_cli, sdk_stdio, sdk_stderr
from sessions_support import OPERATOR_SETTINGS, call, session_dirs
from xdesk import wait_until

pytestmark = pytest.mark.anyio

BOOTSTRAP_TOOLS = {"provision-session", "end-session"}
# A string the client sends that must never reach a log.
SECRET_ARG = "relay-content-9f1c"


def relay_marked(directory: Path) -> bool:
    return (directory / "mcec.relay").is_file()


async def test_two_connections_get_two_copies_and_a_disconnect_removes_each(tmp_path: Path) -> None:
    op = installed_copy(tmp_path / "inst")
    op.write_settings(OPERATOR_SETTINGS)
    async with (
        sdk_stdio(op, mcp_args=("--session",)) as (first, first_init),
        sdk_stdio(op, mcp_args=("--session",)) as (second, _),
    ):
        dirs = session_dirs(op)
        assert len(dirs) == 2, dirs
        assert all(relay_marked(d) for d in dirs), [sorted(p.name for p in d.iterdir()) for d in dirs]
        assert "installed copy of mcec" not in (first_init.instructions or "")
        for session in (first, second):
            names = {t.name for t in (await session.list_tools()).tools}
            assert "capture" in names and "session-status" in names, names
            status = await call(session, "session-status")
            assert status["ok"] is True, status
        one, two = [await call(s, "session-status") for s in (first, second)]
        assert one["runId"] != two["runId"], "both connections reached the same process"
        # Something the client sends, to look for in the logs afterwards.
        await first.call_tool("session-status", {"note": SECRET_ARG})
    assert wait_until(lambda: not session_dirs(op), HANG_GUARD_S), session_dirs(op)
    log = op.log()
    assert log.count("AGENT-AUDIT: session-provisioned") == 2, log
    assert log.count("AGENT-AUDIT: session-ended") == 2, log
    assert SECRET_ARG not in log and SECRET_ARG not in sdk_stderr(op)


async def test_disconnecting_one_client_leaves_the_other_copy(tmp_path: Path) -> None:
    op = installed_copy(tmp_path / "inst")
    op.write_settings(OPERATOR_SETTINGS)
    async with sdk_stdio(op, mcp_args=("--session",)) as (staying, _):
        async with sdk_stdio(op, mcp_args=("--session",)):
            assert len(session_dirs(op)) == 2
        assert wait_until(lambda: len(session_dirs(op)) == 1, HANG_GUARD_S), session_dirs(op)
        assert (await call(staying, "session-status"))["ok"] is True


async def test_a_killed_relay_leaves_a_copy_the_reaper_removes(tmp_path: Path) -> None:
    op = installed_copy(tmp_path / "inst")
    op.write_settings(OPERATOR_SETTINGS)
    code, out, err = run_cli(op, ["provision", "--json", "--no-mcp-server"])
    assert code == 0, err
    by_hand = Path(json.loads(out)["directory"])
    relay = RawStdio(op, args=("mcp", "--session"))
    try:
        assert "result" in relay.initialize(), relay.stderr()
        relayed = [d for d in session_dirs(op) if d != by_hand]
        assert len(relayed) == 1 and relay_marked(relayed[0])
        os.kill(relay.proc.pid, signal.SIGKILL)
        relay.proc.wait(timeout=HANG_GUARD_S)
    finally:
        relay.kill()

    def copy_stopped() -> bool:
        code, out, _ = run_cli(op, ["sessions", "list", "--json"])
        return code == 0 and not any(s["running"] for s in json.loads(out))

    # The copy sees its stdin close and exits; until the reaper runs, its directory stays.
    assert wait_until(copy_stopped, HANG_GUARD_S)
    assert relayed[0].is_dir(), "nothing but the reaper should have removed it"
    code, out, err = run_cli(op, ["sessions", "reap", "--json"])
    assert code == 0, err
    assert json.loads(out)["removed"] == [relayed[0].name]
    assert not relayed[0].exists()
    assert by_hand.is_dir(), "a young session nobody relayed is not reaped"


async def test_without_opt_in_the_client_gets_the_bootstrap_surface(tmp_path: Path) -> None:
    op = installed_copy(tmp_path / "inst")
    op.write_settings("AllowSessionProvisioning = false\n")
    async with sdk_stdio(op, mcp_args=("--session",)) as (session, init):
        names = {t.name for t in (await session.list_tools()).tools}
        assert names == BOOTSTRAP_TOOLS, names
        instructions = init.instructions or ""
        assert "AllowSessionProvisioning = true" in instructions, instructions
        assert str(op.settings_path) in instructions, instructions
        refused = await call(session, "provision-session")
        assert refused["ok"] is False, refused
    assert session_dirs(op) == []
