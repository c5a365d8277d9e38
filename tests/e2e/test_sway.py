"""mcec on sway (issue 27): the Wayland backend and the stop as per-device sway bindings.

A real sway 1.7 on an Xvfb (`swaydesk.py`), with the real `mcec mcp` driven through the
official MCP Python SDK. The stop arms; text typed with the `type` tool reaches a Wayland
client (`foot` running `cat`); a click focuses the window under it; mcec's own `key` of the
stop chord, which comes from its virtual keyboard, stops nothing, while the same chord from
the Xvfb's keyboard (sway's physical keyboard) stops every tool; a binding removed with
`swaymsg` stops them as tampering. The re-arm chord re-arms only from the physical keyboard
and only while the re-arm prompt is shown, with a nonce never used twice.

Build first: `cargo build -p mcec`."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import anyio
import pytest

from mcec_e2e import Copy, audit_lines, audit_with, code_of, manual_copy, sdk_envelope, sdk_stdio, wait_for_code
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


class Bindings:
    """The commands of the bindings sway reports firing (`swaymsg -t subscribe`), in order."""

    def __init__(self, sway: SwayDesk) -> None:
        self._p = subprocess.Popen(
            ["swaymsg", "-r", "-s", sway.swaysock, "-m", "-t", "subscribe", '["binding"]'],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        self.fired: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._p.stdout is not None
        for line in self._p.stdout:
            if line.strip():
                self.fired.append(json.loads(line)["binding"]["command"].removeprefix("nop "))

    def rearms(self) -> list[str]:
        return [c for c in self.fired if c.startswith("mcec-re-arm-")]

    def close(self) -> None:
        self._p.kill()
        self._p.wait(timeout=10)


async def press_until(press: Callable[[], object], done: Callable[[], Any]) -> None:
    """Presses until `await done()`: a prompt's chord is bound a moment after the prompt shows,
    a press counts only once the prompt has been on screen a moment, and every press binds
    afresh."""
    deadline = time.monotonic() + GUARD_S
    while True:
        press()
        for _ in range(10):
            if await done():
                return
            await anyio.sleep(0.05)
        assert time.monotonic() < deadline, "the chord never did it"


async def test_the_rearm_chord_counts_only_from_the_physical_keyboard_while_the_prompt_is_shown(
    tmp_path: Path, sway: SwayDesk
) -> None:
    copy = copy_with(tmp_path)
    bindings = Bindings(sway)
    injected_r = ["wtype", "-M", "ctrl", "-M", "alt", "-M", "shift", "-k", "r", "-m", "shift", "-m", "alt", "-m", "ctrl"]

    async def stopped() -> bool:
        return await code_of(session, "displays") == "emergency-stopped"

    async def working() -> bool:
        return await code_of(session, "displays") is None

    async def refused() -> bool:
        return bool(audit_with(copy, "rearm-refused", "injected input"))

    try:
        async with sdk_stdio(copy, env_extra=sway.session_env()) as (session, _):
            await ok(session, "displays")
            # No prompt shown: the re-arm chord is bound nowhere; the stop chord after it is
            # the positive control (sway reports bindings in the order of the keys).
            sway.physical_key("ctrl+alt+shift+r")
            sway.physical_key("ctrl+alt+shift+s")
            assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
            until("the stop's binding reported", lambda: bindings.fired)
            assert all(c.startswith("mcec-stop-") for c in bindings.fired), bindings.fired
            until("the re-arm chord bound", lambda: "presses re-arm while its prompt is shown" in copy.log())
            # From the virtual keyboard: reported as injected, refused and audited.
            await press_until(lambda: sway.wayland_client(*injected_r).wait(timeout=30), refused)
            assert await stopped()
            # From the physical keyboard: re-armed, the tools work again.
            await press_until(lambda: sway.physical_key("ctrl+alt+shift+r"), working)
            # A second stop and its prompt: a fresh nonce.
            sway.physical_key("ctrl+alt+shift+s")
            assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
            await press_until(lambda: sway.physical_key("ctrl+alt+shift+r"), working)
            await ok(session, "displays")
    finally:
        bindings.close()
    rearms = bindings.rearms()
    # At least the injected press and one physical press per showing, each with its own nonce.
    assert len(rearms) >= 3, rearms
    assert len(set(rearms)) == len(rearms), f"a re-arm nonce was used twice: {rearms}"
    assert audit_with(copy, "re-armed by the operator", "counted"), audit_lines(copy.log())


async def test_the_allow_chord_grants_only_from_the_physical_keyboard(tmp_path: Path, sway: SwayDesk) -> None:
    copy = copy_with(tmp_path)
    injected_a = ["wtype", "-M", "ctrl", "-M", "alt", "-M", "shift", "-k", "a", "-m", "shift", "-m", "alt", "-m", "ctrl"]
    answer: dict = {}

    async def ask(session: Any) -> None:
        args = {"commands": ["scroll"], "reason": "to scroll the page"}
        answer.update(sdk_envelope(await session.call_tool("request-command-access", args)))

    async def refused() -> bool:
        return bool(audit_with(copy, "consent-refused", "synthetic"))

    async def answered() -> bool:
        return bool(answer)

    env = {**sway.session_env(), "MCEC_TEST_CONSENT_TIMEOUT_MS": "30000"}
    async with sdk_stdio(copy, env_extra=env) as (session, _):
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, session)
            deadline = time.monotonic() + GUARD_S
            while "presses allow while its prompt is shown" not in copy.log():
                assert time.monotonic() < deadline, "the allow chord was never bound"
                await anyio.sleep(0.05)
            await press_until(lambda: sway.wayland_client(*injected_a).wait(timeout=30), refused)
            assert not answer, answer
            await press_until(lambda: sway.physical_key("ctrl+alt+shift+a"), answered)
    assert answer["ok"] and answer["result"]["granted"] == ["scroll"], answer
    assert audit_with(copy, "consent-allowed", "counted"), audit_lines(copy.log())
