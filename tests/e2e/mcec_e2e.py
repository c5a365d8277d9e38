"""Shared machinery for the end-to-end tests and the benchmark.

Every test runs its own *manual copy* of the built binary: the binary placed in a fresh
temporary directory, with `mcec.settings` / `mcec.commands` written beside it (a
non-installed copy reads its files from the directory of its executable and writes
`mcec.log` there). Processes are started with a small, explicit environment (no DISPLAY,
XDG directories inside the test's temp dir) so a test never touches the real desktop or the
user's config, and every process a test starts is stopped when it ends. Without DISPLAY mcec
looks for the operator's display itself (logind, then the X sockets); the environment points
both searches at nothing ([`NO_X_SOCKETS`], [`NO_LOGIND`]) so that a test's mcec never finds
another test's X server, unless the test passes DISPLAY or its own search places.

Waits in here have generous upper bounds only to turn a hang into a failure with a
message; nothing asserts how fast anything is.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import anyio

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("MCEC_BIN", str(REPO / "target" / "debug" / "mcec")))

#: Upper bound for anything to happen before we call it a hang (not a speed assertion).
HANG_GUARD_S = 30.0

AUDIT = "AGENT-AUDIT:"
#: For mcec's display search (the variables are for tests only): a socket directory that does
#: not exist, and a D-Bus address where no bus listens, so "no display" stays "no display".
NO_X_SOCKETS = "/nonexistent/mcec-test-no-x11-sockets"
NO_LOGIND = "unix:path=/nonexistent/mcec-test-no-logind"


# --------------------------------------------------------------------------- copies


def place_binary(dest: Path) -> Path:
    """Put the binary at `dest` (a hard link when possible, else a copy)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not BIN.is_file():
        raise FileNotFoundError(f"mcec binary not found at {BIN}; build it with `cargo build -p mcec` or set MCEC_BIN")
    try:
        os.link(BIN, dest)
    except OSError:
        shutil.copy2(BIN, dest)
    os.chmod(dest, 0o755)
    return dest


@dataclass
class Copy:
    """One mcec copy with its own config dir, home and XDG dirs, all under `root`."""

    root: Path
    exe: Path
    config_dir: Path
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def settings_path(self) -> Path:
        return self.config_dir / "mcec.settings"

    @property
    def commands_path(self) -> Path:
        return self.config_dir / "mcec.commands"

    @property
    def log_path(self) -> Path:
        return self.config_dir / "mcec.log"

    def write_settings(self, text: str) -> None:
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.settings_path.write_text(text)

    def enable_commands(self, *names: str) -> None:
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.commands_path.write_text("".join(f"[{n}]\nEnabled = true\n\n" for n in names))

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def env(self, **extra: str) -> dict[str, str]:
        home = self.root / "home"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(self.root / "xdg-config"),
            "XDG_STATE_HOME": str(self.root / "xdg-state"),
            "XDG_CACHE_HOME": str(self.root / "xdg-cache"),
            "LANG": "C.UTF-8",
            "MCEC_X11_SOCKET_DIR": NO_X_SOCKETS,
            "MCEC_LOGIND_BUS": NO_LOGIND,
        }
        env.update(self.extra_env)
        env.update(extra)
        return {k: v for k, v in env.items() if v is not None}

    def stderr_file(self, name: str = "stderr") -> Path:
        """A fresh file for one process's stderr."""
        n = 0
        while (path := self.root / f"{name}.{n}.txt").exists():
            n += 1
        return path


def manual_copy(root: Path, settings: str | None = None, commands: tuple[str, ...] = ()) -> Copy:
    """A non-installed copy: the binary in `root/copy/`, its files beside it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    exe = place_binary(root / "copy" / "mcec")
    copy = Copy(root=root, exe=exe, config_dir=exe.parent)
    if settings is not None:
        copy.write_settings(settings)
    if commands:
        copy.enable_commands(*commands)
    return copy


def installed_copy(root: Path) -> Copy:
    """An installed copy: the binary under a prefix named in MCEC_EXTRA_INSTALL_PREFIXES;
    its config lives in $XDG_CONFIG_HOME/mcec/."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    prefix = root / "prefix"
    exe = place_binary(prefix / "bin" / "mcec")
    config_dir = root / "xdg-config" / "mcec"
    config_dir.mkdir(parents=True, exist_ok=True)
    return Copy(root=root, exe=exe, config_dir=config_dir, extra_env={"MCEC_EXTRA_INSTALL_PREFIXES": str(prefix)})


def audit_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if AUDIT in line]


def audit_with(copy: Copy, *words: str) -> list[str]:
    """The audit lines in `copy`'s mcec.log that contain every one of `words`."""
    return [line for line in audit_lines(copy.log()) if all(w in line for w in words)]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGINT) -> int:
    """Ask politely, then insist. Returns the exit code."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    return proc.returncode


# --------------------------------------------------------------------------- host


@dataclass
class Host:
    """A running `mcec` host serving HTTP on `port`."""

    copy: Copy
    proc: subprocess.Popen
    port: int
    stderr_path: Path
    token: str | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def stop(self) -> int:
        return stop_process(self.proc)


def host_settings(port: int, token: str | None = None, extra: str = "") -> str:
    text = f"AgentCommandsEnabled = true\nMcpServerEnabled = true\nMcpHttpPort = {port}\n"
    if token:
        text += f'McpAuthToken = "{token}"\n'
    return text + extra


def start_process(copy: Copy, args: list[str], env_extra: dict[str, str] | None = None, stdin=subprocess.DEVNULL):
    stderr_path = copy.stderr_file()
    err = open(stderr_path, "wb")
    try:
        proc = subprocess.Popen(
            [str(copy.exe), *args],
            stdin=stdin,
            stdout=subprocess.PIPE if stdin is subprocess.PIPE else subprocess.DEVNULL,
            stderr=err,
            env=copy.env(**(env_extra or {})),
            cwd=copy.root,
        )
    finally:
        err.close()
    return proc, stderr_path


def start_host(copy: Copy, port: int, token: str | None = None) -> Host:
    """Start `mcec` (the host) and wait until its port accepts connections.

    Raises RuntimeError with the process's stderr if it exits first."""
    proc, stderr_path = start_process(copy, [])
    host = Host(copy=copy, proc=proc, port=port, stderr_path=stderr_path, token=token)
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"mcec host exited with {proc.returncode} before listening:\n{host.stderr()}")
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return host
        if time.monotonic() > deadline:
            host.stop()
            raise RuntimeError(f"mcec host did not listen on {port}:\n{host.stderr()}")
        time.sleep(0.02)


def run_to_exit(copy: Copy, args: list[str], env_extra: dict[str, str] | None = None) -> tuple[int, str]:
    """Run mcec expecting it to exit by itself; returns (exit code, stderr)."""
    proc, stderr_path = start_process(copy, args, env_extra)
    try:
        proc.wait(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        stop_process(proc)
        raise AssertionError(
            f"mcec {' '.join(args)} did not exit:\n{stderr_path.read_text(errors='replace')}"
        ) from None
    return proc.returncode, stderr_path.read_text(errors="replace")


# --------------------------------------------------------------------------- raw HTTP


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def raw_http(
    port: int,
    method: str = "POST",
    path: str = "/mcp",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    host: str | None = None,
) -> RawResponse:
    """One request with http.client; `host` overrides the Host header."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG_GUARD_S)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
        all_headers = dict(MCP_HEADERS)
        all_headers.update(headers or {})
        for k, v in all_headers.items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        return RawResponse(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def eventually_served(port: int, headers: dict[str, str] | None = None) -> RawResponse:
    """Ping until the server answers 200 (e.g. while it is still tidying up after clients
    that hung up); gives up after HANG_GUARD_S and returns the last answer."""
    body = json.dumps(rpc("ping", id="probe")).encode()
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        resp = raw_http(port, body=body, headers=headers)
        if resp.status == 200 or time.monotonic() > deadline:
            return resp
        time.sleep(0.05)


def rpc(method: str, params: dict | None = None, id: int | str | None = 1) -> dict:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        msg["id"] = id
    if params is not None:
        msg["params"] = params
    return msg


INIT_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "mcec-e2e", "version": "0"},
}


def read_http_response(sock: socket.socket) -> tuple[int, bytes]:
    """Read one HTTP/1.1 response (status line, headers, Content-Length body) from a raw socket."""
    sock.settimeout(HANG_GUARD_S)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    if not data:
        raise ConnectionError("connection closed without a response")
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, rest[:length]


# --------------------------------------------------------------------------- raw stdio


class RawStdio:
    """`mcec mcp` driven line by line, without the SDK, so we see every stdout byte."""

    def __init__(self, copy: Copy, env_extra: dict[str, str] | None = None, args: tuple[str, ...] = ("mcp",)):
        self.copy = copy
        self.proc, self.stderr_path = start_process(copy, list(args), env_extra, stdin=subprocess.PIPE)
        self.stdout_lines: list[bytes] = []
        self._q: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.stdout_lines.append(line)
            self._q.put(line)
        self._q.put(None)

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg: Any) -> None:
        self.send_bytes(json.dumps(msg).encode() + b"\n")

    def next_message(self) -> dict | None:
        """The next stdout line as JSON, or None at end of stream."""
        try:
            line = self._q.get(timeout=HANG_GUARD_S)
        except queue.Empty:
            raise AssertionError(f"no output from mcec mcp; stderr:\n{self.stderr()}") from None
        if line is None:
            self._q.put(None)
            return None
        return json.loads(line)

    def response_to(self, id: Any) -> dict:
        """Read messages until the response with this id (others are kept in stdout_lines)."""
        while True:
            msg = self.next_message()
            if msg is None:
                raise AssertionError(
                    f"stdout closed before a response to id {id!r}; exit={self.proc.poll()}; stderr:\n{self.stderr()}"
                )
            if msg.get("id") == id and ("result" in msg or "error" in msg):
                return msg

    def request(self, method: str, params: dict | None = None, id: Any = 1) -> dict:
        self.send(rpc(method, params, id))
        return self.response_to(id)

    def initialize(self) -> dict:
        resp = self.request("initialize", INIT_PARAMS, id="init")
        self.send(rpc("notifications/initialized", None, id=None))
        return resp

    def call(self, name: str, arguments: dict | None = None, id: Any = 1) -> dict:
        """tools/call; returns the raw JSON-RPC response (see `envelope_of`)."""
        resp = self.request("tools/call", {"name": name, "arguments": arguments or {}}, id=id)
        return resp

    def close_stdin(self) -> None:
        if self.proc.stdin and not self.proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError, OSError):
                self.proc.stdin.close()

    def wait_exit(self) -> int:
        self.close_stdin()
        try:
            self.proc.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            stop_process(self.proc, signal.SIGKILL)
            raise AssertionError(f"mcec mcp did not exit after stdin closed; stderr:\n{self.stderr()}") from None
        self._reader.join(timeout=HANG_GUARD_S)
        return self.proc.returncode

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def kill(self) -> None:
        self.close_stdin()
        if self.proc.poll() is None:
            stop_process(self.proc, signal.SIGTERM)


def envelope_of(call_result: dict) -> tuple[dict, bool]:
    """(envelope, isError) from a raw `tools/call` JSON-RPC response."""
    result = call_result["result"]
    texts = [c["text"] for c in result["content"] if c.get("type") == "text"]
    return json.loads(texts[-1]), bool(result.get("isError", False))


# --------------------------------------------------------------------------- SDK


@contextlib.contextmanager
def unwrap_groups() -> Iterator[None]:
    """The SDK's task groups wrap a test's own AssertionError in nested exception groups;
    re-raise the single underlying exception so failures read plainly."""
    try:
        yield
    except BaseExceptionGroup as group:
        leaves = []

        def collect(e: BaseException) -> None:
            if isinstance(e, BaseExceptionGroup):
                for inner in e.exceptions:
                    collect(inner)
            else:
                leaves.append(e)

        collect(group)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise


@contextlib.asynccontextmanager
async def sdk_stdio(
    copy: Copy,
    env_extra: dict[str, str] | None = None,
    wrapper: list[str] | None = None,
    mcp_args: tuple[str, ...] = (),
    client_name: str | None = None,
) -> AsyncIterator[Any]:
    """An initialized official-SDK ClientSession over `mcec mcp` on this copy.

    Yields (session, initialize result). The server's stderr goes to a file in the copy's root.
    `wrapper` is a command that runs `mcec mcp` for it (its argv gets the exe and `mcp` appended);
    `mcp_args` follow `mcp` (e.g. `--session`); `client_name` is the `clientInfo` name the
    session gives in `initialize` (the SDK's own otherwise)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.types import Implementation
    from mcp.client.stdio import stdio_client

    argv = [*(wrapper or []), str(copy.exe), "mcp", *mcp_args]
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], env=copy.env(**(env_extra or {})), cwd=str(copy.root)
    )
    with open(copy.stderr_file("sdk-stderr"), "w") as errlog, unwrap_groups():
        async with stdio_client(params, errlog=errlog) as (read, write):
            info = Implementation(name=client_name, version="1.0") if client_name else None
            async with ClientSession(read, write, client_info=info) as session:
                init = await session.initialize()
                yield session, init


@contextlib.asynccontextmanager
async def sdk_http(
    url: str, headers: dict[str, str] | None = None, client_name: str | None = None
) -> AsyncIterator[Any]:
    """An initialized official-SDK ClientSession over Streamable HTTP (`client_name` as in
    `sdk_stdio`)."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import Implementation

    info = Implementation(name=client_name, version="1.0") if client_name else None
    with unwrap_groups():
        async with (
            httpx2.AsyncClient(headers=headers or {}, timeout=HANG_GUARD_S) as client,
            streamable_http_client(url, http_client=client) as (read, write),
            ClientSession(read, write, client_info=info) as session,
        ):
            init = await session.initialize()
            yield session, init


def sdk_envelope(result: Any) -> dict:
    """The envelope from an SDK CallToolResult (the last text block)."""
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    assert texts, f"no text block in {result!r}"
    return json.loads(texts[-1])


async def code_of(session: Any, tool: str, args: dict | None = None) -> str | None:
    """The error code one SDK call answers, None when it succeeds."""
    env = sdk_envelope(await session.call_tool(tool, args or {}))
    return None if env["ok"] else env["error"]["code"]


async def wait_for_code(session: Any, want: str | None, tool: str = "displays") -> str | None:
    """Poll one cheap call until it answers `want` (a stop or a record lands on other threads);
    returns the last answer, for the caller to assert on."""
    got = "never asked"
    for _ in range(100):
        got = await code_of(session, tool)
        if got == want:
            break
        await anyio.sleep(0.05)
    return got


def sdk_stderr(copy: Copy) -> str:
    return "".join(p.read_text(errors="replace") for p in sorted(copy.root.glob("sdk-stderr.*.txt")))


def all_stderr(copy: Copy) -> str:
    return "".join(p.read_text(errors="replace") for p in sorted(copy.root.glob("*.txt")))


def iter_json_lines(lines: list[bytes]) -> Iterator[Any]:
    for line in lines:
        if line.strip():
            yield json.loads(line)


# --------------------------------------------------------------------------- sessions


def session_copy(parent: Copy, handoff: dict) -> Copy:
    """The session copy described by a `provision-session` handoff, run with the same
    HOME/XDG environment as the copy that provisioned it (its files live beside its exe)."""
    directory = Path(handoff["directory"])
    return Copy(root=parent.root, exe=Path(handoff["exePath"]), config_dir=directory, extra_env=dict(parent.extra_env))


def run_cli(
    copy: Copy, args: list[str], env_extra: dict[str, str] | None = None, preexec_fn: Any = None
) -> tuple[int, str, str]:
    """Run an mcec command that exits by itself; returns (exit code, stdout, stderr)."""
    try:
        done = subprocess.run(
            [str(copy.exe), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=copy.env(**(env_extra or {})),
            cwd=copy.root,
            timeout=HANG_GUARD_S * 4,
            preexec_fn=preexec_fn,
        )
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"mcec {' '.join(args)} did not exit:\n{e.stderr!r}") from None
    return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")


def sessions_root(copy: Copy) -> Path:
    """$XDG_STATE_HOME/mcec/sessions as this copy's environment names it."""
    return Path(copy.env()["XDG_STATE_HOME"]) / "mcec" / "sessions"


STAMP_FILE = ".mcec-session"


def backdate(session_dir: Path, seconds: int) -> None:
    """Rewrite a session's creation stamp so the session looks `seconds` old."""
    (session_dir / STAMP_FILE).write_text(f"{int(time.time()) - seconds}\n")


def wait_for_port(proc: subprocess.Popen, port: int, what: str = "mcec") -> None:
    """Poll until `port` accepts connections; raises if `proc` exits first or it hangs."""
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before listening on {port}")
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not listen on {port}")
        time.sleep(0.005)


def private_bus_argv(socket_dir: Path) -> list[str]:
    """`dbus-daemon` for a private session bus (its address printed on stdout) whose socket
    lies in `socket_dir`, a test's own temporary directory: the session configuration would put
    it in /tmp, where a daemon ended by signal leaves it behind."""
    return ["dbus-daemon", "--session", "--nofork", f"--address=unix:dir={socket_dir}", "--print-address=1"]
