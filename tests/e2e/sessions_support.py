"""Shared pieces of the session tests (test_sessions.py, test_sessions_cli.py): operator
copies that opted in, SDK calls of the two meta tools, and checks of a handoff and of the
files a session copy must (and must not) contain."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import anyio
from mcec_e2e import (
    HANG_GUARD_S,
    Copy,
    Host,
    RawStdio,
    sdk_envelope,
    sdk_stdio,
    sessions_root,
    start_host,
)

OPT_IN = "AllowSessionProvisioning = true\n"
OPERATOR_HOTKEY = "Ctrl+Alt+Shift+F9"
OPERATOR_SETTINGS = OPT_IN + f'EmergencyStopHotkey = "{OPERATOR_HOTKEY}"\n'
THIRTEEN_HOURS = 13 * 3600
SESSION_FILES = {"mcec", "mcec.settings", "mcec.commands", ".mcec-session"}


def catalogue_of(directory: Path) -> list[str]:
    """Every tool name of the binary, asked of the binary: provisioning writes its whole
    catalogue into the session copy's mcec.commands, disabled tools (`launch`) included."""
    names = list(tomllib.loads((directory / "mcec.commands").read_text()))
    assert len(names) >= 10 and "launch" in names and "provision-session" in names, names
    return names


def session_dirs(copy: Copy) -> list[Path]:
    root = sessions_root(copy)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if re.fullmatch(r"[0-9a-f]{12}", p.name))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def tree_snapshot(top: Path) -> dict[str, tuple[str, bytes | str | None]]:
    """Every entry under `top` (not following links) with its kind and content/target."""
    out: dict[str, tuple[str, bytes | str | None]] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(top))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = ("dir", None)
            else:
                out[rel] = ("file", p.read_bytes() if p.stat().st_size < 1 << 20 else b"<big>")
    return out


@contextlib.asynccontextmanager
async def mcp(copy: Copy) -> AsyncIterator[Any]:
    """An SDK stdio session on `copy`, guarded against hangs."""
    with anyio.fail_after(HANG_GUARD_S * 4):
        async with sdk_stdio(copy) as (session, _init):
            yield session


async def call(session: Any, name: str, **args: Any) -> dict:
    return sdk_envelope(await session.call_tool(name, args))


async def provision(session: Any, **args: Any) -> dict:
    env = await call(session, "provision-session", **args)
    assert env["ok"] is True, env
    return env["result"]


async def end(session: Any, session_id: str, token: str) -> dict:
    return await call(session, "end-session", sessionId=session_id, token=token)


def error_code(env: dict) -> str | None:
    return None if env.get("ok") else env["error"]["code"]


@contextlib.contextmanager
def running_host(copy: Copy, port: int, token: str | None) -> Iterator[Host]:
    host = start_host(copy, port, token)
    try:
        yield host
    finally:
        host.stop()


def start_stdio(copy: Copy, started: list[RawStdio]) -> RawStdio:
    """`mcec mcp` on `copy`, initialized (so its start-up, lock and reaper pass are done)."""
    server = RawStdio(copy)
    started.append(server)
    init = server.initialize()
    assert "result" in init, (init, server.stderr())
    return server


def check_handoff(handoff: dict, copy: Copy, http: bool) -> None:
    state = Path(copy.env()["XDG_STATE_HOME"]).resolve()
    assert re.fullmatch(r"[0-9a-f]{12}", handoff["sessionId"]), handoff
    assert re.fullmatch(r"[0-9a-f]{32,}", handoff["token"]), "token: lowercase hex, >= 128 bits"
    directory = Path(handoff["directory"])
    assert directory.resolve().is_relative_to(state), (directory, state)
    assert directory.name == handoff["sessionId"]
    assert directory.parent.resolve() == sessions_root(copy).resolve()
    assert Path(handoff["exePath"]) == directory / "mcec"
    assert handoff["launch"] and handoff["teardown"]
    assert handoff["sessionId"] in handoff["teardown"]
    assert handoff["mcpServerEnabled"] is http
    if http:
        port = handoff["port"]
        assert isinstance(port, int) and 0 < port < 65536
        assert handoff["mcpEndpoint"] == f"http://127.0.0.1:{port}/mcp"
        assert handoff["authorization"] == f"Bearer {handoff['token']}"
        assert handoff["bindAddress"] == "127.0.0.1"
        assert handoff["launch"] == str(directory / "mcec")
    else:
        for key in ("port", "mcpEndpoint", "authorization"):
            assert key not in handoff, handoff
        assert handoff["launch"] == f"{directory / 'mcec'} mcp"


def check_session_files(handoff: dict, http: bool, expect_enabled: set[str] | None = None) -> None:
    directory = Path(handoff["directory"])
    names = {p.name for p in directory.iterdir()}
    assert names == SESSION_FILES, f"unexpected files in the session: {sorted(names ^ SESSION_FILES)}"
    assert mode(directory) == 0o700
    for name in ("mcec.settings", "mcec.commands", ".mcec-session"):
        assert mode(directory / name) == 0o600, name
    assert os.access(directory / "mcec", os.X_OK)
    settings = tomllib.loads((directory / "mcec.settings").read_text())
    assert settings["AgentCommandsEnabled"] is True
    assert settings["ActAsServer"] is False
    assert settings["McpServerEnabled"] is http
    assert settings["McpBindAddress"] == "127.0.0.1"
    assert settings["McpAuthToken"] == handoff["token"]
    assert settings["AllowSessionProvisioning"] is False
    assert settings["EmergencyStopEnabled"] is True
    assert settings["CommandOverlayEnabled"] is True
    assert settings["EmergencyStopHotkey"] == OPERATOR_HOTKEY
    if http:
        assert settings["McpHttpPort"] == handoff["port"]
    commands = tomllib.loads((directory / "mcec.commands").read_text())
    enabled = {name for name, table in commands.items() if table.get("Enabled") is True}
    expected = expect_enabled if expect_enabled is not None else set(catalogue_of(directory)) - {"launch"}
    # session-status and the meta tools are not commands; compare the commands only.
    assert enabled - {"session-status", "provision-session", "end-session"} == expected - {
        "session-status",
        "provision-session",
        "end-session",
    }, enabled
    assert commands.get("launch", {}).get("Enabled") is not True
