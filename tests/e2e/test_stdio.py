"""`mcec mcp` over stdio, driven by the official MCP Python SDK (and, for stdout purity,
by hand): initialize, tools/list, ping, the envelope, the gate rows an agent can reach
from outside, the session record, and the audit trail."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from mcec_e2e import (
    AUDIT,
    INIT_PARAMS,
    Copy,
    audit_lines,
    manual_copy,
    rpc,
    sdk_envelope,
    sdk_stderr,
    sdk_stdio,
)

pytestmark = pytest.mark.anyio

RUN_ID = re.compile(r"^[0-9a-f]{12}$")


def binary_version(copy: Copy) -> str:
    out = subprocess.run([str(copy.exe), "--version"], capture_output=True, text=True, env=copy.env(), timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().split()[-1]


async def test_initialize_reports_name_version_and_rules(agent_copy: Copy) -> None:
    async with sdk_stdio(agent_copy) as (_, init):
        assert init.server_info.name == "mcec"
        assert init.server_info.version == binary_version(agent_copy)
        instructions = init.instructions or ""
        assert "emergency-stopped" in instructions
        assert re.search(r"(do not|don't|never) retry", instructions, re.IGNORECASE), instructions
        assert init.capabilities.tools is not None


async def test_tools_list_and_ping(agent_copy: Copy) -> None:
    async with sdk_stdio(agent_copy) as (session, _):
        tools = (await session.list_tools()).tools
        names = [t.name for t in tools]
        assert "session-status" in names
        # Commands that mcec.commands does not enable are not offered.
        assert "capture" not in names and "click" not in names
        for tool in tools:
            assert tool.description, tool.name
            assert tool.input_schema.get("type") == "object", (tool.name, tool.input_schema)
        await session.send_ping()
        # The session still answers after a ping.
        assert sdk_envelope(await session.call_tool("session-status", {}))["ok"] is True


async def test_enabled_commands_are_listed(agent_copy: Copy) -> None:
    agent_copy.enable_commands("capture", "displays")
    async with sdk_stdio(agent_copy) as (session, _):
        names = {t.name for t in (await session.list_tools()).tools}
        assert {"session-status", "capture", "displays"} <= names, names
        assert "click" not in names


async def test_session_status_envelope_shape(agent_copy: Copy) -> None:
    async with sdk_stdio(agent_copy) as (session, _):
        result = await session.call_tool("session-status", {})
        assert len(result.content) == 1 and result.content[0].type == "text"
        env = sdk_envelope(result)
        assert set(env) <= {"ok", "runId", "result", "warnings"}, env
        assert env["ok"] is True
        assert result.is_error is False
        assert RUN_ID.match(env["runId"]), env
        status = env["result"]
        assert status["runId"] == env["runId"]
        assert status["calls"] == 1
        assert status["refusals"] == {}
        assert status["emergencyStopped"] is False
        assert status["stops"] == []
        assert isinstance(status["startedAtUnixMs"], int) and status["startedAtUnixMs"] > 0


async def test_unknown_tool(agent_copy: Copy) -> None:
    async with sdk_stdio(agent_copy) as (session, _):
        result = await session.call_tool("frobnicate", {"a": 1})
        env = sdk_envelope(result)
        assert result.is_error is True
        assert env["ok"] is False
        assert set(env) == {"ok", "runId", "error"}, env
        assert env["error"]["code"] == "unknown-tool"
        assert env["error"]["category"] == "invalid-argument"
        assert "frobnicate" in env["error"]["detail"]


async def test_bad_arguments_names_the_field(agent_copy: Copy) -> None:
    async with sdk_stdio(agent_copy) as (session, _):
        result = await session.call_tool("session-status", {"bogusField": 1})
        env = sdk_envelope(result)
        assert result.is_error is True and env["ok"] is False
        assert env["error"]["code"] == "bad-arguments"
        assert env["error"]["category"] == "invalid-argument"
        assert "bogusField" in env["error"]["detail"]


async def test_bad_arguments_come_before_the_desktop_gate(agent_copy: Copy) -> None:
    """Gate 6 (arguments) answers before gate 7 (no desktop): a wrong type for `capture`
    with no display is `bad-arguments` naming the field."""
    agent_copy.enable_commands("capture")
    async with sdk_stdio(agent_copy) as (session, _):
        env = sdk_envelope(await session.call_tool("capture", {"maxWidth": "wide"}))
        assert env["ok"] is False
        assert env["error"]["code"] == "bad-arguments", env
        assert "maxWidth" in env["error"]["detail"]


async def test_no_settings_file_is_ask_mode(copy: Copy) -> None:
    """A manual copy with no mcec.settings: nothing enabled, everything requestable, and the
    agent told to ask first (the asking itself is in test_consent.py)."""
    async with sdk_stdio(copy) as (session, init):
        assert init.instructions.startswith("Nothing is enabled yet"), init.instructions
        result = await session.call_tool("capture", {})
        env = sdk_envelope(result)
        assert result.is_error is True and env["error"]["code"] == "command-disabled", env
        status = sdk_envelope(await session.call_tool("session-status", {}))
        access = status["result"]["commandAccess"]
        assert access["enabledTools"] == [] and {"capture", "click"} <= set(access["requestableTools"]), access


async def test_agent_commands_explicitly_false(tmp_path) -> None:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = false\n", commands=("capture",))
    async with sdk_stdio(copy) as (session, _):
        env = sdk_envelope(await session.call_tool("capture", {}))
        assert env["error"]["code"] == "agent-commands-disabled", env


async def test_command_not_in_commands_file_is_disabled(agent_copy: Copy) -> None:
    async with sdk_stdio(agent_copy) as (session, _):
        result = await session.call_tool("capture", {})
        env = sdk_envelope(result)
        assert result.is_error is True
        assert env["error"]["code"] == "command-disabled", env
        assert "capture" in env["error"]["detail"]


@pytest.mark.parametrize("display", [None, ":249"], ids=["display-unset", "display-unreachable"])
async def test_no_desktop_names_the_display_tried(agent_copy: Copy, display: str | None) -> None:
    agent_copy.enable_commands("capture")
    env_extra = {"DISPLAY": display} if display else {}
    async with sdk_stdio(agent_copy, env_extra) as (session, _):
        result = await session.call_tool("capture", {})
        env = sdk_envelope(result)
        assert result.is_error is True
        assert env["error"]["code"] == "no-desktop", env
        assert env["error"]["category"] == "unavailable"
        assert (display or "DISPLAY") in env["error"]["detail"], env


async def test_session_status_counts_calls_and_refusals(agent_copy: Copy) -> None:
    async with sdk_stdio(agent_copy) as (session, _):
        ids = set()
        for name, args in [
            ("session-status", {}),
            ("nope", {}),
            ("nope2", {"x": 1}),
            ("session-status", {"x": 1}),
            ("capture", {}),
        ]:
            ids.add(sdk_envelope(await session.call_tool(name, args))["runId"])
        env = sdk_envelope(await session.call_tool("session-status", {}))
        ids.add(env["runId"])
        assert len(ids) == 1, ids
        status = env["result"]
        assert status["calls"] == 6
        assert status["refusals"] == {"unknown-tool": 2, "bad-arguments": 1, "command-disabled": 1}


async def test_every_call_and_refusal_is_audited(agent_copy: Copy) -> None:
    calls = [
        ("session-status", {}, "ok=true"),
        ("nope", {}, "unknown-tool"),
        ("session-status", {"x": 1}, "bad-arguments"),
        ("capture", {}, "command-disabled"),
    ]
    async with sdk_stdio(agent_copy) as (session, _):
        for name, args, _ in calls:
            await session.call_tool(name, args)
    for where, text in [("stderr", sdk_stderr(agent_copy)), ("mcec.log", agent_copy.log())]:
        tool_lines = [line for line in audit_lines(text) if "tool=" in line]
        assert len(tool_lines) == len(calls), (where, tool_lines)
        for line, (name, _, marker) in zip(tool_lines, calls, strict=True):
            assert f"tool={name}" in line and marker in line, (where, line)


async def test_refusal_with_agent_commands_off_is_audited(tmp_path) -> None:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = false\n")
    async with sdk_stdio(copy) as (session, _):
        await session.call_tool("session-status", {})
    for text in [sdk_stderr(copy), copy.log()]:
        lines = [line for line in audit_lines(text) if "tool=session-status" in line]
        assert len(lines) == 1 and "agent-commands-disabled" in lines[0], lines


def test_stdout_carries_only_json_rpc(agent_copy: Copy, raw_stdio) -> None:
    server = raw_stdio(agent_copy)
    server.send(rpc("initialize", INIT_PARAMS, id=1))
    server.send(rpc("notifications/initialized", id=None))
    server.send(rpc("tools/list", {}, id=2))
    server.send(rpc("tools/call", {"name": "session-status", "arguments": {}}, id=3))
    server.send(rpc("tools/call", {"name": "nope", "arguments": {}}, id=4))
    server.send_bytes(b"this is not json\n")
    server.send_bytes(b'{"jsonrpc": "2.0", "id": 5, "method": \n')
    server.send_bytes(b"\n   \n")
    server.send(rpc("ping", id=6))
    assert server.response_to(6)["result"] == {}
    rc = server.wait_exit()
    stderr = server.stderr()
    assert "panicked" not in stderr, stderr
    assert rc == 0, stderr
    assert server.stdout_lines, "no output at all"
    messages = []
    for raw in server.stdout_lines:
        msg = json.loads(raw)  # every line, blank ones included, must be one JSON-RPC message
        assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", raw
        messages.append(msg)
        assert "id" in msg or "method" in msg, raw
    assert all(AUDIT.encode() not in line for line in server.stdout_lines)
    answered = {m.get("id") for m in messages if "result" in m}
    assert {1, 2, 3, 4, 6} <= answered, messages
    for text in [stderr, agent_copy.log()]:
        assert any("tool=session-status" in line for line in audit_lines(text)), text
        assert any("tool=nope" in line for line in audit_lines(text)), text


async def test_mcp_flag_is_an_alias_for_the_mcp_command(agent_copy: Copy) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=str(agent_copy.exe), args=["--mcp"], env=agent_copy.env())
    with open(agent_copy.stderr_file("alias"), "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "mcec"
            env = sdk_envelope(await session.call_tool("session-status", {}))
            assert env["ok"] is True, env


def test_tool_results_over_raw_stdio_match_envelope_rules(agent_copy: Copy, raw_stdio) -> None:
    """isError == !ok, checked on the raw wire rather than through the SDK's model."""
    server = raw_stdio(agent_copy)
    server.initialize()
    for i, (name, args) in enumerate([("session-status", {}), ("nope", {}), ("session-status", {"x": 1})]):
        resp = server.call(name, args, id=10 + i)
        result = resp["result"]
        env = json.loads(result["content"][-1]["text"])
        assert bool(result.get("isError", False)) == (not env["ok"]), resp
    server.wait_exit()


# --------------------------------------------------------------------------- every line answered


def deep(levels: int) -> bytes:
    """A tools/call whose arguments nest `levels` arrays deep (the whole line is deeper)."""
    args = "[" * levels + "]" * levels
    return b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"session-status","arguments":{"a":' + args.encode() + b"}}}\n"


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(deep(200), id="nested-200"),
        pytest.param(deep(127), id="nested-127"),
        pytest.param(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"\\ud800","arguments":{}}}\n', id="lone-surrogate"),
        pytest.param(b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"\\udc00"}}\n', id="lone-low-surrogate"),
    ],
)
def test_every_stdio_line_gets_an_answer(agent_copy: Copy, raw_stdio, line: bytes) -> None:
    server = raw_stdio(agent_copy)
    server.initialize()
    server.send_bytes(line)
    answer = server.next_message()  # bounded by the harness's hang guard
    assert answer is not None and answer.get("id") in (7, None), answer
    assert "error" in answer or "result" in answer, answer
    assert server.request("ping", id=8)["result"] == {}, "the server goes on"
    assert server.wait_exit() == 0, server.stderr()


@pytest.mark.parametrize("first", ["notifications/initialized", "notifications/cancelled", "response"])
def test_a_message_before_initialize_is_not_fatal(agent_copy: Copy, raw_stdio, first: str) -> None:
    server = raw_stdio(agent_copy)
    if first == "response":
        server.send({"jsonrpc": "2.0", "id": 99, "result": {}})
    else:
        server.send(rpc(first, {"requestId": 1, "reason": "x"} if "cancel" in first else None, id=None))
    init = server.initialize()
    assert init["result"]["serverInfo"]["name"] == "mcec", init
    env = json.loads(server.call("session-status", {}, id=3)["result"]["content"][-1]["text"])
    assert env["ok"] is True, env
    assert server.wait_exit() == 0, server.stderr()
