"""The guard of a display (issue 25): several `mcec mcp` processes on one display show one
banner and at most one prompt, one physical chord stops every one, one physical Re-arm in the
one prompt re-arms every one, and nothing else does: an injected click, a forged message on the
guard socket, or a program posing as the guard. The guard killed while stopped: the others stay
stopped and one of them shows the prompt.

Real X (Xvfb + Xephyr: input on the outer server is the operator's hand), real processes, the
official MCP Python SDK."""

from __future__ import annotations

import fcntl
import json
import os
import pwd
import signal
import socket
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import IO, Iterator

import anyio
import pytest

from mcec_e2e import (
    REPO,
    Copy,
    RawStdio,
    audit_with,
    code_of,
    host_settings,
    manual_copy,
    sdk_http,
    sdk_stdio,
    start_host,
    wait_for_code,
)
from test_emergency_stop import CHORD, PROMPT_TITLE, rearm_button_of
from xdesk import Desk, wait_until

ARTIFACTS = REPO / "target" / "test-artifacts"
OVERLAY = "^mcec overlay$"
PROMPTS = f"^({PROMPT_TITLE}|mcec: an agent asks for more access)$"
#: A generous bound for things that happen on other threads and processes (not a speed claim).
PATIENCE = 15.0

pytestmark = pytest.mark.anyio


def guard_files(desk: Desk) -> tuple[Path, Path]:
    """The display's guard lock and socket, under the home from the user database, named by
    the display and its X server's socket."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    number = desk.inner.lstrip(":")
    server = os.stat(f"/tmp/.X11-unix/X{number}").st_ino
    base = home / ".local/state/mcec/guard" / f"display-{number}-{server}"
    return base.with_suffix(".lock"), base.with_suffix(".sock")


def agents(tmp_path: Path, n: int) -> list[Copy]:
    return [
        manual_copy(tmp_path / f"agent{i}", settings="AgentCommandsEnabled = true\n", commands=("displays", "click"))
        for i in range(n)
    ]


def joined(copies: list[Copy]) -> int:
    return sum(len(audit_with(c, "guard-member; joined")) - len(audit_with(c, "guard-member; left")) for c in copies)


def guards(copies: list[Copy]) -> list[Copy]:
    return [c for c in copies if audit_with(c, "guard; display")]


def one_of_each(desk: Desk) -> tuple[int, int]:
    return len(desk.visible_windows(OVERLAY)), len(desk.visible_windows(PROMPTS))


@contextmanager
def posing_as_guard(lock: Path, sock: Path, timeout: float) -> Iterator[tuple[IO[str], socket.socket]]:
    """This test process in the guard's place, as any program of the user could be: it holds
    the guard lock (its pid written in it) and listens on the guard socket."""
    lock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    sock.unlink(missing_ok=True)
    with open(lock, "a+") as held, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.truncate(0)
        held.write(f"{os.getpid()}\n")
        held.flush()
        server.bind(str(sock))
        server.listen()
        server.settimeout(timeout)
        yield held, server


async def connect_all(stack: AsyncExitStack, copies: list[Copy], env: dict[str, str]) -> list:
    """An SDK session to each copy, in order, with `env` added to each one's environment."""
    sessions = []
    for copy in copies:
        session, _ = await stack.enter_async_context(sdk_stdio(copy, env_extra=env))
        sessions.append(session)
    return sessions


async def all_answer(sessions: list, want: str | None) -> list[str | None]:
    return [await wait_for_code(s, want) for s in sessions]


async def test_three_agents_one_banner_one_prompt_one_stop_one_rearm(tmp_path: Path, desk: Desk) -> None:
    copies = agents(tmp_path, 3)
    async with AsyncExitStack() as stack:
        sessions = await connect_all(stack, copies, {"DISPLAY": desk.inner})
        assert wait_until(lambda: joined(copies) == 2, PATIENCE), [c.log() for c in copies]
        assert len(guards(copies)) == 1, "exactly one process leads the display"
        assert await all_answer(sessions, None) == [None] * 3
        # The guard names each member by its MCP client (`initialize`'s clientInfo).
        (guard,) = guards(copies)
        assert wait_until(lambda: len(audit_with(guard, "guard-member; named: mcp")) == 2, PATIENCE), guard.log()
        assert wait_until(lambda: one_of_each(desk) == (1, 0), PATIENCE), one_of_each(desk)
        desk.screenshot(ARTIFACTS / "guard-three-agents-acting.png")

        desk.physical("key", CHORD)
        assert await all_answer(sessions, "emergency-stopped") == ["emergency-stopped"] * 3
        assert wait_until(lambda: one_of_each(desk) == (1, 1), PATIENCE), one_of_each(desk)
        button = rearm_button_of(desk)
        shot = ARTIFACTS / "guard-three-agents-stopped.png"
        assert wait_until(lambda: desk.pixel(desk.screenshot(shot), *map(int, button)) != (0, 0, 0)), "prompt not drawn"
        await anyio.sleep(0.5)
        assert one_of_each(desk) == (1, 1), "a second banner or prompt appeared"
        desk.screenshot(shot)  # settled: every member has reported its stop

        # An injected click on the one Re-arm re-arms nobody.
        desk.injected("mousemove", *button, "click", "1")
        assert wait_until(lambda: bool(audit_with(guards(copies)[0], "rearm-refused")), PATIENCE)
        for s in sessions:
            assert await code_of(s, "displays") == "emergency-stopped"

        # One physical click re-arms all three, each on its own monitor's word.
        desk.physical("sleep", "1.3", "mousemove", *button, "click", "1")
        assert await all_answer(sessions, None) == [None] * 3
        assert wait_until(lambda: one_of_each(desk)[1] == 0, PATIENCE), "the prompt stayed"
        members = [c for c in copies if c not in guards(copies)]
        for copy in members:
            assert audit_with(copy, "re-armed by the operator in the guard's prompt"), copy.log()
        assert one_of_each(desk)[0] <= 1


async def test_guard_killed_while_stopped_leaves_the_others_stopped_and_one_takes_over(
    tmp_path: Path, desk: Desk, raw_servers: list[RawStdio]
) -> None:
    first, *others = agents(tmp_path, 3)
    guard = RawStdio(first, env_extra={"DISPLAY": desk.inner})
    raw_servers.append(guard)
    guard.initialize()
    assert wait_until(lambda: bool(guards([first])), PATIENCE), first.log()
    async with AsyncExitStack() as stack:
        sessions = await connect_all(stack, others, {"DISPLAY": desk.inner})
        assert wait_until(lambda: joined([first]) == 2, PATIENCE), first.log()
        desk.physical("key", CHORD)
        assert await all_answer(sessions, "emergency-stopped") == ["emergency-stopped"] * 2
        assert wait_until(lambda: one_of_each(desk) == (1, 1), PATIENCE), one_of_each(desk)

        os.kill(guard.proc.pid, signal.SIGKILL)
        guard.proc.wait(timeout=PATIENCE)
        for s in sessions:
            assert await code_of(s, "displays") == "emergency-stopped", "a member lost its guard and acted"
        assert wait_until(lambda: len(guards(others)) == 1, PATIENCE), [c.log() for c in others]
        assert wait_until(lambda: one_of_each(desk) == (1, 1), PATIENCE), one_of_each(desk)
        assert wait_until(lambda: joined(guards(others)) == 1, PATIENCE), "the survivor did not join the new guard"
        for s in sessions:
            assert await code_of(s, "displays") == "emergency-stopped"

        button = rearm_button_of(desk)
        desk.physical("sleep", "1.3", "mousemove", *button, "click", "1")
        assert await all_answer(sessions, None) == [None] * 2


def claim(press: int, release: int) -> bytes:
    message = {
        "type": "rearm",
        "press": {"time": press, "button": 1, "key": None, "down": True},
        "release": {"time": release, "button": 1, "key": None, "down": False},
        "shownMsBefore": 5000,
    }
    return (json.dumps(message) + "\n").encode()


async def test_a_forged_rearm_on_the_guard_socket_rearms_nobody(tmp_path: Path, desk: Desk) -> None:
    copies = agents(tmp_path, 2)
    _, sock = guard_files(desk)
    async with AsyncExitStack() as stack:
        sessions = await connect_all(stack, copies, {"DISPLAY": desk.inner})
        assert wait_until(lambda: joined(copies) == 1, PATIENCE)
        desk.physical("key", CHORD)
        assert await all_answer(sessions, "emergency-stopped") == ["emergency-stopped"] * 2
        # A program of the same user connects and sends what only a guard would send.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(sock))
            client.sendall(claim(1, 2))
            client.settimeout(PATIENCE)
            assert client.recv(100) == b"", "the guard kept a connection that sent a guard's message"
        assert wait_until(lambda: bool(audit_with(guards(copies)[0], "guard-refused")), PATIENCE)
        for s in sessions:
            assert await code_of(s, "displays") == "emergency-stopped"


async def test_a_program_posing_as_the_guard_rearms_nobody(tmp_path: Path, desk: Desk) -> None:
    """A same-user program takes the lock and the socket first: the mcec processes register
    with it (it hides their windows: a limit), but its re-arm claims are judged by each
    member's own monitor and refused, and so is a claim from a process that is not the lock's
    holder."""
    lock, sock = guard_files(desk)
    with posing_as_guard(lock, sock, PATIENCE) as (held, server):
        copies = agents(tmp_path, 2)
        async with AsyncExitStack() as stack:
            sessions = await connect_all(stack, copies, {"DISPLAY": desk.inner})
            members = [server.accept()[0] for _ in copies]
            hellos = [json.loads(m.makefile().readline()) for m in members]
            assert [h["type"] for h in hellos] == ["hello", "hello"], hellos
            desk.physical("key", CHORD)
            assert await all_answer(sessions, "emergency-stopped") == ["emergency-stopped"] * 2
            # Claims naming presses nobody made (no physical raw event at those times).
            for m in members:
                m.sendall(claim(1, 2))
            assert wait_until(lambda: all(audit_with(c, "rearm-refused", "not-physical") for c in copies), PATIENCE), [
                c.log() for c in copies
            ]
            # Claims from a process that no longer holds the lock, though the file still names it:
            # the kernel's lock table is believed, never the pid written in the file.
            fcntl.flock(held, fcntl.LOCK_UN)
            for m in members:
                m.sendall(claim(3, 4))
            assert wait_until(lambda: all(audit_with(c, "rearm-refused", "not-from-guard") for c in copies), PATIENCE)
            for s in sessions:
                assert await code_of(s, "displays") == "emergency-stopped"
            for m in members:
                m.close()
    sock.unlink(missing_ok=True)


async def test_two_agents_ask_at_once_one_prompt_asks_for_each_in_turn(tmp_path: Path, desk: Desk) -> None:
    from test_consent import ALLOW_OFFSET, DENY_OFFSET, Request, button, until
    from test_consent import agent as consent_agent

    lead, *askers = [
        manual_copy(tmp_path / f"ask{i}", settings="AgentCommandsEnabled = true\n", commands=("capture",))
        for i in range(3)
    ]
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(consent_agent(lead, desk.inner))
        assert wait_until(lambda: bool(guards([lead])), PATIENCE), lead.log()
        first, second = [await stack.enter_async_context(consent_agent(c, desk.inner)) for c in askers]
        assert wait_until(lambda: joined([lead]) == 2, PATIENCE), lead.log()
        one = Request(first, ["click"], "click Save in the editor")
        two = Request(second, ["type"], "type the file name")
        async with anyio.create_task_group() as tg:
            tg.start_soon(one.run)
            allow = await button(desk, ALLOW_OFFSET)
            tg.start_soon(two.run)
            assert await until(lambda: bool(audit_with(askers[1], "consent-asked")), PATIENCE), askers[1].log()
            await anyio.sleep(0.5)
            banners, prompts = one_of_each(desk)
            assert (banners <= 1, prompts) == (True, 1), "not one prompt (and at most one banner) for two requests"
            desk.screenshot(ARTIFACTS / "guard-consent-two-agents.png")
            desk.physical("mousemove", *allow, "click", "1")
            while one.answer is None:
                await anyio.sleep(0.05)
            # The second request comes up in the same one prompt.
            deny = await button(desk, DENY_OFFSET)
            assert one_of_each(desk)[1] == 1
            desk.physical("mousemove", *deny, "click", "1")
        assert one.answer is not None and one.answer["ok"] and one.answer["result"]["granted"] == ["click"], one.answer
        assert two.code() == "consent-denied", two.answer
    assert audit_with(askers[0], "consent-allowed", "in the guard's prompt"), askers[0].log()
    assert not audit_with(lead, "consent; granted"), "the guard granted itself what a member asked for"


async def test_the_host_window_takes_the_windows_over_and_one_rearm_still_rearms_all(
    tmp_path: Path, desk: Desk, port: int, token: str
) -> None:
    copies = agents(tmp_path, 2)
    host_copy = manual_copy(tmp_path / "host", settings=host_settings(port, token), commands=("displays",))
    host_copy.extra_env["DISPLAY"] = desk.inner
    async with AsyncExitStack() as stack:
        sessions = await connect_all(stack, copies, {"DISPLAY": desk.inner})
        assert wait_until(lambda: joined(copies) == 1, PATIENCE)
        (first_guard,) = guards(copies)
        host = start_host(host_copy, port, token)
        stack.callback(host.stop)
        hs, _ = await stack.enter_async_context(sdk_http(host.url, host.auth_headers()))
        assert wait_until(lambda: bool(guards([host_copy])), PATIENCE), host_copy.log()
        assert audit_with(first_guard, "guard-handover"), first_guard.log()
        assert wait_until(lambda: joined([host_copy]) == 2, PATIENCE), host_copy.log()
        everyone = [*sessions, hs]
        assert await all_answer(everyone, None) == [None] * 3

        desk.physical("key", CHORD)
        assert await all_answer(everyone, "emergency-stopped") == ["emergency-stopped"] * 3
        assert wait_until(lambda: one_of_each(desk) == (1, 1), PATIENCE), one_of_each(desk)
        button = rearm_button_of(desk)
        desk.screenshot(ARTIFACTS / "guard-host-stopped.png")
        desk.physical("sleep", "1.3", "mousemove", *button, "click", "1")
        assert await all_answer(everyone, None) == [None] * 3


async def test_two_session_copies_and_a_manual_copy_share_one_banner_one_stop_one_rearm(
    tmp_path: Path, desk: Desk
) -> None:
    """The issue's mix: two agents on `mcec mcp --session` (each relayed to a session copy of
    the installed mcec) and one on a manual copy. The session copies take the operator's chord;
    the manual copy follows their stop record."""
    from sessions_support import OPERATOR_HOTKEY, OPERATOR_SETTINGS
    from mcec_e2e import installed_copy

    op = installed_copy(tmp_path / "inst")
    op.write_settings(OPERATOR_SETTINGS)
    (manual,) = agents(tmp_path, 1)
    async with AsyncExitStack() as stack:
        sessions = []
        for _ in range(2):
            s, _init = await stack.enter_async_context(
                sdk_stdio(op, env_extra={"DISPLAY": desk.inner}, mcp_args=("--session",))
            )
            sessions.append(s)
        sessions += await connect_all(stack, [manual], {"DISPLAY": desk.inner})
        assert await all_answer(sessions, None) == [None] * 3
        assert wait_until(lambda: one_of_each(desk) == (1, 0), PATIENCE), one_of_each(desk)

        assert OPERATOR_HOTKEY == "Ctrl+Alt+Shift+F9"
        desk.physical("key", "ctrl+alt+shift+F9")
        assert await all_answer(sessions, "emergency-stopped") == ["emergency-stopped"] * 3
        assert wait_until(lambda: one_of_each(desk) == (1, 1), PATIENCE), one_of_each(desk)
        await anyio.sleep(0.5)
        assert one_of_each(desk) == (1, 1), "a second banner or prompt appeared"
        desk.screenshot(ARTIFACTS / "guard-sessions-and-manual-stopped.png")
        button = rearm_button_of(desk)
        desk.physical("sleep", "1.3", "mousemove", *button, "click", "1")
        assert await all_answer(sessions, None) == [None] * 3
        assert wait_until(lambda: one_of_each(desk)[1] == 0, PATIENCE), "the prompt stayed"
