"""mcec finds the operator's X display when the client does not pass `DISPLAY`.

Every server here is started by the official Python SDK's `stdio_client` with the SDK's own
default environment (`get_default_environment()`: HOME, PATH, SHELL, TERM... and never
DISPLAY or XAUTHORITY), plus two variables that exist for tests only: `MCEC_X11_SOCKET_DIR`,
a directory holding links to the sockets of this test's own Xvfb servers (other tests'
servers run on this machine at the same time, and CI may have servers of its own), and
`MCEC_LOGIND_BUS`, the bus asked for logind (nothing there, or the test logind of
`logind_stub.py` on a private bus)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import tempfile
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client

from mcec_e2e import NO_LOGIND, Copy, manual_copy, private_bus_argv, unwrap_groups
from xdesk import Screen

pytestmark = pytest.mark.anyio

X11_SOCKETS = Path("/tmp/.X11-unix")
SYSTEM_PYTHON = "/usr/bin/python3"
LOGIND_STUB = Path(__file__).with_name("logind_stub.py")


def socket_dir(tmp: Path, *displays: str) -> Path:
    """A directory standing for /tmp/.X11-unix with only these displays' sockets in it."""
    d = tmp / "x11-unix"
    d.mkdir(exist_ok=True)
    for display in displays:
        name = "X" + display.lstrip(":")
        (d / name).symlink_to(X11_SOCKETS / name)
    return d


def client_env(sockets: Path, logind: str = NO_LOGIND, **extra: str) -> dict[str, str]:
    env = {**get_default_environment(), "MCEC_X11_SOCKET_DIR": str(sockets), "MCEC_LOGIND_BUS": logind, **extra}
    assert "DISPLAY" not in get_default_environment()
    return env


def unused_display() -> str:
    """A display number with no server, socket or lock file (well above what -displayfd hands out)."""
    for n in range(400, 1000):
        if not (X11_SOCKETS / f"X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return f":{n}"
    raise RuntimeError("no unused display number")


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("capture", "click"))


@asynccontextmanager
async def connected(copy: Copy, env: dict[str, str]):
    params = StdioServerParameters(command=str(copy.exe), args=["mcp"], env=env)
    with copy.stderr_file().open("w") as errlog, unwrap_groups():
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, args: dict | None = None) -> dict:
    result = await session.call_tool(tool, args or {})
    return json.loads(result.content[-1].text)


async def test_one_display_of_this_user_is_found_through_its_socket(copy: Copy, tmp_path: Path) -> None:
    with Screen() as screen:
        env = client_env(socket_dir(tmp_path, screen.display))
        async with connected(copy, env) as s:
            shot = await call(s, "capture", {})
            assert shot["ok"], shot
            click = await call(s, "click", {"at": {"x": 10, "y": 10}})
            assert click["ok"], click
            status = await call(s, "session-status")
            assert status["result"]["desktop"] == {"display": screen.display, "source": "socket"}, status
            assert status["result"]["emergencyStop"]["armed"] is True, "the stop watches the display found"
    assert f"desktop: X display `{screen.display}` (source: socket)" in copy.log()


async def test_two_displays_are_an_error_naming_both(copy: Copy, tmp_path: Path) -> None:
    with Screen() as a, Screen() as b:
        async with connected(copy, client_env(socket_dir(tmp_path, a.display, b.display))) as s:
            shot = await call(s, "capture", {})
            status = await call(s, "session-status")
    assert not shot["ok"] and shot["error"]["code"] == "no-desktop", shot
    detail = shot["error"]["detail"]
    assert f"`{a.display}`" in detail and f"`{b.display}`" in detail and "DISPLAY" in detail, detail
    assert status["result"]["desktop"] is None, status


async def test_no_display_says_what_was_looked_at(copy: Copy, tmp_path: Path) -> None:
    sockets = socket_dir(tmp_path)
    async with connected(copy, client_env(sockets)) as s:
        shot = await call(s, "capture", {})
    assert not shot["ok"] and shot["error"]["code"] == "no-desktop", shot
    detail = shot["error"]["detail"]
    assert str(sockets) in detail and "logind" in detail and "DISPLAY is not set" in detail, detail


async def test_a_display_that_points_nowhere_is_named_and_never_swapped(copy: Copy, tmp_path: Path) -> None:
    with Screen() as other:
        missing = unused_display()
        env = client_env(socket_dir(tmp_path, other.display), DISPLAY=missing)
        async with connected(copy, env) as s:
            shot = await call(s, "capture", {})
    assert not shot["ok"] and shot["error"]["code"] == "no-desktop", shot
    detail = shot["error"]["detail"]
    assert f"`{missing}`" in detail and other.display not in detail, detail


@contextmanager
def private_logind(uid: int, *sessions: str) -> Iterator[str]:
    """A private bus with the test logind on it; yields the bus address. Both die by PID."""
    sockets = tempfile.TemporaryDirectory(prefix="mcec-bus-")
    bus = subprocess.Popen(private_bus_argv(Path(sockets.name)), stdout=subprocess.PIPE, text=True)
    stub = None
    try:
        assert bus.stdout is not None
        address = bus.stdout.readline().strip()
        stub = subprocess.Popen(
            [SYSTEM_PYTHON, str(LOGIND_STUB), str(uid), *sessions],
            env={"DBUS_STARTER_ADDRESS": address, "PATH": os.environ.get("PATH", "")},
            stdout=subprocess.PIPE,
            text=True,
        )
        assert stub.stdout is not None and stub.stdout.readline().strip() == "ready"
        yield address
    finally:
        for proc in (stub, bus):
            if proc is not None:
                proc.kill()
                proc.wait(timeout=10)
        sockets.cleanup()


async def test_logind_chooses_the_active_sessions_display(copy: Copy, tmp_path: Path) -> None:
    with Screen() as inactive, Screen() as active:
        sessions = (f"1,x11,{inactive.display},no", f"2,x11,{active.display},yes")
        with private_logind(os.getuid(), *sessions) as bus:
            # Both servers accept this user: the sockets alone could not choose.
            env = client_env(socket_dir(tmp_path, inactive.display, active.display), logind=bus)
            async with connected(copy, env) as s:
                shot = await call(s, "capture", {})
                status = await call(s, "session-status")
    assert shot["ok"], shot
    assert status["result"]["desktop"] == {"display": active.display, "source": "logind"}, status


TS_CLIENT = Path(__file__).with_name("ts_client")


def test_the_typescript_sdk_client_finds_the_one_display(copy: Copy, tmp_path: Path) -> None:
    """The same first case through the official TypeScript SDK's StdioClientTransport
    (installed by scripts/test into tests/e2e/ts_client/node_modules)."""
    assert (TS_CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir(), "run scripts/test (npm install)"
    with Screen() as screen:
        sockets = socket_dir(tmp_path, screen.display)
        calls = ["capture:{}", 'click:{"at":{"x":10,"y":10}}', "session-status:{}"]
        with copy.stderr_file("ts").open("w") as errlog:
            done = subprocess.run(
                ["node", "client.mjs", str(copy.exe), str(sockets), NO_LOGIND, *calls],
                cwd=TS_CLIENT,
                env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/")},
                stdout=subprocess.PIPE,
                stderr=errlog,
                text=True,
                timeout=120,
            )
    assert done.returncode == 0, done
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["capture"]["ok"] and out["click"]["ok"], out
    assert out["session-status"]["result"]["desktop"] == {"display": screen.display, "source": "socket"}, out


async def test_a_wayland_session_found_through_logind_is_reported_as_one(copy: Copy, tmp_path: Path) -> None:
    """logind says the active session is a Wayland one: its X server is an XWayland, where the
    X11 stop cannot see the keyboard, so the stop is not armed and actuation is refused; what
    only observes still works."""
    with Screen() as screen:
        with private_logind(os.getuid(), f"3,wayland,{screen.display},yes") as bus:
            env = client_env(socket_dir(tmp_path, screen.display), logind=bus)
            async with connected(copy, env) as s:
                shot = await call(s, "capture", {})
                click = await call(s, "click", {"at": {"x": 10, "y": 10}})
                status = await call(s, "session-status")
    assert shot["ok"], shot
    assert not click["ok"] and click["error"]["code"] == "emergency-stop-unavailable", click
    assert "Wayland" in click["error"]["detail"], click
    assert status["result"]["desktop"] == {"display": screen.display, "source": "logind"}, status
    assert status["result"]["emergencyStop"]["armed"] is False, status


@contextmanager
def xvfb_with_authority(tmp: Path) -> Iterator[tuple[str, Path]]:
    """An Xvfb that admits only holders of its cookie; yields its display and a client
    authority file holding the cookie. Killed by PID."""
    cookie = secrets.token_hex(16)
    server_auth, client_auth = tmp / "server.auth", tmp / "client.auth"
    add = ["add", ":0", "MIT-MAGIC-COOKIE-1", cookie]
    subprocess.run(["xauth", "-f", str(server_auth), *add], check=True, capture_output=True)
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-auth", str(server_auth), "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"]
        + ["-displayfd", str(write_fd)],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as pipe:
            display = ":" + pipe.readline().strip()
        add = ["add", display, "MIT-MAGIC-COOKIE-1", cookie]
        subprocess.run(["xauth", "-f", str(client_auth), *add], check=True, capture_output=True)
        probe = {"PATH": os.environ.get("PATH", ""), "XAUTHORITY": str(client_auth)}
        deadline = time.monotonic() + 10  # a hang guard, not a speed assertion
        while subprocess.run(["xdpyinfo", "-display", display], env=probe, capture_output=True).returncode != 0:
            assert time.monotonic() < deadline and proc.poll() is None, f"Xvfb on {display} never answered"
            time.sleep(0.05)
        yield display, client_auth
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_a_server_that_refuses_this_user_says_the_authority_is_the_problem(copy: Copy, tmp_path: Path) -> None:
    with xvfb_with_authority(tmp_path) as (display, client_auth):
        sockets = socket_dir(tmp_path, display)
        async with connected(copy, client_env(sockets)) as s:
            refused = await call(s, "capture", {})
        # Positive control: with the session's authority, the same server is found and used.
        async with connected(copy, client_env(sockets, XAUTHORITY=str(client_auth))) as s:
            shot = await call(s, "capture", {})
            status = await call(s, "session-status")
    assert not refused["ok"] and refused["error"]["code"] == "no-desktop", refused
    detail = refused["error"]["detail"]
    assert f"`{display}` refused" in detail and "authority" in detail and "XAUTHORITY" in detail, detail
    assert shot["ok"], shot
    assert status["result"]["desktop"] == {"display": display, "source": "socket"}, status


async def test_the_logind_sessions_own_authority_is_used(copy: Copy, tmp_path: Path) -> None:
    """XAUTHORITY not passed: the one in the environment of the session's leader (a process of
    this user, standing for the session's login process) lets mcec in."""
    with xvfb_with_authority(tmp_path) as (display, client_auth):
        leader = subprocess.Popen(["sleep", "600"], env={"XAUTHORITY": str(client_auth)})
        try:
            with private_logind(os.getuid(), f"5,x11,{display},yes,{leader.pid}") as bus:
                async with connected(copy, client_env(socket_dir(tmp_path), logind=bus)) as s:
                    shot = await call(s, "capture", {})
                    status = await call(s, "session-status")
        finally:
            leader.kill()
            leader.wait(timeout=10)
    assert shot["ok"], shot
    assert status["result"]["desktop"] == {"display": display, "source": "logind"}, status
