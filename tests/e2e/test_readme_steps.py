"""The README's quick start, run as written: both routes from a fresh clone to an agent session.

Each fenced block after a `<!-- readme-step: NAME -->` comment in README.md is taken from the
README at test time, so a step edited into something that does not work fails here. Shell
blocks run in bash (`set -euo pipefail`) in a scratch home directory (HOME and nothing else of
the tester's: no XDG_* variables, PATH with `~/.cargo/bin` first), on a display of their own
(Xvfb), from a scratch directory standing for the clone. Two lines are replaced, and only
these: the build steps (`cargo build --release`, `cargo install --path crates/mcec`) put the
already-built binary (`MCEC_BIN`) where they would have put theirs, since building again here
would only test cargo. The opt-in is the README's own line (a file edit before mcec starts).
Each route ends with the official MCP Python SDK starting the server from the README's client
line (with the scratch home for `/home/you`, as the README tells the reader to do) and calling
a tool; the line must also be what the README's `mcec config` step printed. The server gets
what such an entry gives it, HOME and PATH, and no DISPLAY: mcec finds the scratch display
itself, through a socket directory holding only that display's socket (`MCEC_X11_SOCKET_DIR`,
for tests; other X servers run on this machine) and no logind (`MCEC_LOGIND_BUS`)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcec_e2e import BIN, NO_LOGIND, REPO, unwrap_groups
from xdesk import Screen, wait_until

pytestmark = pytest.mark.anyio

README = REPO / "README.md"
STEP = re.compile(r"<!-- readme-step: ([a-z-]+) -->\n```(\w+)\n(.*?)```", re.S)
# The build steps, and what stands in for each (the binary is already built).
BUILDS = {
    "cargo build --release": 'mkdir -p target/release && cp "$MCEC_BIN" target/release/mcec',
    "cargo install --path crates/mcec": 'install -D -m 0755 "$MCEC_BIN" ~/.cargo/bin/mcec',
}


def steps() -> dict[str, tuple[str, str]]:
    """Every marked block of the README: name -> (language, text)."""
    found = {name: (lang, text) for name, lang, text in STEP.findall(README.read_text())}
    return found


def without_builds(script: str) -> str:
    """The script with its build line (if any) replaced; a build line must be exactly as known."""
    lines = []
    for line in script.splitlines():
        command = line.split("#", 1)[0].strip()
        if command.startswith("cargo "):
            assert command in BUILDS, f"a README build step this test does not know: {line!r}"
            line = BUILDS[command]
        lines.append(line)
    return "\n".join(lines) + "\n"


class Scratch:
    """A home directory, a clone directory and a display for the README's commands."""

    def __init__(self, tmp: Path, screen: Screen) -> None:
        self.home = tmp / "home" / "you"
        self.clone = tmp / "clone"
        self.home.mkdir(parents=True)
        self.clone.mkdir()
        self.sockets = tmp / "x11-unix"
        self.sockets.mkdir()
        name = "X" + screen.display.lstrip(":")
        (self.sockets / name).symlink_to(Path("/tmp/.X11-unix") / name)
        self.env = {
            "HOME": str(self.home),
            "PATH": f"{self.home}/.cargo/bin:/usr/local/bin:/usr/bin:/bin",
            "MCEC_BIN": str(BIN),
        }

    def run(self, name: str) -> str:
        lang, text = steps()[name]
        assert lang == "sh", f"readme-step {name} is {lang}, not a shell block"
        done = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + without_builds(text)],
            cwd=self.clone,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"readme-step {name} failed ({done.returncode}):\n{done.stderr}"
        return done.stdout

    def client_line(self, name: str) -> str:
        lang, text = steps()[name]
        assert lang == "sh", f"readme-step {name} is {lang}, not a shell line"
        return text.strip().replace("/home/you", str(self.home))


def server_argv(line: str) -> list[str]:
    """The command Claude Code starts for `claude mcp add NAME -- CMD ARGS...`."""
    words = shlex.split(line)
    assert words[:3] == ["claude", "mcp", "add"] and "--" in words, line
    return words[words.index("--") + 1 :]


async def call_displays(scratch: Scratch, argv: list[str]) -> dict:
    """Start the server as the client entry says, and call `displays`."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    client_env = {k: scratch.env[k] for k in ("HOME", "PATH")}
    client_env |= {"MCEC_X11_SOCKET_DIR": str(scratch.sockets), "MCEC_LOGIND_BUS": NO_LOGIND}
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=client_env, cwd=str(scratch.home))
    with open(scratch.home.parent / "server-stderr.txt", "w") as errlog, unwrap_groups():
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("displays", {})
            return json.loads(result.content[-1].text)


@pytest.fixture
def scratch(tmp_path: Path) -> Any:
    with Screen() as screen:
        yield Scratch(tmp_path, screen)


def test_the_readme_marks_every_quick_start_block() -> None:
    found = steps()
    assert set(found) == {"manual-setup", "manual-client", "installed-setup", "installed-client"}, set(found)


async def test_manual_copy_route(scratch: Scratch) -> None:
    printed = scratch.run("manual-setup").strip()
    line = scratch.client_line("manual-client")
    assert printed == line, f"the README's line is not what its `mcec config` step prints:\n{printed}"
    envelope = await call_displays(scratch, server_argv(line))
    assert envelope["ok"], envelope
    assert envelope["result"]["displays"], envelope


async def test_installed_copy_with_a_session_per_connection(scratch: Scratch) -> None:
    printed = scratch.run("installed-setup").strip()
    line = scratch.client_line("installed-client")
    assert printed == line, f"the README's line is not what its `mcec config` step prints:\n{printed}"
    sessions = scratch.home / ".local/state/mcec/sessions"
    envelope = await call_displays(scratch, server_argv(line))
    assert envelope["ok"], envelope  # an installed copy alone serves no desktop tool: a session copy answered
    # The connection's copy is deleted once the client has gone.
    assert wait_until(lambda: not any(sessions.glob("[0-9a-f]" * 12)), timeout=30), list(sessions.iterdir())
    assert os.path.isdir(sessions), "no session copy was ever made"
