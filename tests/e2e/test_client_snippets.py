"""`mcec config --client NAME` and `mcec provision --client NAME`: every snippet is parsed the
way its client parses it (JSON, TOML, a shell command line; never string-matched) and the
command line or URL + header it names is connected to with the official MCP Python SDK.

stdio: on an installed copy with the opt-in, the entry is `mcec mcp --session`, so each
connection must list the desktop tools of a fresh session copy. HTTP: a manual copy serving
its front door with a bearer token. Codex takes the bearer from an environment variable,
which the test sets as the operator is told to."""

from __future__ import annotations

import contextlib
import json
import shlex
import tomllib
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
from mcec_e2e import (
    Copy,
    free_port,
    host_settings,
    installed_copy,
    manual_copy,
    run_cli,
    sdk_http,
    start_host,
    unwrap_groups,
)
from sessions_support import OPERATOR_SETTINGS, session_dirs

pytestmark = pytest.mark.anyio

CLIENTS = ("claude-desktop", "claude-code", "vscode", "cursor", "codex", "gemini")
TOKEN = "snippet-test-token-0123456789abcdef"


def parse(client: str, text: str, env: dict[str, str], name: str = "mcec") -> dict[str, Any]:
    """What the client would read from `text` for server `name`: {command, args} or {url, headers}."""
    if client == "claude-code":
        words = shlex.split(text)
        assert words[:3] == ["claude", "mcp", "add"], words
        if "--" in words:
            command = words[words.index("--") + 1 :]
            return {"command": command[0], "args": command[1:]}
        assert words[3:5] == ["--transport", "http"], words
        named, url, *rest = words[5:]
        assert named == name, words
        headers = dict(h.split(": ", 1) for flag, h in zip(rest[::2], rest[1::2], strict=True) if flag == "--header")
        return {"url": url, "headers": headers}
    if client == "codex":
        entry = tomllib.loads(text)["mcp_servers"][name]
        if "url" in entry:
            return {"url": entry["url"], "headers": {"Authorization": f"Bearer {env[entry['bearer_token_env_var']]}"}}
        return {"command": entry["command"], "args": entry["args"]}
    doc = json.loads(text)
    entry = (doc["servers"] if client == "vscode" else doc["mcpServers"])[name]
    if client == "vscode":
        assert entry["type"] in ("stdio", "http"), entry
    url = entry.get("httpUrl" if client == "gemini" else "url")
    if url:
        return {"url": url, "headers": entry.get("headers", {})}
    return {"command": entry["command"], "args": entry["args"]}


@contextlib.asynccontextmanager
async def stdio_session(copy: Copy, command: str, args: list[str]) -> AsyncIterator[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command, args=args, env=copy.env(), cwd=str(copy.root))
    with open(copy.stderr_file("snippet-stderr"), "w") as errlog, unwrap_groups():
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def tool_names(session: Any) -> set[str]:
    return {t.name for t in (await session.list_tools()).tools}


@pytest.mark.parametrize("client", CLIENTS)
async def test_the_stdio_snippet_starts_a_session_copy(tmp_path: Path, client: str) -> None:
    op = installed_copy(tmp_path / "inst")
    op.write_settings(OPERATOR_SETTINGS)
    code, out, err = run_cli(op, ["config", "--client", client])
    assert code == 0, err
    entry = parse(client, out, {})
    assert Path(entry["command"]) == op.exe and entry["args"] == ["mcp", "--session"], entry
    async with stdio_session(op, entry["command"], entry["args"]) as session:
        assert "capture" in await tool_names(session), "not a session copy's surface"
        assert len(session_dirs(op)) == 1


@pytest.mark.parametrize("client", [c for c in CLIENTS if c != "claude-desktop"])
async def test_the_http_snippet_reaches_the_front_door(tmp_path: Path, client: str) -> None:
    port = free_port()
    copy = manual_copy(tmp_path / "c", settings=host_settings(port, TOKEN), commands=("capture",))
    code, out, err = run_cli(copy, ["config", "--client", client, "--transport", "http"])
    assert code == 0, err
    env = {"MCEC_BEARER_TOKEN": TOKEN} if f"MCEC_BEARER_TOKEN='{TOKEN}'" in err else {}
    entry = parse(client, out, env)
    assert entry["headers"] == {"Authorization": f"Bearer {TOKEN}"}, entry
    host = start_host(copy, port, TOKEN)
    try:
        async with sdk_http(entry["url"], entry["headers"]) as (session, _):
            assert "capture" in await tool_names(session)
    finally:
        host.stop()
    assert TOKEN not in copy.log(), "the token reached the log"


async def test_claude_desktop_has_no_http_file_entry(tmp_path: Path) -> None:
    copy = manual_copy(tmp_path / "c", settings=host_settings(free_port(), TOKEN))
    code, out, err = run_cli(copy, ["config", "--client", "claude-desktop", "--transport", "http"])
    assert code != 0 and out == "" and "Connectors" in err, (code, out, err)


@pytest.mark.parametrize("client", ["vscode", "codex"])
async def test_the_provision_handoff_speaks_the_chosen_client(tmp_path: Path, client: str) -> None:
    op = installed_copy(tmp_path / "inst")
    op.write_settings(OPERATOR_SETTINGS)
    code, out, err = run_cli(op, ["provision", "--no-mcp-server", "--client", client])
    assert code == 0, err
    snippet = out.split("(the client starts the copy):\n", 1)[1]
    doc = tomllib.loads(snippet) if client == "codex" else json.loads(snippet)
    servers = doc["mcp_servers"] if client == "codex" else doc["servers"]
    (entry,) = servers.values()
    async with stdio_session(op, entry["command"], entry["args"]) as session:
        assert "capture" in await tool_names(session)
