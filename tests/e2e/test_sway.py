"""mcec on sway (issue 27): the Wayland backend and the stop as per-device sway bindings.

A real sway 1.7 on an Xvfb (`swaydesk.py`), with the real `mcec mcp` driven through the
official MCP Python SDK. The stop arms; text typed with the `type` tool reaches a Wayland
client (`foot` running `cat`); a click focuses the window under it; mcec's own `key` of the
stop chord, which comes from its virtual keyboard, stops nothing, while the same chord from
the Xvfb's keyboard (sway's physical keyboard) stops every tool; a binding removed with
`swaymsg` stops them as tampering.

Build first: `cargo build -p mcec`."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from mcec_e2e import Copy, audit_lines, manual_copy, sdk_envelope, sdk_stdio, wait_for_code
from swaydesk import SwayDesk, views

COMMANDS = ("displays", "windows", "capture", "click", "type", "key")
#: Hang guard for something that must happen, not a measured time.
GUARD_S = 20.0

pytestmark = pytest.mark.anyio


@pytest.fixture
def sway() -> Iterator[SwayDesk]:
    for tool in ("sway", "swaymsg", "foot", "xdotool", "xhost"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing; run scripts/test (it installs it)")
    with SwayDesk() as desk:
        yield desk


@pytest.fixture
def clients(sway: SwayDesk) -> Iterator[Callable[..., subprocess.Popen]]:
    started: list[subprocess.Popen] = []

    def start(*argv: str) -> subprocess.Popen:
        p = sway.wayland_client(*argv)
        started.append(p)
        return p

    yield start
    for p in started:
        p.kill()
        p.wait(timeout=10)


def copy_with(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)


async def ok(session: Any, tool: str, args: dict | None = None) -> Any:
    env = sdk_envelope(await session.call_tool(tool, args or {}))
    assert env["ok"], f"{tool} {args}: {env}"
    return env["result"]


def until(what: str, f: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + GUARD_S
    while True:
        got = f()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def foot_window(sway: SwayDesk, clients, script: str) -> dict:
    """Starts foot running `sh -c script` and returns its view once sway lists it."""
    before = {v["id"] for v in views(sway.tree())}
    clients("foot", "sh", "-c", script)
    return until("foot's window", lambda: next((v for v in views(sway.tree()) if v["id"] not in before), None))


def focused(sway: SwayDesk) -> int | None:
    return next((v["id"] for v in views(sway.tree()) if v.get("focused")), None)


async def test_the_stop_arms_and_text_and_clicks_reach_wayland_windows(tmp_path: Path, sway: SwayDesk, clients) -> None:
    copy = copy_with(tmp_path)
    typed = sway.runtime_dir / "typed"
    left = foot_window(sway, clients, "sleep 600")
    right = foot_window(sway, clients, f"stty -echo; cat > {typed}")
    async with sdk_stdio(copy, env_extra=sway.session_env()) as (session, _):
        status = await ok(session, "session-status")
        assert status["emergencyStop"]["armed"] is True, status
        displays = await ok(session, "displays")
        assert [d["name"] for d in displays["displays"]] == ["X11-1"], displays
        listed = await ok(session, "windows", {"className": "foot"})
        assert sorted(w["handle"] if "handle" in w else w["id"] for w in listed["windows"]) == sorted(
            [left["id"], right["id"]]
        ), listed
        until("the cat window focused", lambda: focused(sway) == right["id"])
        await ok(session, "type", {"text": "Grüße ✓ from mcec\n"})
        until("the typed line", lambda: typed.exists() and "Grüße ✓ from mcec" in typed.read_text())
        # Where the left window is now that the right one shares the workspace.
        r = next(v for v in views(sway.tree()) if v["id"] == left["id"])["rect"]
        await ok(session, "click", {"at": {"x": r["x"] + r["width"] // 2, "y": r["y"] + r["height"] // 2}})
        until("the clicked window focused", lambda: focused(sway) == left["id"])
        env = sdk_envelope(await session.call_tool("capture", {}))
        assert env["ok"], env
    assert "emergency stop: armed" in copy.log()


async def test_mcecs_own_chord_stops_nothing_and_the_physical_one_stops(tmp_path: Path, sway: SwayDesk) -> None:
    copy = copy_with(tmp_path)
    async with sdk_stdio(copy, env_extra=sway.session_env()) as (session, _):
        await ok(session, "key", {"keys": "ctrl+alt+shift+s"})
        await ok(session, "displays")
        status = await ok(session, "session-status")
        assert status["emergencyStopped"] is False, status
        sway.physical_key("ctrl+alt+shift+s")
        assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
    audits = audit_lines(copy.log())
    assert any("Ctrl+Alt+Shift+S" in line for line in audits), audits


async def test_a_removed_binding_stops_as_tampering(tmp_path: Path, sway: SwayDesk) -> None:
    copy = copy_with(tmp_path)
    async with sdk_stdio(copy, env_extra=sway.session_env()) as (session, _):
        await ok(session, "displays")
        out = sway.swaymsg(
            "unbindsym --locked --inhibited --no-warn --input-device=0:0:X11_keyboard Ctrl+Mod1+Shift+s"
        )
        assert out.returncode == 0, out.stdout
        assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
    assert "tampered" in copy.log()
