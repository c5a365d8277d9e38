"""The Agent tab's client choice, end to end: a real `mcec` host on the inner display of an
Xvfb + Xephyr desk, Provision new… clicked with the operator's (outer) mouse, then for each
client the client's name and a Copy button clicked the same way. The CLIPBOARD is read back
with xclip (the text is served by mcec's clipboard owner), parsed the way that client parses
it (JSON, TOML, a shell command line), and must name the provisioned copy; the stdio entry
is then started with the official MCP Python SDK and a tool is called. An entry that holds
the token is copied only once the operator revealed it (test_agent_tab_token.py): before
that, the JSON HTTP Copy is disabled and copies nothing."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest
from mcec_e2e import Copy, audit_with, manual_copy, sdk_envelope, session_copy, stop_process
from sessions_support import OPT_IN, session_dirs
from test_agent_tab import ARTIFACTS, PROVISION_NEW, SETTINGS, at, open_agent_tab, start_host
from test_agent_tab_token import physical_reveal
from test_client_snippets import parse, stdio_session
from xdesk import Desk, wait_until

pytestmark = pytest.mark.anyio

# Offsets from the settings window's top-left corner (egui's default dark theme at scale 1):
# the row of client names under the session list, and the two Copy buttons under it.
CLIENT_ROW_Y = 330
CLIENTS = (  # label, how its text is parsed (test_client_snippets.parse), x of its name
    ("JSON", "claude-desktop", 77),
    ("Claude Desktop", "claude-desktop", 162),
    ("Claude Code", "claude-code", 261),
    ("VS Code", "vscode", 347),
    ("Cursor", "cursor", 414),
    ("Codex CLI", "codex", 488),
    ("Gemini CLI", "gemini", 574),
)
COPY_STDIO = (63, 353)
COPY_HTTP = (182, 353)
MARKER = "nothing copied yet"


def clipboard(desk: Desk) -> str:
    return subprocess.run(
        ["xclip", "-o", "-selection", "clipboard"], env=desk.inner_env(), capture_output=True, text=True, timeout=30
    ).stdout


def put_marker(desk: Desk) -> None:
    """Own the CLIPBOARD with a marker text (xclip serves it until mcec takes the selection)."""
    subprocess.run(
        ["xclip", "-i", "-selection", "clipboard"], input=MARKER, env=desk.inner_env(), text=True, check=True, timeout=30
    )
    assert wait_until(lambda: clipboard(desk) == MARKER), "xclip did not take the clipboard"


def copy_entry(desk: Desk, host: Copy, origin: tuple[int, int], button: tuple[int, int], label: str) -> str:
    """Click a Copy button with the operator's mouse and return what the clipboard then holds."""
    copies = len(audit_with(host, "handoff-copied"))
    put_marker(desk)
    desk.physical("mousemove", *at(origin, button), "click", "1")
    assert wait_until(lambda: len(audit_with(host, "handoff-copied")) == copies + 1, timeout=10), host.log()
    assert f"client={label};" in audit_with(host, "handoff-copied")[-1]
    text = clipboard(desk)
    assert text != MARKER
    return text


async def test_each_client_choice_copies_that_clients_entry(tmp_path: Path, desk: Desk) -> None:
    host = manual_copy(tmp_path / "h", settings=SETTINGS + OPT_IN)
    proc = start_host(host, desk)
    try:
        origin = open_agent_tab(desk)
        desk.physical("mousemove", *at(origin, PROVISION_NEW), "click", "1")
        assert wait_until(lambda: len(audit_with(host, "session-provisioned", "by=operator-ui")) == 1, timeout=30), (
            host.log()
        )
        (directory,) = session_dirs(host)
        settings = tomllib.loads((directory / "mcec.settings").read_text())
        url = f"http://127.0.0.1:{settings['McpHttpPort']}/mcp"
        bearer = {"Authorization": f"Bearer {settings['McpAuthToken']}"}
        name = f"mcec-{directory.name}"
        # The token is hidden: copying an entry that holds it would show it, so its Copy is
        # disabled and copies nothing (the stdio Copy after it is the control that clicks land).
        desk.physical("sleep", "0.5", "mousemove", *at(origin, COPY_HTTP), "click", "1")
        copy_entry(desk, host, origin, COPY_STDIO, "JSON")
        assert not audit_with(host, "handoff-copied", "part=HTTP"), host.log()
        physical_reveal(desk, host, origin)
        entries = set()
        for label, kind, x in CLIENTS:
            desk.physical("mousemove", *at(origin, (x, CLIENT_ROW_Y)), "click", "1")
            desk.physical("sleep", "0.3")
            desk.screenshot(ARTIFACTS / f"agent-tab-client-{kind}-{x}.png")
            stdio = parse(kind, copy_entry(desk, host, origin, COPY_STDIO, label), {}, name)
            assert stdio == {"command": str(directory / "mcec"), "args": ["mcp"]}, (label, stdio)
            entries.add(json.dumps(stdio))
            if label == "Claude Desktop":
                # No HTTP entry from a file: the button is disabled and copies nothing (the
                # other clients' HTTP copies below are the control that a click would show).
                desk.physical("mousemove", *at(origin, COPY_HTTP), "click", "1")
                copy_entry(desk, host, origin, COPY_STDIO, label)
                assert not audit_with(host, "handoff-copied", "client=Claude Desktop; part=HTTP"), host.log()
                continue
            text = copy_entry(desk, host, origin, COPY_HTTP, label)
            env = {"MCEC_BEARER_TOKEN": settings["McpAuthToken"]} if kind == "codex" else {}
            if kind == "codex":
                assert settings["McpAuthToken"] not in text, "Codex's file entry must not hold the token"
            http = parse(kind, text, env, name)
            assert http == {"url": url, "headers": bearer}, (label, http)
        assert settings["McpAuthToken"] not in host.log(), "the token reached the log"
    finally:
        stop_process(proc)
    # Every client's stdio entry names the same command line: start it as the client would.
    (only,) = entries
    entry = json.loads(only)
    session = session_copy(host, {"directory": str(directory), "exePath": entry["command"]})
    session.extra_env["DISPLAY"] = desk.inner
    async with stdio_session(session, entry["command"], entry["args"]) as client:
        env = sdk_envelope(await client.call_tool("displays", {}))
        assert env["ok"], env
