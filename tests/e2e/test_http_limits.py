"""The HTTP front door bounds every connection (issue 8, item 4): a head that never completes,
a kept-alive connection that goes quiet and a body that trickles are all cut off by the
server; 2,000 idle sockets against a host limited to 1,024 descriptors cannot keep a
legitimate request out. Also the start-up rules for the bind address and the token, the
allowed-hosts setting, repeated headers and strict port text (item 7, issue 15 item 4).

Waits are bounded by HANG_GUARD_S so a missing timeout fails the test; nothing asserts how
fast the server is."""

from __future__ import annotations

import contextlib
import json
import resource
import selectors
import socket
import subprocess
import time
from pathlib import Path

import pytest
from mcec_e2e import (
    HANG_GUARD_S,
    Host,
    free_port,
    host_settings,
    manual_copy,
    raw_http,
    read_http_response,
    rpc,
    run_to_exit,
    sdk_http,
    start_process,
)

PING = json.dumps(rpc("ping", id="p")).encode()
#: The server's limits (crates/mcp/src/http_conns.rs); the waits below only need to exceed them.
HEADER_READ_TIMEOUT_S = 10
BODY_READ_TIMEOUT_S = 20
STRONG = "0123456789abcdef0123456789abcdef"


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S)


def closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes `sock` (EOF or reset) within `within` seconds; any bytes it
    sends first (an error response) are read and ignored."""
    sock.settimeout(within)
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return False


def head(port: int, token: str | None, length: int | None = None, extra: str = "") -> bytes:
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
    ]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


def served(host: Host) -> int:
    return raw_http(host.port, body=PING, headers=host.auth_headers()).status


# --------------------------------------------------------------------------- timeouts


def test_a_head_that_never_completes_is_cut_off(host: Host) -> None:
    slow = connect(host.port)
    slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % host.port)
    silent = connect(host.port)  # connects and sends nothing at all
    # Keep trickling header bytes: the clock is not reset by them.
    deadline = time.monotonic() + HEADER_READ_TIMEOUT_S + HANG_GUARD_S
    cut = False
    while time.monotonic() < deadline:
        try:
            slow.sendall(b"X")
        except (BrokenPipeError, ConnectionResetError):
            cut = True
            break
        if closed_by_server(slow, 1.0):
            cut = True
            break
    assert cut, "a trickled head kept its connection open"
    assert closed_by_server(silent, HANG_GUARD_S), "a silent connection stayed open"
    assert served(host) == 200, "positive control: a whole request is still served"


def test_an_idle_kept_alive_connection_is_closed(host: Host) -> None:
    sock = connect(host.port)
    sock.sendall(head(host.port, host.token, len(PING)) + PING)
    status, body = read_http_response(sock)
    assert status == 200, body
    # Positive control: the connection was kept alive (a second request on it is answered).
    sock.sendall(head(host.port, host.token, len(PING)) + PING)
    assert read_http_response(sock)[0] == 200
    assert closed_by_server(sock, HEADER_READ_TIMEOUT_S + HANG_GUARD_S), "an idle keep-alive connection stayed open"


def test_a_trickling_authenticated_body_gets_408_and_frees_its_slot(host: Host) -> None:
    slow = [connect(host.port) for _ in range(17)]
    for sock in slow:
        sock.sendall(head(host.port, host.token, 1000) + b'{"jsonrpc":')
    # Sixteen admitted requests hold every in-flight slot: exactly one of the 17 gets 503 now.
    with selectors.DefaultSelector() as sel:
        for sock in slow:
            sel.register(sock, selectors.EVENT_READ)
        ready = sel.select(timeout=HANG_GUARD_S)
        assert len(ready) == 1, f"{len(ready)} answers before any body timeout"
        refused = ready[0][0].fileobj
        assert read_http_response(refused)[0] == 503
    admitted = [sock for sock in slow if sock is not refused]
    assert served(host) == 503, "still full"
    for sock in admitted:
        sock.settimeout(BODY_READ_TIMEOUT_S + HANG_GUARD_S)
        status, body = read_http_response(sock)
        assert status == 408, body
    assert served(host) == 200, "the slots are free again"


def test_an_unauthenticated_body_is_never_waited_for(host: Host) -> None:
    for token in (None, "wrong"):
        sock = connect(host.port)
        sock.sendall(head(host.port, token, 1000))
        status, _ = read_http_response(sock)
        assert status == 401, token


# --------------------------------------------------------------------------- the cap


def start_limited_host(tmp_path, port: int, token: str, nofile: int) -> subprocess.Popen:
    copy = manual_copy(tmp_path / "limited", settings=host_settings(port, token))

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    err = open(copy.stderr_file(), "wb")
    proc = subprocess.Popen(
        [str(copy.exe)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
        env=copy.env(), cwd=copy.root, preexec_fn=limit,
    )
    err.close()
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        assert proc.poll() is None, "the limited host exited at start"
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        assert time.monotonic() < deadline, "the limited host did not listen"
        time.sleep(0.05)


def test_two_thousand_idle_sockets_cannot_keep_a_request_out(tmp_path, token: str) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4096
    if soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(hard, want)))
        except (ValueError, OSError):
            pytest.skip("this test process cannot open 2,000 sockets")
    port = free_port()
    proc = start_limited_host(tmp_path, port, token, 1024)
    idle: list[socket.socket] = []
    try:
        limits = Path(f"/proc/{proc.pid}/limits").read_text()
        assert any(ln.startswith("Max open files") and " 1024 " in ln for ln in limits.splitlines()), limits
        deadline = time.monotonic() + HANG_GUARD_S
        while len(idle) < 2000 and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                idle.append(socket.create_connection(("127.0.0.1", port), timeout=1))
        assert len(idle) >= 1900, f"only {len(idle)} idle sockets connected"
        resp = raw_http(port, body=PING, headers={"Authorization": f"Bearer {token}"})
        assert resp.status == 200, resp
        assert proc.poll() is None
        # The cap acted: most of the idle sockets were closed by the server.
        closed = sum(closed_by_server(s, 0.01) for s in idle)
        assert closed >= 2000 - 256 - 100, f"only {closed} idle sockets were closed"
    finally:
        for s in idle:
            s.close()
        proc.terminate()
        try:
            proc.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --------------------------------------------------------------------------- head rules


@pytest.mark.parametrize("name", ["Host", "Origin", "Authorization"])
def test_a_repeated_header_is_400(host: Host, name: str) -> None:
    good = {
        "Host": f"127.0.0.1:{host.port}",
        "Origin": f"http://127.0.0.1:{host.port}",
        "Authorization": f"Bearer {host.token}",
    }
    lines = [f"{k}: {v}" for k, v in good.items() if k != name]
    lines += [f"{name}: {good[name]}", f"{name}: {good[name]}"]
    request = (
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        + "".join(f"{ln}\r\n" for ln in lines)
        + f"Content-Length: {len(PING)}\r\n\r\n"
    ).encode() + PING
    sock = connect(host.port)
    sock.sendall(request)
    assert read_http_response(sock)[0] == 400
    # Positive control: each header once is served.
    assert raw_http(host.port, body=PING, headers={"Origin": good["Origin"], **host.auth_headers()}).status == 200


@pytest.mark.parametrize("port_text", ["+{p}", "-{p}", " {p}", "{p}x", "0x{h}"])
def test_port_text_in_host_is_parsed_strictly(host: Host, port_text: str) -> None:
    text = port_text.format(p=host.port, h=format(host.port, "x"))
    resp = raw_http(host.port, body=PING, headers=host.auth_headers(), host=f"localhost:{text}")
    assert resp.status in (400, 403), (text, resp.status)
    assert raw_http(host.port, body=PING, headers=host.auth_headers(), host=f"localhost:{host.port}").status == 200


def test_bearer_with_a_trailing_space_is_the_same_header(host: Host) -> None:
    """HTTP removes whitespace around a field value before anyone sees it (RFC 9110 5.5), so
    `Bearer <token> ` is `Bearer <token>` (docs/decisions.md); a doubled inner space is not."""
    assert raw_http(host.port, body=PING, headers={"Authorization": f"Bearer {host.token} "}).status == 200
    assert raw_http(host.port, body=PING, headers={"Authorization": f"Bearer  {host.token}"}).status == 401
    assert raw_http(host.port, body=PING, headers={"Authorization": f"Bearer {host.token}x"}).status == 401


# --------------------------------------------------------------------------- start-up


def listening(port: int) -> bool:
    for family, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(1)
            with contextlib.suppress(OSError):
                s.connect((addr, port))
                return True
    return False


@pytest.mark.parametrize(
    ("address", "token", "why"),
    [
        ("::", None, "without McpAuthToken"),
        ("[::]", None, "without McpAuthToken"),
        ("0.0.0.0", None, "without McpAuthToken"),
        ("::ffff:127.0.0.1", None, "without McpAuthToken"),
        ("0.0.0.0", "x", "too weak"),
        ("::", "a" * 40, "too weak"),
        ("localhost", None, "not an IP address"),
        (" 127.0.0.1", None, "not an IP address"),
        ("*", None, "not an IP address"),
        ("example.com", None, "not an IP address"),
        ("127.1", None, "not an IP address"),
        ("2130706433", None, "not an IP address"),
    ],
)
def test_bind_addresses_that_are_refused_at_start(tmp_path, address: str, token: str | None, why: str) -> None:
    port = free_port()
    extra = f'McpBindAddress = "{address}"\n'
    copy = manual_copy(tmp_path / "c", settings=host_settings(port, token, extra))
    code, stderr = run_to_exit(copy, [])
    assert code == 2, stderr
    assert why in stderr, stderr
    assert not listening(port)


@pytest.mark.anyio
@pytest.mark.parametrize(("address", "connect_to"), [("127.0.0.2", "127.0.0.2"), ("::1", "[::1]")])
async def test_other_loopback_addresses_start_without_a_token(tmp_path, hosts, address: str, connect_to: str) -> None:
    port = free_port()
    copy = manual_copy(tmp_path / "c", settings=host_settings(port, None, f'McpBindAddress = "{address}"\n'))
    proc, stderr_path = start_process(copy, [])
    hosts.append(Host(copy=copy, proc=proc, port=port, stderr_path=stderr_path))
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        assert proc.poll() is None, stderr_path.read_text()
        with socket.socket(family, socket.SOCK_STREAM) as s, contextlib.suppress(OSError):
            s.settimeout(1)
            s.connect((address, port))
            break
        assert time.monotonic() < deadline, "did not listen"
        time.sleep(0.05)
    async with sdk_http(f"http://{connect_to}:{port}/mcp") as (session, init):
        assert init.server_info.name == "mcec"
        await session.send_ping()


def test_a_strong_token_opens_a_non_loopback_bind_and_allowed_hosts_pass(tmp_path, hosts) -> None:
    port = free_port()
    extra = 'McpBindAddress = "0.0.0.0"\nMcpAllowedHosts = ["desk.example"]\n'
    copy = manual_copy(tmp_path / "c", settings=host_settings(port, STRONG, extra))
    proc, stderr_path = start_process(copy, [])
    hosts.append(Host(copy=copy, proc=proc, port=port, stderr_path=stderr_path, token=STRONG))
    deadline = time.monotonic() + HANG_GUARD_S
    while not listening(port):
        assert proc.poll() is None, stderr_path.read_text()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    auth = {"Authorization": f"Bearer {STRONG}"}
    assert raw_http(port, body=PING, headers=auth, host=f"desk.example:{port}").status == 200
    assert raw_http(port, body=PING, headers=auth, host=f"other.example:{port}").status == 403
    origin = {"Origin": f"http://desk.example:{port}", **auth}
    assert raw_http(port, body=PING, headers=origin, host=f"desk.example:{port}").status == 200
    evil = {"Origin": f"http://evil.example:{port}", **auth}
    assert raw_http(port, body=PING, headers=evil, host=f"desk.example:{port}").status == 403
