"""mcec speaks MCP the way clients expect: `tools/list` carries a title, annotations and an
output schema for every tool, input schemas carry no Rust type names, every call's
`structuredContent` is the envelope and validates against the declared schema (success and
failure alike), the text copy stays for older clients, and `initialize` answers exactly the
protocol versions mcec is tested with."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcec_e2e import (
    Copy,
    RawStdio,
    envelope_of,
    host_settings,
    manual_copy,
    rpc,
    sdk_envelope,
    sdk_http,
    sdk_stdio,
    start_host,
)
from xdesk import ProbeWindow, Screen

COMMANDS = (
    "displays", "windows", "capture", "click", "drag", "scroll", "mouse", "wait", "type", "key", "window", "focus",
    "launch", "record", "send_command", "send_command.chars",
)
READ_ONLY = {"session-status", "displays", "windows", "wait", "query", "find", "wait-for", "get-text"}
INPUT = {"click", "drag", "scroll", "mouse", "type", "key", "focus", "launch", "send_command"}
#: The versions mcec is pinned to (crates/mcp/src/server.rs PROTOCOL_VERSIONS).
# The envelope in full; every tool's served `outputSchema` is a lighter one (docs/decisions.md).
FULL_ENVELOPE = json.loads((Path(__file__).resolve().parents[2] / "docs" / "envelope.schema.json").read_text())
TESTED_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def screen():
    with Screen() as s:
        yield s


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)


def walk(node: Any):
    """Every dict inside a JSON value, depth first."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


async def test_tools_list_carries_titles_annotations_and_schemas(copy: Copy, screen: Screen) -> None:
    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (session, _):
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(COMMANDS) - {"send_command.chars"} <= set(tools), sorted(tools)
    for name, tool in tools.items():
        assert tool.title, name
        a = tool.annotations
        assert a is not None, name
        hints = (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
        assert all(isinstance(h, bool) for h in hints), (name, a)
        assert a.read_only_hint == (name in READ_ONLY), (name, a)
        if name in INPUT:
            assert a.destructive_hint and a.open_world_hint, (name, a)
        assert tool.output_schema and tool.output_schema["type"] == "object", name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        schema = tool.input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert "title" not in schema and "$defs" not in schema, (name, schema)
        assert not any("$ref" in d for d in walk(schema)), (name, schema)
        assert not any(d.get("default", 0) is None for d in walk(schema)), (name, schema)
    drag = tools["drag"].input_schema
    assert drag["required"] == ["from", "to"]
    assert drag["properties"]["durationMs"]["maximum"] == 10000
    assert drag["properties"]["durationMs"]["default"] == 0
    assert tools["windows"].input_schema["properties"]["timeoutMs"]["maximum"] <= 55000
    assert tools["launch"].input_schema["properties"]["timeoutMs"]["maximum"] <= 55000
    assert tools["type"].input_schema["properties"]["text"]["maxLength"] == 10000
    assert tools["click"].input_schema["properties"]["count"]["maximum"] == 3


async def test_every_answer_is_structured_and_valid_against_its_schema(
    copy: Copy, screen: Screen, tmp_path: Path
) -> None:
    win = ProbeWindow(screen.env(), "--title", "conventions")
    calls = [
        ("session-status", {}),
        ("displays", {}),
        ("windows", {"title": "conventions"}),
        ("windows", {"title": "no such window", "condition": "appears", "timeoutMs": 50}),  # timeout
        ("capture", {"maxWidth": 64}),
        ("click", {"at": {"x": 110, "y": 110}}),
        ("click", {"at": {"x": 1, "y": 2}, "count": 9}),  # bad-arguments
        ("key", {"keys": "Escape"}),
        ("drag", {"from": {"x": 110, "y": 110}, "to": {"x": 130, "y": 110}}),
        ("type", {"text": "ok"}),
        ("send_command", {"command": "chars:a"}),
        ("record", {"action": "stop"}),  # nothing recording: unavailable
        ("no-such-tool", {}),  # unknown-tool
        ("provision-session", {}),  # not authorized
    ]
    try:
        async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (session, _):
            schemas = {t.name: t.output_schema for t in (await session.list_tools()).tools}
            seen = {True: 0, False: 0}
            for name, args in calls:
                result = await session.call_tool(name, args)
                structured = result.structured_content
                assert structured == sdk_envelope(result), (name, structured)
                assert result.is_error == (not structured["ok"]), (name, structured)
                jsonschema.validate(structured, schemas.get(name, schemas["session-status"]))
                jsonschema.validate(structured, FULL_ENVELOPE)
                seen[structured["ok"]] += 1
            assert seen[True] >= 6 and seen[False] >= 4, seen
            # Positive controls: the full schema rejects an envelope that mixes the branches; the
            # served one, an envelope without its run id.
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(dict(structured, ok=True), FULL_ENVELOPE)
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate({"ok": True, "result": {}}, schemas["session-status"])
    finally:
        win.close()


@pytest.mark.parametrize("version", TESTED_VERSIONS)
def test_initialize_answers_each_tested_version_and_keeps_the_text_copy(copy: Copy, version: str) -> None:
    mcp = RawStdio(copy)
    try:
        init = mcp.request(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "old", "version": "0"}},
            id="init",
        )
        assert init["result"]["protocolVersion"] == version, init
        mcp.send(rpc("notifications/initialized", None, id=None))
        answer = mcp.request("tools/call", {"name": "session-status", "arguments": {}}, id=2)
        envelope, is_error = envelope_of(answer)
        assert envelope["ok"] and not is_error, answer
        assert [c["type"] for c in answer["result"]["content"]] == ["text"], answer
    finally:
        mcp.kill()


@pytest.mark.parametrize("version", ["2026-07-28", "2099-01-01", "2024-01-01"])
def test_an_untested_version_is_answered_with_the_newest_tested_one(copy: Copy, version: str) -> None:
    mcp = RawStdio(copy)
    try:
        init = mcp.request(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "other", "version": "0"}},
            id="init",
        )
        assert init["result"]["protocolVersion"] == TESTED_VERSIONS[-1], json.dumps(init)
    finally:
        mcp.kill()


async def test_a_long_wait_with_a_progress_token_reports_progress(copy: Copy, screen: Screen) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    args = {"title": "never opens", "condition": "appears", "timeoutMs": 10000}
    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (session, _):
        result = await session.call_tool("windows", args, progress_callback=on_progress)
        quiet = await session.call_tool("windows", {**args, "timeoutMs": 3000})
    assert result.structured_content["error"]["code"] == "timeout", result.structured_content
    assert quiet.structured_content["error"]["code"] == "timeout", quiet.structured_content
    # Every 2 s of a 10 s wait: four reports, each further on than the one before, each
    # saying how long of the 10000 ms the wait has waited.
    assert len(seen) >= 3, seen
    assert [p for p, _, _ in seen] == sorted({p for p, _, _ in seen}), seen
    assert all(m and re.fullmatch(r"windows: \d+ of 10000 ms waited after [\d.]+ s", m) for _, _, m in seen), seen


async def test_a_slow_drag_reports_the_points_it_walked(copy: Copy, screen: Screen) -> None:
    seen: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    drag = {"from": {"x": 10, "y": 10}, "to": {"x": 370, "y": 10}, "durationMs": 5000}
    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (session, _):
        result = await session.call_tool("drag", drag, progress_callback=on_progress)
    assert result.structured_content["ok"], result.structured_content
    walked = [re.fullmatch(r"drag: (\d+) of 31 points after [\d.]+ s", m or "") for m in seen]
    assert walked and all(walked), seen
    assert all(0 < int(w.group(1)) < 31 for w in walked), seen


async def test_progress_reaches_an_http_client_too(tmp_path: Path, screen: Screen, port: int, token: str) -> None:
    copy = manual_copy(tmp_path / "h", settings=host_settings(port, token), commands=COMMANDS)
    copy.extra_env["DISPLAY"] = screen.display
    host = start_host(copy, port, token)
    seen: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    try:
        async with sdk_http(host.url, host.auth_headers()) as (session, _):
            args = {"title": "never opens", "condition": "appears", "timeoutMs": 5000}
            result = await session.call_tool("windows", args, progress_callback=on_progress)
    finally:
        host.stop()
    assert result.structured_content["error"]["code"] == "timeout", result.structured_content
    assert seen and all(m and m.startswith("windows: ") for m in seen), seen
