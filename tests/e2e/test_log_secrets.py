"""No token reaches a log at any level: with `MCEC_LOG=trace`, provisioning, `end-session` with
a wrong and a right token, a token echoed by the agent as a tool name and as an argument, and
HTTP with a right and a wrong bearer; every token is looked for in stderr and in `mcec.log`.
`mcec.log` is mode 0600, and an older wider one is narrowed.

Real `mcec mcp` and `mcec` (the host) driven by the official MCP Python SDK."""

from __future__ import annotations

import json
import os
import secrets
import stat
from pathlib import Path

import pytest
from mcec_e2e import (
    MCP_HEADERS,
    Copy,
    all_stderr,
    host_settings,
    manual_copy,
    raw_http,
    rpc,
    sdk_envelope,
    sdk_http,
    sdk_stdio,
    start_host,
)

pytestmark = pytest.mark.anyio

TRACE = {"MCEC_LOG": "trace"}


def leaks(copy: Copy, secrets_: list[str], extra: str = "") -> list[str]:
    """The secrets found in any stderr file of this copy, `extra`, or its mcec.log."""
    text = all_stderr(copy) + extra + copy.log()
    return [s for s in secrets_ if s in text]


def proves_trace_level(copy: Copy) -> None:
    """The positive control: the log ran at trace level and saw the calls it must not leak."""
    log = copy.log()
    assert " DEBUG " in log or " TRACE " in log, "MCEC_LOG=trace was not in effect:\n" + log[-2000:]
    assert "AGENT-AUDIT: session-provisioned" in log, log[-2000:]
    assert "code=session-token-invalid" in log, log[-2000:]
    assert "<redacted>" in log, "nothing was redacted, so the echoes were not logged at all"


async def call(session, name: str, **args) -> dict:
    return sdk_envelope(await session.call_tool(name, args))


@pytest.mark.parametrize("level", ["trace", "debug,rmcp=trace"])
async def test_no_token_in_any_log_over_stdio_at_trace(tmp_path: Path, level: str) -> None:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\nAllowSessionProvisioning = true\n")
    copy.log_path.write_text("an older log\n")
    os.chmod(copy.log_path, 0o644)
    copy.extra_env["MCEC_LOG"] = level
    wrong_word = "wrong-" + secrets.token_urlsafe(16)
    wrong_hex = secrets.token_hex(32)
    async with sdk_stdio(copy) as (s, _):
        first = (await call(s, "provision-session"))["result"]
        second = (await call(s, "provision-session"))["result"]
        for wrong in (wrong_word, wrong_hex):
            env = await call(s, "end-session", sessionId=first["sessionId"], token=wrong)
            assert env["error"]["code"] == "session-token-invalid", env
        # The agent echoes a token where mcec logs what it got.
        assert not (await call(s, second["token"]))["ok"]
        assert not (await call(s, "session-status", extra=second["token"]))["ok"]
        env = await call(s, "end-session", sessionId=first["sessionId"], token=first["token"])
        assert env["ok"], env
    tokens = [first["token"], second["token"], wrong_word, wrong_hex]
    assert leaks(copy, tokens) == []
    proves_trace_level(copy)
    assert stat.S_IMODE(copy.log_path.stat().st_mode) == 0o600
    assert copy.log().startswith("an older log\n"), "the older log was kept (appended to)"


async def test_no_token_in_any_log_over_http_at_trace(tmp_path: Path, port: int, token: str) -> None:
    copy = manual_copy(tmp_path / "h", settings=host_settings(port, token, extra="AllowSessionProvisioning = true\n"))
    copy.extra_env.update(TRACE)
    host = start_host(copy, port, token)
    wrong_bearer = "wrong-bearer-" + secrets.token_urlsafe(16)
    wrong_word = "wrong-" + secrets.token_urlsafe(16)
    try:
        async with sdk_http(host.url, host.auth_headers()) as (s, _):
            handoff = (await call(s, "provision-session"))["result"]
            env = await call(s, "end-session", sessionId=handoff["sessionId"], token=wrong_word)
            assert env["error"]["code"] == "session-token-invalid", env
            assert (await call(s, "end-session", sessionId=handoff["sessionId"], token=handoff["token"]))["ok"]
        body = json.dumps(rpc("ping", id=1)).encode()
        assert raw_http(port, body=body, headers={"Authorization": f"Bearer {wrong_bearer}"}).status == 401
        assert raw_http(port, body=body, headers={"Authorization": f"bearer  {wrong_bearer}"}).status == 401
        assert raw_http(port, body=body, headers={**MCP_HEADERS, **host.auth_headers()}).status == 200
    finally:
        host.stop()
    assert leaks(copy, [token, handoff["token"], wrong_bearer, wrong_word], host.stderr()) == []
    proves_trace_level(copy)
    assert "AGENT-AUDIT: http-rejected; status=401" in copy.log()
    assert stat.S_IMODE(copy.log_path.stat().st_mode) == 0o600
