"""The console's End (issue 25): each agent row of the host window has an End, which opens a
small prompt whose End counts only for the operator's own click, judged on the event that
pressed it like Re-arm (by the host, then by the ended member's own monitor).

Two agents on `mcec mcp --session` (each relayed to a session copy) under the host: an injected
click on End ends nothing (audited, the agent keeps working); a physical click on End ends that
one copy only: its session directory is gone, its client sees its connection end, and the other
agent still answers. A manual copy on stdio is ended too (its connection closes, its files stay).
A program posing as the guard cannot end anyone with a forged End message.

Real X (Xvfb + Xephyr: input on the outer server is the operator's hand), real processes, the
official MCP Python SDK; the screenshots are kept."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest

from mcec_e2e import (
    audit_with,
    code_of,
    host_settings,
    installed_copy,
    manual_copy,
    sdk_http,
    sdk_stderr,
    sdk_stdio,
    start_host,
)
from sessions_support import OPERATOR_SETTINGS, session_dirs
from test_agent_tab import HOST_TITLE
from test_guard import ARTIFACTS, OVERLAY, PATIENCE, agents, connect_all, guard_files, guards, joined, posing_as_guard
from xdesk import Desk, wait_until

pytestmark = pytest.mark.anyio

NAMES = ("alphabot", "bravobot")
END_TITLE = "mcec: end an agent"
HOST_SIZE = (560, 480)
END_SIZE = (520, 200)


def words(desk: Desk, shot: Path, origin: tuple[int, int], size: tuple[int, int]) -> list[tuple[str, int, int]]:
    """The words Tesseract reads in the window of `size` at `origin`, each with its centre in
    screen coordinates."""
    desk.screenshot(shot)
    crop = shot.with_name(shot.stem + "-window.png")
    geometry = f"{size[0]}x{size[1]}+{origin[0]}+{origin[1]}"
    subprocess.run(["convert", str(shot), "-crop", geometry, "-resize", "200%", str(crop)], check=True)
    done = subprocess.run(["tesseract", str(crop), "stdout", "tsv"], capture_output=True, text=True, check=True)
    found = []
    for line in done.stdout.splitlines()[1:]:
        cols = line.split("\t")
        if len(cols) == 12 and cols[11].strip():
            left, top, width, height = map(int, cols[6:10])
            found.append((cols[11].strip(), origin[0] + (left + width // 2) // 2, origin[1] + (top + height // 2) // 2))
    return found


def row_end(desk: Desk, name: str) -> list[str] | None:
    """Where the End of the console row naming `name` is (at the row's right end, on the line
    of the client's name), as xdotool arguments; None until the row is drawn."""
    origin = desk.window_origin(HOST_TITLE)
    assert origin is not None
    # The row's own word: the banner and the Activity lines say `name:` instead.
    found = [w for w in words(desk, ARTIFACTS / "console-end-rows.png", origin, HOST_SIZE) if w[0].lower() == name]
    if not found:
        return None
    _, _, y = found[0]
    return [str(origin[0] + HOST_SIZE[0] - 26), str(y)]


def prompt_end(desk: Desk) -> list[str]:
    """Where the End prompt's End button is, once the prompt is open and drawn: the lowest
    thing in the prompt's left column (its question, rule and any refusal are above it; the
    refusal's words may move it down), found from the pixels (Tesseract misreads a button
    with the focus outline)."""
    assert wait_until(lambda: desk.visible_window(END_TITLE), PATIENCE), "the End prompt did not open"
    origin = desk.window_origin(END_TITLE)
    assert origin is not None
    shot = ARTIFACTS / "console-end-prompt.png"

    def button() -> tuple[int, int] | None:
        desk.screenshot(shot)
        column = subprocess.run(
            ["convert", str(shot), "-crop", f"1x{END_SIZE[1]}+{origin[0] + 12}+{origin[1]}", "-depth", "8", "txt:-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()[1:]
        rgb = [tuple(int(float(v)) for v in line.split("(")[1].split(")")[0].split(",")[:3]) for line in column]
        background = rgb[-1]
        marked = [y for y, p in enumerate(rgb) if sum(abs(a - b) for a, b in zip(p, background)) > 30]
        if not marked or background == (0, 0, 0):
            return None
        bottom = top = marked[-1]
        while top - 1 in marked:
            top -= 1
        if bottom - top < 15:
            return None
        return origin[0] + 24, origin[1] + (top + bottom) // 2

    assert wait_until(lambda: button() is not None, PATIENCE), f"no End button found in {shot}"
    x, y = button()
    return [str(x), str(y)]


def physical_end(desk: Desk, name: str) -> None:
    """The operator ends the agent of the row naming `name`, with their own mouse: a click on an
    empty part of the host window first (as a hand does after another window had the keyboard
    focus), then the row's End, then the End prompt's End."""
    assert wait_until(lambda: row_end(desk, name) is not None, PATIENCE), f"no console row for {name}"
    origin = desk.window_origin(HOST_TITLE)
    assert origin is not None
    button = row_end(desk, name)
    assert button is not None
    desk.physical("mousemove", str(origin[0] + 500), str(origin[1] + 400), "click", "1", "sleep", "0.5")
    desk.physical("mousemove", *button, "sleep", "0.2", "click", "1")
    end = prompt_end(desk)
    desk.physical("sleep", "1.3", "mousemove", *end, "click", "1")


async def test_end_on_one_session_copy_ends_only_that_one_and_only_for_a_physical_click(
    tmp_path: Path, desk: Desk, port: int, token: str
) -> None:
    op = installed_copy(tmp_path / "inst")
    op.write_settings(OPERATOR_SETTINGS)
    host_copy = manual_copy(tmp_path / "host", settings=host_settings(port, token), commands=("displays",))
    host_copy.extra_env["DISPLAY"] = desk.inner
    async with AsyncExitStack() as stack:
        host = start_host(host_copy, port, token)
        stack.callback(host.stop)
        await stack.enter_async_context(sdk_http(host.url, host.auth_headers()))
        assert wait_until(lambda: bool(guards([host_copy])), PATIENCE), host_copy.log()
        sessions, dirs = [], []
        for name in NAMES:
            before = set(session_dirs(op))
            session, _ = await stack.enter_async_context(
                sdk_stdio(op, env_extra={"DISPLAY": desk.inner}, mcp_args=("--session",), client_name=name)
            )
            (new,) = set(session_dirs(op)) - before
            sessions.append(session)
            dirs.append(new)
        alpha, bravo = sessions
        alpha_dir, bravo_dir = dirs
        assert wait_until(lambda: joined([host_copy]) == 2, PATIENCE), host_copy.log()
        for session in sessions:
            assert await code_of(session, "displays") is None
        assert wait_until(lambda: desk.visible_window(HOST_TITLE), PATIENCE), "the host window did not open"
        assert wait_until(lambda: all(row_end(desk, n) for n in NAMES), PATIENCE), "the rows were never read"
        desk.screenshot(ARTIFACTS / "console-end-buttons.png")
        button = row_end(desk, "alphabot")
        assert button is not None

        # An injected click opens the prompt (the host window's toolkit cannot tell), and an
        # injected click on its End ends nothing. (One click on an empty part of the window
        # first, as a hand does after another window had the keyboard focus.)
        origin = desk.window_origin(HOST_TITLE)
        assert origin is not None
        desk.injected("mousemove", str(origin[0] + 500), str(origin[1] + 400), "click", "1", "sleep", "0.5")
        desk.injected("mousemove", *button, "sleep", "0.2", "click", "1")
        end = prompt_end(desk)
        desk.physical("sleep", "1.3")
        desk.injected("mousemove", *end, "click", "1")
        assert wait_until(lambda: bool(audit_with(host_copy, "end-refused")), PATIENCE), host_copy.log()
        refused = audit_with(host_copy, "end-refused")
        assert "synthetic" in refused[0], refused
        desk.screenshot(ARTIFACTS / "console-end-refused.png")
        assert not audit_with(host_copy, "guard-end-sent"), "an injected End reached a member"
        assert alpha_dir.is_dir() and bravo_dir.is_dir()
        for session in sessions:
            assert await code_of(session, "displays") is None, "an agent stopped working after a refused End"

        # The operator's own click on End ends alphabot's session copy, and only it (the
        # refusal's words in the prompt may have moved the button).
        end = prompt_end(desk)
        desk.physical("sleep", "1.3", "mousemove", *end, "click", "1")
        assert wait_until(lambda: bool(audit_with(host_copy, "guard-end-sent; to alphabot")), PATIENCE), (
            host_copy.log()
        )
        assert wait_until(lambda: not alpha_dir.exists(), PATIENCE), f"{alpha_dir} is still there"
        # The session copy judged the claim on its own monitor's word (its log went with its
        # directory; its stderr is the relay's); only that one ended.
        marker = "AGENT-AUDIT: agent-ended; by the operator in the guard's console"
        ended = [line for line in sdk_stderr(op).splitlines() if marker in line]
        assert len(ended) == 1 and "physical device" in ended[0], ended
        with anyio.fail_after(PATIENCE), pytest.raises(Exception):
            await code_of(alpha, "displays")
        assert await code_of(bravo, "displays") is None, "the other agent stopped working"
        assert bravo_dir.is_dir()
        assert wait_until(lambda: joined([host_copy]) == 1, PATIENCE), host_copy.log()
        assert wait_until(lambda: not desk.visible_window(END_TITLE), PATIENCE), "the End prompt stayed"
        desk.screenshot(ARTIFACTS / "console-end-after.png")


async def test_end_on_a_manual_copy_closes_its_connection_and_deletes_nothing(
    tmp_path: Path, desk: Desk, port: int, token: str
) -> None:
    host_copy = manual_copy(tmp_path / "host", settings=host_settings(port, token), commands=("displays",))
    host_copy.extra_env["DISPLAY"] = desk.inner
    (manual,) = agents(tmp_path, 1)
    async with AsyncExitStack() as stack:
        host = start_host(host_copy, port, token)
        stack.callback(host.stop)
        assert wait_until(lambda: bool(guards([host_copy])), PATIENCE), host_copy.log()
        session, _ = await stack.enter_async_context(
            sdk_stdio(manual, env_extra={"DISPLAY": desk.inner}, client_name="charliebot")
        )
        assert wait_until(lambda: joined([host_copy]) == 1, PATIENCE), host_copy.log()
        assert await code_of(session, "displays") is None
        assert wait_until(lambda: desk.visible_window(HOST_TITLE), PATIENCE), "the host window did not open"
        physical_end(desk, "charliebot")
        assert wait_until(lambda: bool(audit_with(manual, "agent-ended; by the operator")), PATIENCE), manual.log()
        with anyio.fail_after(PATIENCE), pytest.raises(Exception):
            await code_of(session, "displays")
        assert wait_until(lambda: joined([host_copy]) == 0, PATIENCE), host_copy.log()
        assert manual.exe.is_file() and manual.settings_path.is_file(), "a manual copy's files were touched"


async def test_end_on_the_hosts_own_http_agent_closes_its_front_door_and_the_host_stays(
    tmp_path: Path, desk: Desk, port: int, token: str
) -> None:
    """The host's own agent (its HTTP front door) has a row named by its `initialize`; End on it
    closes the front door, and the host keeps running with its window."""
    host_copy = manual_copy(tmp_path / "host", settings=host_settings(port, token), commands=("displays",))
    host_copy.extra_env["DISPLAY"] = desk.inner
    host = start_host(host_copy, port, token)
    ended = False
    try:
        assert wait_until(lambda: bool(guards([host_copy])), PATIENCE), host_copy.log()
        # The client's connection dies with the front door, which the SDK reports when the
        # session closes: expected only once the End went through.
        try:
            async with sdk_http(host.url, host.auth_headers(), client_name="deltabot") as (session, _):
                assert await code_of(session, "displays") is None
                assert wait_until(lambda: desk.visible_window(HOST_TITLE), PATIENCE), "the host window did not open"
                physical_end(desk, "deltabot")
                assert wait_until(lambda: bool(audit_with(host_copy, "agent-ended; by the operator")), PATIENCE), (
                    host_copy.log()
                )
                ended = True
                with anyio.fail_after(PATIENCE):
                    await code_of(session, "displays")
                raise AssertionError("a call went through after End closed the front door")
        except Exception as failure:
            if not ended or isinstance(failure, AssertionError):
                raise
        assert host.proc.poll() is None, "the host exited: End on its agent should only close the front door"
        assert desk.visible_window(HOST_TITLE), "the host window went away"
        # No agent is left: its row goes, and no banner says one is acting.
        assert wait_until(lambda: row_end(desk, "deltabot") is None, PATIENCE), "the ended agent's row stayed"
        assert wait_until(lambda: not desk.visible_window(OVERLAY), PATIENCE), "the banner still says an agent acts"
        desk.screenshot(ARTIFACTS / "console-end-host.png")
    finally:
        host.stop()


def forged_end(press: int, release: int) -> bytes:
    message = {
        "type": "end",
        "press": {"time": press, "button": 1, "key": None, "down": True},
        "release": {"time": release, "button": 1, "key": None, "down": False},
        "shownMsBefore": 5000,
    }
    return (json.dumps(message) + "\n").encode()


async def test_a_forged_end_ends_nobody(tmp_path: Path, desk: Desk) -> None:
    """A same-user program holds the guard lock and socket: its End claims name presses no
    physical device made, and then come from a process that no longer holds the lock; each
    member judges them with its own monitor and keeps serving."""
    lock, sock = guard_files(desk)
    with posing_as_guard(lock, sock, PATIENCE) as (held, server):
        copies = agents(tmp_path, 2)
        async with AsyncExitStack() as stack:
            sessions = await connect_all(stack, copies, {"DISPLAY": desk.inner})
            members = [server.accept()[0] for _ in copies]
            for m in members:
                m.sendall(forged_end(1, 2))
            assert wait_until(lambda: all(audit_with(c, "end-refused", "not-physical") for c in copies), PATIENCE), [
                c.log() for c in copies
            ]
            fcntl.flock(held, fcntl.LOCK_UN)
            for m in members:
                m.sendall(forged_end(3, 4))
            assert wait_until(lambda: all(audit_with(c, "end-refused", "not-from-guard") for c in copies), PATIENCE)
            for s in sessions:
                assert await code_of(s, "displays") is None, "a forged End ended an agent"
            assert not any(audit_with(c, "agent-ended") for c in copies)
            for m in members:
                m.close()
    sock.unlink(missing_ok=True)
