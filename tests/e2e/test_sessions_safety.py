"""Provisioning safety cases from issue 15 (items 3, 5, 7) and issue 8 item 7's installed-copy
check: the operator's own config files come out of provisioning byte-identical; `end-session`
on a directory without a stamp or without settings answers `session-token-invalid` and writes
nothing; an installed copy's instructions say it is bootstrap-only; `end-session`'s schema
requires both arguments; and an installed copy stays installed whatever `$HOME` says."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import uuid
from pathlib import Path

import pytest
from mcec_e2e import BIN, Copy, installed_copy, manual_copy, run_cli, sdk_stdio, sessions_root
from sessions_support import (
    OPERATOR_SETTINGS,
    end,
    error_code,
    mcp,
    provision,
    session_dirs,
    tree_snapshot,
)

OPERATOR_COMMANDS = "# the operator's own table\n[capture]\nEnabled = true\n\n[click]\nEnabled = false\n"


def fingerprint(path: Path) -> tuple[bytes, int, int]:
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_mode


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["manual", "installed"])
@pytest.mark.parametrize("how", ["tool", "cli"])
async def test_provisioning_leaves_the_operators_files_byte_identical(tmp_path: Path, kind: str, how: str) -> None:
    op = manual_copy(tmp_path / "op") if kind == "manual" else installed_copy(tmp_path / "op")
    op.write_settings(OPERATOR_SETTINGS + "# a comment the operator keeps\n")
    op.commands_path.write_text(OPERATOR_COMMANDS)
    before = {p: fingerprint(p) for p in (op.settings_path, op.commands_path)}
    if how == "tool":
        async with mcp(op) as session:
            handoff = await provision(session, mcpServer=False)
    else:
        code, out, err = run_cli(op, ["provision", "--json", "--no-mcp-server"])
        assert code == 0, err
        handoff = json.loads(out)
    assert Path(handoff["directory"]).is_dir(), "positive control: a session was made"
    assert {p: fingerprint(p) for p in before} == before


@pytest.mark.anyio
@pytest.mark.parametrize("missing", [".mcec-session", "mcec.settings"])
async def test_end_session_without_stamp_or_settings_is_token_invalid_and_writes_nothing(
    operator: Copy, missing: str
) -> None:
    async with mcp(operator) as session:
        handoff = await provision(session, mcpServer=False)
        control = await provision(session, mcpServer=False)
        (Path(handoff["directory"]) / missing).unlink()
        root = sessions_root(operator)
        before = tree_snapshot(root), {p.name: p.stat().st_mtime_ns for p in root.iterdir()}
        env = await end(session, handoff["sessionId"], handoff["token"])
        assert error_code(env) == "session-token-invalid", env
        after = tree_snapshot(root), {p.name: p.stat().st_mtime_ns for p in root.iterdir()}
        changed = sorted(k for k in set(before[0]) | set(after[0]) if before[0].get(k) != after[0].get(k))
        changed += sorted(k for k in set(before[1]) | set(after[1]) if before[1].get(k) != after[1].get(k))
        assert after == before, f"a refused end-session wrote something: {changed}"
        ok = await end(session, control["sessionId"], control["token"])
        assert ok["ok"] is True, "positive control: the intact session ends"


@pytest.mark.anyio
async def test_installed_copy_instructions_and_end_session_schema(tmp_path: Path) -> None:
    op = installed_copy(tmp_path / "inst")
    async with sdk_stdio(op) as (session, init):
        text = init.instructions or ""
        assert "installed copy of mcec, which is bootstrap-only" in text and "call provision-session" in text.lower(), text
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert sorted(tools["end-session"].input_schema.get("required", [])) == ["sessionId", "token"]
    manual = manual_copy(tmp_path / "man", settings="AgentCommandsEnabled = true\n")
    async with sdk_stdio(manual) as (_, init):
        assert "installed copy of mcec, which is bootstrap-only" not in (init.instructions or "")


@pytest.mark.anyio
async def test_installed_copy_check_ignores_home(tmp_path: Path) -> None:
    """A copy under the user database's ~/.local/bin is installed even when $HOME points
    elsewhere. (The copy is placed there for the test and removed afterwards.)"""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    bin_dir = home / ".local" / "bin"
    created = [p for p in (home / ".local", bin_dir) if not p.exists()]
    place = bin_dir / f"mcec-e2e-{uuid.uuid4().hex}"
    try:
        place.mkdir(parents=True)
    except OSError:
        pytest.skip(f"cannot write under {bin_dir}")
    try:
        exe = place / "mcec"
        shutil.copy2(BIN, exe)
        copy = Copy(root=tmp_path, exe=exe, config_dir=place)
        (tmp_path / "home").mkdir()
        (place / "mcec.settings").write_text("AgentCommandsEnabled = true\n")
        async with sdk_stdio(copy) as (session, init):
            names = sorted(t.name for t in (await session.list_tools()).tools)
            assert names == ["end-session", "provision-session"], names
            assert "bootstrap-only" in (init.instructions or "")
        # Positive control: the same binary in a temporary directory is a manual copy.
        manual = manual_copy(tmp_path / "man", settings="AgentCommandsEnabled = true\n")
        async with sdk_stdio(manual) as (session, _):
            assert "session-status" in {t.name for t in (await session.list_tools()).tools}
    finally:
        shutil.rmtree(place, ignore_errors=True)
        for p in reversed(created):
            with contextlib.suppress(OSError):
                p.rmdir()
    assert session_dirs(copy) == []
