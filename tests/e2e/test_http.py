"""The host's Streamable HTTP front door: the official SDK with and without the bearer
header, the gate's rejections over raw HTTP (each audited with method, path, host, origin
and peer), the in-flight cap, start-up refusals, and tokens never reaching a log."""

from __future__ import annotations

import json
import re
import selectors
import socket

import pytest
from mcec_e2e import (
    HANG_GUARD_S,
    Host,
    audit_lines,
    host_settings,
    manual_copy,
    raw_http,
    read_http_response,
    rpc,
    run_to_exit,
    sdk_envelope,
    sdk_http,
)

MIB = 1024 * 1024
MAX_IN_FLIGHT = 16


def ping_body(id: int = 1) -> bytes:
    return json.dumps(rpc("ping", id=id)).encode()


def rejections(host: Host) -> list[str]:
    return [line for line in audit_lines(host.stderr()) if "http-rejected" in line]


def field(line: str, name: str) -> str:
    m = re.search(rf"\b{name}=(\S+)", line)
    assert m, f"no {name}= in {line!r}"
    return m.group(1)


# --------------------------------------------------------------------------- SDK


@pytest.mark.anyio
async def test_sdk_with_bearer_works(host: Host) -> None:
    async with sdk_http(host.url, host.auth_headers()) as (session, init):
        assert init.server_info.name == "mcec"
        assert "emergency-stopped" in (init.instructions or "")
        names = {t.name for t in (await session.list_tools()).tools}
        assert "session-status" in names
        await session.send_ping()
        result = await session.call_tool("session-status", {})
        env = sdk_envelope(result)
        assert env["ok"] is True and result.is_error is False
        assert re.fullmatch(r"[0-9a-f]{12}", env["runId"])
        bad = await session.call_tool("nope", {})
        assert bad.is_error is True and sdk_envelope(bad)["error"]["code"] == "unknown-tool"


@pytest.mark.anyio
async def test_http_session_record_is_shared_across_requests(host: Host) -> None:
    """Stateless HTTP: every request gets a fresh MCP server, but one run record."""
    async with sdk_http(host.url, host.auth_headers()) as (session, _):
        first = sdk_envelope(await session.call_tool("session-status", {}))
    async with sdk_http(host.url, host.auth_headers()) as (session, _):
        await session.call_tool("nope", {})
        second = sdk_envelope(await session.call_tool("session-status", {}))
    assert first["runId"] == second["runId"]
    assert second["result"]["calls"] == first["result"]["calls"] + 2
    assert second["result"]["refusals"].get("unknown-tool") == 1


@pytest.mark.anyio
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}], ids=["no-bearer", "wrong-bearer"])
async def test_sdk_without_the_right_bearer_is_refused(host: Host, headers: dict[str, str]) -> None:
    with pytest.raises(Exception) as raised:
        async with sdk_http(host.url, headers):
            pass
    assert not isinstance(raised.value, AssertionError)
    resp = raw_http(host.port, body=ping_body(), headers=headers)
    assert resp.status == 401
    assert resp.headers.get("www-authenticate", "").lower().startswith("bearer")
    assert any("status=401" in line for line in rejections(host))
    # No call got through.
    assert not [line for line in audit_lines(host.stderr()) if "tool=" in line]


def test_raw_request_with_bearer_is_served(host: Host) -> None:
    resp = raw_http(host.port, body=ping_body(7), headers=host.auth_headers())
    assert resp.status == 200, resp
    assert resp.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_open_host_serves_without_a_token(open_host: Host) -> None:
    resp = raw_http(open_host.port, body=ping_body(3))
    assert resp.status == 200, resp
    assert resp.json()["id"] == 3


# --------------------------------------------------------------------------- the gate


def test_get_is_405(host: Host) -> None:
    resp = raw_http(host.port, "GET", headers=host.auth_headers())
    assert resp.status == 405
    assert "POST" in resp.headers.get("allow", "")


def test_other_path_is_404(host: Host) -> None:
    resp = raw_http(host.port, path="/other", body=ping_body(), headers=host.auth_headers())
    assert resp.status == 404
    assert raw_http(host.port, path="/mcp/", body=ping_body(), headers=host.auth_headers()).status == 404


@pytest.mark.parametrize("bad_host", ["evil.example", "localhost.evil.example", "127.0.0.1.nip.io"])
def test_foreign_host_is_403(host: Host, bad_host: str) -> None:
    assert raw_http(host.port, body=ping_body(), headers=host.auth_headers(), host=bad_host).status == 403


def test_host_with_wrong_port_is_403(host: Host) -> None:
    assert raw_http(host.port, body=ping_body(), headers=host.auth_headers(), host="127.0.0.1:1").status == 403


@pytest.mark.parametrize("origin", ["http://evil.example", "null"])
def test_foreign_origin_is_403(host: Host, origin: str) -> None:
    headers = {"Origin": origin, **host.auth_headers()}
    assert raw_http(host.port, body=ping_body(), headers=headers).status == 403


def test_loopback_origin_is_served(host: Host) -> None:
    headers = {"Origin": f"http://localhost:{host.port}", **host.auth_headers()}
    assert raw_http(host.port, body=ping_body(), headers=headers).status == 200


def test_declared_body_over_1mib_is_413_before_the_body(host: Host) -> None:
    """The refusal comes from the head alone: we never send the body."""
    with socket.create_connection(("127.0.0.1", host.port)) as sock:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{host.port}\r\nAuthorization: Bearer {host.token}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {2 * MIB}\r\n\r\n"
        )
        sock.sendall(head.encode())
        status, _ = read_http_response(sock)
    assert status == 413
    assert raw_http(host.port, body=ping_body(), headers=host.auth_headers()).status == 200


def test_body_of_exactly_1mib_is_not_413(host: Host) -> None:
    msg = rpc("tools/call", {"name": "session-status", "arguments": {"pad": ""}})
    base = len(json.dumps(msg).encode())
    msg["params"]["arguments"]["pad"] = "x" * (MIB - base)
    body = json.dumps(msg).encode()
    assert len(body) == MIB
    resp = raw_http(host.port, body=body, headers=host.auth_headers())
    assert resp.status == 200, resp
    assert json.loads(resp.json()["result"]["content"][-1]["text"])["error"]["code"] == "bad-arguments"


def test_chunked_body_over_1mib_is_413(host: Host) -> None:
    with socket.create_connection(("127.0.0.1", host.port)) as sock:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{host.port}\r\nAuthorization: Bearer {host.token}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Transfer-Encoding: chunked\r\n\r\n"
        )
        sock.sendall(head.encode())
        chunk = b"x" * 65536
        try:
            for _ in range(2 * MIB // len(chunk)):
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server may stop reading once over the limit; the answer still counts
        status, body = read_http_response(sock)
    assert status == 413, (status, body)
    assert raw_http(host.port, body=ping_body(), headers=host.auth_headers()).status == 200


def test_more_than_16_in_flight_get_503_and_the_server_recovers(host: Host) -> None:
    """Open 20 requests that send their head but hold the body, so the admitted ones stay
    in flight: exactly 16 are admitted and 4 answered 503 (no queueing); while the 16 are
    held every further request is 503; once their bodies arrive they are served, and so is
    the next request."""
    extra = 4
    body = ping_body(99)
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{host.port}\r\nAuthorization: Bearer {host.token}\r\n"
        f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    held: list[socket.socket] = []
    try:
        for _ in range(MAX_IN_FLIGHT + extra):
            sock = socket.create_connection(("127.0.0.1", host.port))
            sock.sendall(head)
            held.append(sock)
        # Nothing else is in flight, so exactly `extra` of them are refused. Wait for those
        # answers (and only those: the admitted ones wait for a body that never comes).
        refused: list[socket.socket] = []
        with selectors.DefaultSelector() as sel:
            for sock in held:
                sel.register(sock, selectors.EVENT_READ)
            while len(refused) < extra:
                ready = sel.select(timeout=HANG_GUARD_S)
                assert ready, f"only {len(refused)} of {extra} over-limit requests were answered"
                for key, _ in ready:
                    status, _ = read_http_response(key.fileobj)
                    assert status == 503, status
                    sel.unregister(key.fileobj)
                    refused.append(key.fileobj)
        admitted = [sock for sock in held if sock not in refused]
        assert len(admitted) == MAX_IN_FLIGHT
        assert raw_http(host.port, body=ping_body(), headers=host.auth_headers()).status == 503
        for sock in admitted:
            sock.sendall(body)
        for sock in admitted:
            status, answer = read_http_response(sock)
            assert status == 200, (status, answer)
            assert json.loads(answer)["id"] == 99
    finally:
        for sock in held:
            sock.close()
    assert raw_http(host.port, body=ping_body(), headers=host.auth_headers()).status == 200
    lines = [line for line in rejections(host) if "status=503" in line]
    assert len(lines) == extra + 1, rejections(host)


def test_many_concurrent_requests_are_answered_200_or_503(host: Host) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> int:
        msg = rpc("tools/call", {"name": "session-status", "arguments": {}}, id=i)
        return raw_http(host.port, body=json.dumps(msg).encode(), headers=host.auth_headers()).status

    with ThreadPoolExecutor(max_workers=40) as pool:
        statuses = list(pool.map(one, range(40)))
    assert set(statuses) <= {200, 503}, statuses
    assert 200 in statuses
    assert raw_http(host.port, body=ping_body(), headers=host.auth_headers()).status == 200


def test_every_rejection_is_audited_with_method_path_host_origin_peer(host: Host) -> None:
    auth = host.auth_headers()
    cases = [
        (dict(method="GET"), 405, "GET", "/mcp", f"127.0.0.1:{host.port}", "-"),
        (dict(path="/other", body=ping_body()), 404, "POST", "/other", f"127.0.0.1:{host.port}", "-"),
        (dict(host="evil.example", body=ping_body()), 403, "POST", "/mcp", "evil.example", "-"),
        (
            dict(body=ping_body(), headers={"Origin": "http://evil.example"}),
            403,
            "POST",
            "/mcp",
            f"127.0.0.1:{host.port}",
            "http://evil.example",
        ),
        (
            dict(body=ping_body(), headers={"Authorization": "Bearer nope"}),
            401,
            "POST",
            "/mcp",
            f"127.0.0.1:{host.port}",
            "-",
        ),
        # A declared size over the limit; the body itself is never sent.
        (dict(headers={"Content-Length": str(2 * MIB)}), 413, "POST", "/mcp", f"127.0.0.1:{host.port}", "-"),
    ]
    for kwargs, status, *_ in cases:
        headers = {**auth, **kwargs.pop("headers", {})}
        assert raw_http(host.port, headers=headers, **kwargs).status == status
    lines = rejections(host)
    assert len(lines) == len(cases), lines
    for line, (_, status, method, path, host_hdr, origin) in zip(lines, cases, strict=True):
        assert field(line, "status") == str(status), line
        assert field(line, "method") == method, line
        assert field(line, "path") == path, line
        assert field(line, "host") == host_hdr, line
        assert field(line, "origin") == origin, line
        assert re.fullmatch(r"127\.0\.0\.1:\d+", field(line, "peer")), line
    log_lines = [line for line in audit_lines(host.copy.log()) if "http-rejected" in line]
    assert len(log_lines) == len(cases), log_lines


# --------------------------------------------------------------------------- start-up


def test_non_loopback_bind_without_token_is_refused(tmp_path, port: int) -> None:
    copy = manual_copy(tmp_path / "c", settings=host_settings(port, extra='McpBindAddress = "0.0.0.0"\n'))
    rc, stderr = run_to_exit(copy, [])
    assert rc != 0
    assert "0.0.0.0" in stderr and "McpAuthToken" in stderr, stderr
    assert "panicked" not in stderr
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_non_loopback_bind_with_token_starts(tmp_path, port: int, token: str, host_factory) -> None:
    copy = manual_copy(tmp_path / "c", settings=host_settings(port, token, extra='McpBindAddress = "0.0.0.0"\n'))
    host = host_factory(copy, port, token)
    assert raw_http(port, body=ping_body(), headers=host.auth_headers()).status == 200
    assert raw_http(port, body=ping_body()).status == 401


def test_port_already_taken_names_the_port(tmp_path, port: int) -> None:
    copy = manual_copy(tmp_path / "c", settings=host_settings(port))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", port))
        squatter.listen(1)
        rc, stderr = run_to_exit(copy, [])
    assert rc != 0
    assert str(port) in stderr, stderr
    assert "panicked" not in stderr


def test_host_without_mcp_server_enabled_does_not_listen(tmp_path, port: int) -> None:
    copy = manual_copy(tmp_path / "c", settings=f"AgentCommandsEnabled = true\nMcpHttpPort = {port}\n")
    from mcec_e2e import start_process, stop_process

    proc, stderr_path = start_process(copy, [])
    try:
        # Wait until the host has logged that it is up, then check nothing listens.
        import time

        for _ in range(1500):
            if "McpServerEnabled" in stderr_path.read_text(errors="replace") or proc.poll() is not None:
                break
            time.sleep(0.02)
        assert proc.poll() is None, stderr_path.read_text()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        stop_process(proc)


# --------------------------------------------------------------------------- tokens


@pytest.mark.anyio
async def test_token_never_reaches_a_log(host: Host) -> None:
    token = host.token
    assert token
    async with sdk_http(host.url, host.auth_headers()) as (session, _):
        await session.call_tool("session-status", {})
        await session.call_tool("session-status", {"token": token})
        await session.call_tool("nope", {"secret": token})
    bad_auth = [
        f"Basic {token}",
        f"Token {token}",
        token,
        f"Bearer  {token}",
        f"Bearer {token}x",
        f"Bearer {token[:-1]}",
    ]
    for value in bad_auth:
        assert raw_http(host.port, body=ping_body(), headers={"Authorization": value}).status == 401, value
    good = host.auth_headers()
    assert raw_http(host.port, "GET", headers=good).status == 405
    assert raw_http(host.port, path="/other", body=ping_body(), headers=good).status == 404
    assert raw_http(host.port, body=ping_body(), headers=good, host="evil.example").status == 403
    assert raw_http(host.port, body=ping_body(), headers={**good, "X-Api-Key": token}).status == 200
    body_with_token = json.dumps(
        rpc("tools/call", {"name": "session-status", "arguments": {"auth": f"Bearer {token}"}})
    ).encode()
    assert raw_http(host.port, body=body_with_token, headers=good).status == 200
    assert raw_http(host.port, body=body_with_token, headers={"Authorization": f"Basic {token}"}).status == 401
    assert raw_http(host.port, body=b'{"broken": "' + token.encode(), headers=good).status >= 400
    host.stop()
    stderr, log = host.stderr(), host.copy.log()
    assert audit_lines(log), "expected audit lines in mcec.log"
    assert token not in stderr
    assert token not in log


@pytest.mark.anyio
async def test_token_echoed_in_a_tool_name_or_field_name_is_not_logged(host: Host) -> None:
    """Audit lines echo the tool name and the offending field; a client that puts the token
    there must not get it written to the log."""
    token = host.token
    async with sdk_http(host.url, host.auth_headers()) as (session, _):
        await session.call_tool(token, {})
        await session.call_tool("session-status", {token: 1})
    host.stop()
    assert token not in host.stderr()
    assert token not in host.copy.log()


def test_token_is_not_logged_by_stdio_either(tmp_path, token: str, raw_stdio) -> None:
    copy = manual_copy(tmp_path / "c", settings=f'AgentCommandsEnabled = true\nMcpAuthToken = "{token}"\n')
    server = raw_stdio(copy)
    server.initialize()
    server.call("session-status", {}, id=2)
    server.call("session-status", {"t": token}, id=3)
    assert server.wait_exit() == 0
    stdout = b"".join(server.stdout_lines)
    assert "AGENT-AUDIT" in server.stderr()
    assert token not in server.stderr()
    assert token not in copy.log()
    assert token.encode() not in stdout
