"""No file type can hang mcec (issue 8, item 3). A FIFO, a socket, a `/dev/zero` symlink or a
directory where mcec expects a session's `mcec.settings`, its stamp or its `.mcec.lock`, or
the operator's own `mcec.settings` / `mcec.commands`: `end-session`, `mcec sessions
list/rm/reap`, `mcec provision` and start-up all answer, with a clear error where there is
one. Every command runs under a hang guard, so a blocking open fails the test.

Positive controls: the same commands on a session without a planted file succeed (the
planted file is what changes the answer), and `end-session` with the right token on an
intact session removes it."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path

import anyio
import pytest
from mcec_e2e import HANG_GUARD_S, Copy, manual_copy, run_cli, sdk_envelope, sdk_stderr, sdk_stdio
from sessions_support import (
    OPERATOR_SETTINGS,
    end,
    error_code,
    mcp,
    session_dirs,
)

KINDS = ["fifo", "socket", "devlink", "dir"]


def plant(path: Path, kind: str) -> None:
    """Put a special file of `kind` at `path` (replacing what is there)."""
    if path.is_dir() and not path.is_symlink():
        path.rmdir() if not any(path.iterdir()) else None
    elif path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        # A socket path must be short: bind in a short directory, then move it into place.
        with tempfile.TemporaryDirectory(dir="/tmp") as short:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(os.path.join(short, "s"))
            s.close()
            os.rename(os.path.join(short, "s"), path)
    elif kind == "devlink":
        os.symlink("/dev/zero", path)
    elif kind == "dir":
        path.mkdir()
    else:
        raise ValueError(kind)


def provision_cli(op: Copy) -> dict:
    code, out, err = run_cli(op, ["provision", "--json", "--no-mcp-server"])
    assert code == 0, err
    return json.loads(out)


def listed_ids(op: Copy) -> set[str]:
    code, out, err = run_cli(op, ["sessions", "list", "--json"])
    assert code == 0, err
    return {s["id"] for s in json.loads(out)}


@pytest.mark.anyio
@pytest.mark.parametrize("kind", KINDS)
async def test_special_session_settings_never_hang(operator: Copy, kind: str) -> None:
    intact = provision_cli(operator)
    planted = provision_cli(operator)
    plant(Path(planted["directory"]) / "mcec.settings", kind)
    async with mcp(operator) as session:
        env = await end(session, planted["sessionId"], planted["token"])
        assert error_code(env) == "session-token-invalid", env
        ok = await end(session, intact["sessionId"], intact["token"])
        assert ok["ok"] is True and ok["result"]["removed"] is True, ok
    assert Path(planted["directory"]).is_dir(), "a refused end-session deletes nothing"
    assert listed_ids(operator) == {planted["sessionId"]}
    code, out, err = run_cli(operator, ["sessions", "reap"])
    assert code == 0, (out, err)
    fresh = provision_cli(operator)
    assert fresh["sessionId"] in listed_ids(operator)
    code, out, err = run_cli(operator, ["sessions", "rm", planted["sessionId"]])
    assert code == 0 and "removed" in out, (out, err)
    assert not Path(planted["directory"]).exists()


@pytest.mark.anyio
@pytest.mark.parametrize("kind", KINDS)
async def test_special_stamp_never_hangs(operator: Copy, kind: str) -> None:
    planted = provision_cli(operator)
    directory = Path(planted["directory"])
    plant(directory / ".mcec-session", kind)
    async with mcp(operator) as session:
        env = await end(session, planted["sessionId"], planted["token"])
        assert error_code(env) == "session-token-invalid", env
    assert listed_ids(operator) == set(), "without a regular stamp it is not a session"
    code, out, err = run_cli(operator, ["sessions", "rm", planted["sessionId"]])
    assert code != 0 and "not a session directory" in out, (out, err)
    code, out, err = run_cli(operator, ["sessions", "reap", "--json"])
    assert code == 0, err
    assert planted["sessionId"] in json.loads(out)["skippedNotSession"]
    assert directory.is_dir()
    assert provision_cli(operator)["sessionId"]


@pytest.mark.anyio
@pytest.mark.parametrize("kind", KINDS)
async def test_special_lock_file_never_hangs(operator: Copy, kind: str) -> None:
    first = provision_cli(operator)
    second = provision_cli(operator)
    for h in (first, second):
        plant(Path(h["directory"]) / ".mcec.lock", kind)
    code, out, err = run_cli(operator, ["sessions", "list", "--json"])
    assert code == 0, err
    listed = {s["id"]: s["running"] for s in json.loads(out)}
    assert listed == {first["sessionId"]: False, second["sessionId"]: False}, "nobody can hold such a lock"
    async with mcp(operator) as session:
        env = await end(session, first["sessionId"], first["token"])
        assert env["ok"] is True, env
    code, out, err = run_cli(operator, ["sessions", "rm", second["sessionId"]])
    assert code == 0 and "removed" in out, (out, err)
    assert session_dirs(operator) == []


@pytest.mark.anyio
@pytest.mark.parametrize("which", ["mcec.settings", "mcec.commands"])
@pytest.mark.parametrize("kind", KINDS)
async def test_special_operator_config_never_hangs(tmp_path: Path, which: str, kind: str) -> None:
    op = manual_copy(tmp_path / "op", settings=OPERATOR_SETTINGS)
    plant(op.config_dir / which, kind)
    with anyio.fail_after(HANG_GUARD_S * 2):
        async with sdk_stdio(op) as (session, _):
            env = sdk_envelope(await session.call_tool("session-status", {}))
            assert env["error"]["code"] == "agent-commands-disabled", env
            refused = sdk_envelope(await session.call_tool("provision-session", {}))
            assert refused["ok"] is False, refused
    assert "not a regular file" in sdk_stderr(op) or "not follow" in sdk_stderr(op), sdk_stderr(op)
    code, out, err = run_cli(op, ["provision", "--json"])
    assert code != 0 and str(op.config_dir / which) in err, (out, err)
    code, out, err = run_cli(op, ["sessions", "list"])
    assert code == 0, err


@pytest.mark.anyio
@pytest.mark.parametrize("kind", KINDS)
async def test_special_root_lock_never_hangs(operator: Copy, kind: str) -> None:
    """`.mcec-sessions.lock` (the deleters' lock in the sessions root) replaced: deletions
    refuse at once and name it; listing, provisioning and start-up go on."""
    made = provision_cli(operator)
    root_lock = Path(made["directory"]).parent / ".mcec-sessions.lock"
    plant(root_lock, kind)
    code, out, err = run_cli(operator, ["sessions", "rm", made["sessionId"]])
    assert code != 0 and ".mcec-sessions.lock" in out, (out, err)
    async with mcp(operator) as session:
        env = await end(session, made["sessionId"], made["token"])
        assert env["ok"] is False and error_code(env) == "internal", env
    assert made["sessionId"] in listed_ids(operator)
    assert provision_cli(operator)["sessionId"]
    code, out, err = run_cli(operator, ["sessions", "reap"])
    assert code == 0, (out, err)
