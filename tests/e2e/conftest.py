"""Fixtures for the end-to-end tests: a manual copy of the binary per test, an Xvfb, a free port, a
running host that is always stopped at teardown, and raw stdio servers that are always
killed. The machinery itself lives in mcec_e2e.py (the benchmark uses it too)."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Callable, Iterator

import pytest
from mcec_e2e import BIN, Copy, Host, RawStdio, free_port, host_settings, manual_copy, start_host
from sessions_support import OPERATOR_SETTINGS
from xdesk import Desk, Screen


def pytest_configure(config: pytest.Config) -> None:
    if not BIN.is_file():
        raise pytest.UsageError(f"mcec binary not found at {BIN}; run `cargo build -p mcec` or set MCEC_BIN")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def screen() -> Iterator[Screen]:
    """A fresh Xvfb for one test (a module that shares one across its tests defines its own)."""
    with Screen() as s:
        yield s


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    """A manual copy with no settings files ("ask" mode: the surface on, nothing enabled)."""
    return manual_copy(tmp_path / "c")


@pytest.fixture
def agent_copy(tmp_path: Path) -> Copy:
    """A manual copy with AgentCommandsEnabled = true and no mcec.commands."""
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n")


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture
def token() -> str:
    return "e2e" + secrets.token_hex(16)


@pytest.fixture
def hosts() -> Iterator[list[Host]]:
    """Hosts started by a test; all stopped at teardown."""
    started: list[Host] = []
    yield started
    for host in started:
        host.stop()


@pytest.fixture
def host_factory(hosts: list[Host]) -> Callable[..., Host]:
    def make(copy: Copy, port: int, token: str | None = None) -> Host:
        host = start_host(copy, port, token)
        hosts.append(host)
        return host

    return make


@pytest.fixture
def host(tmp_path: Path, port: int, token: str, host_factory: Callable[..., Host]) -> Host:
    """A host with AgentCommandsEnabled, McpServerEnabled and a bearer token."""
    copy = manual_copy(tmp_path / "h", settings=host_settings(port, token))
    return host_factory(copy, port, token)


@pytest.fixture
def open_host(tmp_path: Path, port: int, host_factory: Callable[..., Host]) -> Host:
    """A host with AgentCommandsEnabled and McpServerEnabled, without a token."""
    copy = manual_copy(tmp_path / "h", settings=host_settings(port))
    return host_factory(copy, port)


@pytest.fixture
def raw_stdio() -> Iterator[Callable[..., RawStdio]]:
    """Start raw `mcec mcp` processes; all killed at teardown."""
    started: list[RawStdio] = []

    def start(copy: Copy, env_extra: dict[str, str] | None = None) -> RawStdio:
        server = RawStdio(copy, env_extra)
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()


# Shared by the desktop, stop and session tests.


@pytest.fixture
def desk() -> Iterator[Desk]:
    """A fresh outer Xvfb + inner Xephyr desk (see xdesk.py), stopped at teardown."""
    with Desk() as d:
        yield d


@pytest.fixture
def operator(tmp_path: Path) -> Copy:
    """A manual copy whose operator opted in to provisioning (agent surface itself off)."""
    return manual_copy(tmp_path / "op", settings=OPERATOR_SETTINGS)


@pytest.fixture
def raw_servers() -> Iterator[list[RawStdio]]:
    """Raw stdio servers started by a test; all killed at teardown."""
    started: list[RawStdio] = []
    yield started
    for server in started:
        server.kill()
