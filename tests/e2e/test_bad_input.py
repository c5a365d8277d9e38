"""Bad input must never crash mcec or lose a log line: malformed JSON-RPC, a batch, a huge
string argument, invalid UTF-8 on stdin, a client that disconnects mid-call; over HTTP,
malformed bodies and clients that hang up half way. Each gets the protocol's error (or a
clean close) and the next request is served."""

from __future__ import annotations

import json
import socket
import subprocess

import pytest
from mcec_e2e import (
    HANG_GUARD_S,
    INIT_PARAMS,
    Copy,
    Host,
    RawStdio,
    audit_lines,
    envelope_of,
    eventually_served,
    iter_json_lines,
    raw_http,
    read_http_response,
    rpc,
    stop_process,
)

BAD_LINES = [
    pytest.param(b"{not json\n", id="malformed-json"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 5, "method": "ping"\n', id="truncated-json"),
    pytest.param(json.dumps([rpc("ping", id=7), rpc("ping", id=8)]).encode() + b"\n", id="batch"),
    pytest.param(b"\xff\xfe\x00garbage\n", id="invalid-utf8-line"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"session-status","arguments":{"x":"\xff\xfe"}}}\n',
        id="invalid-utf8-inside-a-string",
    ),
    pytest.param(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"nope"}\n', id="params-not-an-object"),
    pytest.param(b"42\n", id="json-number"),
    pytest.param(b'{"id": 5, "method": "ping"}\n', id="no-jsonrpc-field"),
]


def started(raw_stdio, copy: Copy) -> RawStdio:
    server = raw_stdio(copy)
    init = server.initialize()
    assert init["result"]["serverInfo"]["name"] == "mcec"
    return server


def finish_cleanly(server: RawStdio) -> list[dict]:
    """Close stdin, expect exit code 0 without a panic; return every stdout message."""
    rc = server.wait_exit()
    stderr = server.stderr()
    assert "panicked" not in stderr, stderr
    assert rc == 0, stderr
    messages = list(iter_json_lines(server.stdout_lines))
    for msg in messages:
        assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", msg
    return messages


def still_serves(server: RawStdio) -> None:
    assert server.request("ping", id=99) == {"jsonrpc": "2.0", "id": 99, "result": {}}
    env, is_error = envelope_of(server.call("session-status", {}, id=100))
    assert env["ok"] is True and is_error is False, env


# --------------------------------------------------------------------------- stdio


@pytest.mark.parametrize("line", BAD_LINES)
def test_bad_line_does_not_stop_the_server(agent_copy: Copy, raw_stdio, line: bytes) -> None:
    server = started(raw_stdio, agent_copy)
    server.send_bytes(line)
    still_serves(server)
    finish_cleanly(server)


@pytest.mark.parametrize("line", BAD_LINES)
def test_bad_line_gets_a_json_rpc_error(agent_copy: Copy, raw_stdio, line: bytes) -> None:
    server = started(raw_stdio, agent_copy)
    server.send_bytes(line)
    still_serves(server)
    messages = finish_cleanly(server)
    errors = [m for m in messages if "error" in m]
    assert errors, f"no JSON-RPC error answered {line[:80]!r}; stdout: {messages}"
    for e in errors:
        assert isinstance(e["error"].get("code"), int), e


def test_five_megabyte_string_argument(agent_copy: Copy, raw_stdio) -> None:
    server = started(raw_stdio, agent_copy)
    huge = "a" * (5 * 1024 * 1024)
    env, is_error = envelope_of(server.call("session-status", {"x": huge}, id=5))
    assert is_error is True and env["error"]["code"] == "bad-arguments", env
    assert len(env["error"]["detail"]) < 1000
    env, _ = envelope_of(server.call(huge, {}, id=6))
    assert env["error"]["code"] == "unknown-tool"
    assert len(env["error"]["detail"]) < 1000
    still_serves(server)
    finish_cleanly(server)
    for text in [server.stderr(), agent_copy.log()]:
        lines = audit_lines(text)
        assert any("bad-arguments" in ln for ln in lines)
        assert any("unknown-tool" in ln for ln in lines)
        assert all(len(ln) < 2000 for ln in lines), max(len(ln) for ln in lines)


def test_line_over_the_stdio_limit_is_refused_and_the_server_goes_on(agent_copy: Copy, raw_stdio) -> None:
    server = started(raw_stdio, agent_copy)
    huge = "a" * (20 * 1024 * 1024)
    server.send(rpc("tools/call", {"name": "session-status", "arguments": {"x": huge}}, id=5))
    still_serves(server)
    messages = finish_cleanly(server)
    assert any("error" in m or m.get("id") == 5 for m in messages), messages


def test_client_that_disconnects_mid_call_leaves_a_clean_exit_and_an_audit_line(agent_copy: Copy) -> None:
    """Send a call, then hang up both pipes without reading the answer."""
    err_path = agent_copy.stderr_file()
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [str(agent_copy.exe), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env=agent_copy.env(),
            cwd=agent_copy.root,
        )
    try:
        assert proc.stdin and proc.stdout
        proc.stdin.write(json.dumps(rpc("initialize", INIT_PARAMS, id=1)).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        proc.stdin.write(json.dumps(rpc("notifications/initialized", id=None)).encode() + b"\n")
        proc.stdin.write(
            json.dumps(rpc("tools/call", {"name": "session-status", "arguments": {}}, id=2)).encode() + b"\n"
        )
        proc.stdin.flush()
        proc.stdout.close()
        proc.stdin.close()
        rc = proc.wait(timeout=HANG_GUARD_S)
    finally:
        stop_process(proc)
    stderr = err_path.read_text(errors="replace")
    assert "panicked" not in stderr, stderr
    assert rc == 0, stderr
    assert any("tool=session-status" in ln for ln in audit_lines(agent_copy.log())), agent_copy.log()


def test_next_client_is_served_after_a_bad_one(agent_copy: Copy, raw_stdio) -> None:
    bad = raw_stdio(agent_copy)
    bad.send_bytes(b"\xff\xff\xff\n{{{{\n")
    bad.kill()
    good = started(raw_stdio, agent_copy)
    still_serves(good)
    finish_cleanly(good)


# --------------------------------------------------------------------------- HTTP


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{not json", id="malformed"),
        pytest.param(b"\xff\xfe{}", id="invalid-utf8"),
        pytest.param(b"", id="empty"),
        pytest.param(b"42", id="number"),
    ],
)
def test_http_malformed_body_is_4xx_and_the_next_request_works(host: Host, body: bytes) -> None:
    resp = raw_http(host.port, body=body, headers=host.auth_headers())
    assert 400 <= resp.status < 500, resp
    ok = raw_http(host.port, body=json.dumps(rpc("ping", id=3)).encode(), headers=host.auth_headers())
    assert ok.status == 200 and ok.json()["id"] == 3


def test_http_batch_is_refused_and_the_next_request_works(host: Host) -> None:
    body = json.dumps([rpc("ping", id=1), rpc("ping", id=2)]).encode()
    resp = raw_http(host.port, body=body, headers=host.auth_headers())
    if resp.status == 200:
        assert "error" in resp.json(), resp
    else:
        assert 400 <= resp.status < 500, resp
    ok = raw_http(host.port, body=json.dumps(rpc("ping", id=3)).encode(), headers=host.auth_headers())
    assert ok.status == 200


def post_head(host: Host, length: int) -> bytes:
    """The head of an authorised JSON POST /mcp with a declared body length."""
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{host.port}\r\nAuthorization: Bearer {host.token}\r\n"
        f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def test_http_client_hanging_up_mid_body_does_not_hurt(host: Host) -> None:
    body = json.dumps(rpc("tools/call", {"name": "session-status", "arguments": {}}, id=1)).encode()
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", host.port)) as sock:
            head = post_head(host, len(body))
            sock.sendall(head + body[: len(body) // 2])
    # All twenty slots must be given back: 20 > 16 would otherwise mean 503 forever.
    ok = eventually_served(host.port, host.auth_headers())
    assert ok.status == 200, ok
    assert host.proc.poll() is None


def test_http_client_hanging_up_before_reading_the_answer(host: Host) -> None:
    body = json.dumps(rpc("tools/call", {"name": "session-status", "arguments": {}}, id=1)).encode()
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", host.port)) as sock:
            head = post_head(host, len(body))
            sock.sendall(head + body)
    assert eventually_served(host.port, host.auth_headers()).status == 200
    with socket.create_connection(("127.0.0.1", host.port)) as sock:
        msg = json.dumps(rpc("ping", id=4)).encode()
        sock.sendall(
            (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{host.port}\r\nAuthorization: Bearer {host.token}\r\n"
                f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                f"Content-Length: {len(msg)}\r\n\r\n"
            ).encode()
            + msg
        )
        status, answer = read_http_response(sock)
    assert status == 200 and json.loads(answer)["id"] == 4
    assert host.proc.poll() is None


def test_http_huge_string_argument(host: Host) -> None:
    msg = rpc("tools/call", {"name": "session-status", "arguments": {"x": "b" * 900_000}}, id=9)
    resp = raw_http(host.port, body=json.dumps(msg).encode(), headers=host.auth_headers())
    assert resp.status == 200, resp
    env = json.loads(resp.json()["result"]["content"][-1]["text"])
    assert env["error"]["code"] == "bad-arguments"
    assert len(env["error"]["detail"]) < 1000
