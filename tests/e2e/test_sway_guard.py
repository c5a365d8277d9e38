"""Several mcec on one sway (issue 27): one physical chord re-arms or ends for every process
on the display, and the virtual keyboard's chord for none.

Only the display's guard shows the prompts, so only it binds their chords in sway; sway sends
every fired binding to every IPC subscriber, so each member's own monitor sees the guard's
press too. The guard tells its members commitments to its bindings (which one is on the
physical keyboards, which on the virtual one); a member records the presses of those bindings
in its own ledger and judges the guard's claim against that record. Before, a member judged
the claim against a ledger that had never seen the press and stayed stopped (or kept its
agent). A real sway 1.7 on an Xvfb (`swaydesk.py`): xdotool on that Xvfb is the operator's
keyboard, `wtype` the virtual one; mcec's windows are on a second Xvfb.

Tamper checks hold with members: the guard's re-arm binding removed while its prompt is shown
is tampering, so the next physical press is refused for the quiet period and nobody re-arms;
afterwards the physical chord re-arms all. The guard's word alone moves nobody: a program
posing as the guard (it holds the lock and the socket) whose claim names a binding no member
saw pressed, or one its members saw pressed from the virtual keyboard, re-arms none of them.

Build first: `cargo build -p mcec`."""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Iterator

import anyio
import pytest

from mcec_e2e import (
    audit_lines,
    audit_with,
    code_of,
    host_settings,
    manual_copy,
    sdk_stdio,
    start_host,
    wait_for_code,
)
from swaydesk import SwayDesk
from test_console_end import END_TITLE, HOST_TITLE, row_end
from test_guard import agents, connect_all, guard_files, guards, joined, posing_as_guard
from test_sway import GUARD_S, press_until, until
from test_sway_decisions import OperatorWindows, wtype_chord

pytestmark = pytest.mark.anyio


@pytest.fixture
def sway() -> Iterator[SwayDesk]:
    with SwayDesk() as desk:
        yield desk


async def test_one_physical_chord_re_arms_every_process_on_sway_and_the_virtual_one_none(
    tmp_path: Path, sway: SwayDesk
) -> None:
    copies = agents(tmp_path, 3)
    async with AsyncExitStack() as stack:
        sessions = await connect_all(stack, copies, sway.session_env())
        until("two members joined the guard", lambda: joined(copies) == 2)
        (guard,) = guards(copies)
        members = [c for c in copies if c is not guard]
        assert [await code_of(s, "displays") for s in sessions] == [None] * 3

        # One physical stop chord stops all three (each its own binding, its own latch).
        sway.physical_key("ctrl+alt+shift+s")
        assert [await wait_for_code(s, "emergency-stopped") for s in sessions] == ["emergency-stopped"] * 3
        until("the re-arm chord bound", lambda: "presses re-arm while its prompt is shown" in guard.log())

        # The virtual keyboard's re-arm chord: the guard refuses it (injected) and claims
        # nothing, so nobody re-arms.
        async def refused() -> bool:
            return bool(audit_with(guard, "rearm-refused", "injected input"))

        await press_until(lambda: sway.wayland_client(*wtype_chord("r")).wait(timeout=30), refused)
        assert [await code_of(s, "displays") for s in sessions] == ["emergency-stopped"] * 3
        assert not any(audit_with(c, "re-armed by the operator") for c in copies)

        # The physical one re-arms all three: the guard on its own monitor's word, each
        # member on its own record of the press of the guard's binding.
        async def all_work() -> bool:
            return [await code_of(s, "displays") for s in sessions] == [None] * 3

        await press_until(lambda: sway.physical_key("ctrl+alt+shift+r"), all_work)
        for member in members:
            assert audit_with(member, "re-armed by the operator in the guard's prompt"), member.log()


async def test_a_prompt_binding_removed_under_a_guard_refuses_the_next_press_for_everyone(
    tmp_path: Path, sway: SwayDesk
) -> None:
    copies = agents(tmp_path, 2)
    async with AsyncExitStack() as stack:
        sessions = await connect_all(stack, copies, sway.session_env())
        until("the member joined the guard", lambda: joined(copies) == 1)
        (guard,) = guards(copies)
        sway.physical_key("ctrl+alt+shift+s")
        assert [await wait_for_code(s, "emergency-stopped") for s in sessions] == ["emergency-stopped"] * 2
        until("the re-arm chord bound", lambda: "presses re-arm while its prompt is shown" in guard.log())

        # Another program of the user removes the guard's re-arm binding: tampering, seen at the
        # guard's next check (which puts the binding back).
        out = sway.swaymsg("unbindsym --inhibited --no-warn --input-device=0:0:X11_keyboard Ctrl+Mod1+Shift+r")
        assert out.returncode == 0, out.stdout
        until("the removal seen", lambda: "re-arm binding on 0:0:X11_keyboard was removed" in guard.log())

        # The physical press within the quiet period: the guard refuses it and claims nothing.
        async def refused() -> bool:
            return bool(audit_with(guard, "rearm-refused", "forged input was detected"))

        await press_until(lambda: sway.physical_key("ctrl+alt+shift+r"), refused)
        assert [await code_of(s, "displays") for s in sessions] == ["emergency-stopped"] * 2
        assert not any(audit_with(c, "re-armed") for c in copies)

        # After the quiet period, the physical chord re-arms both (the positive control).
        async def all_work() -> bool:
            return [await code_of(s, "displays") for s in sessions] == [None] * 2

        await press_until(lambda: sway.physical_key("ctrl+alt+shift+r"), all_work)

async def test_end_on_a_members_agent_by_the_physical_chord_only(
    tmp_path: Path, sway: SwayDesk, port: int, token: str
) -> None:
    """The host is the guard; a manual `mcec mcp` (client `charliebot`) its member. The row's End
    opens the End prompt; `wtype`'s N is refused by the guard (nothing claimed), the physical N
    ends the member's agent on the member's own record of the press."""
    host_copy = manual_copy(tmp_path / "host", settings=host_settings(port, token), commands=("displays",))
    host_copy.extra_env.update(sway.session_env())
    (manual,) = agents(tmp_path, 1)
    windows = OperatorWindows(sway.operator_display)
    async with AsyncExitStack() as stack:
        host = start_host(host_copy, port, token)
        stack.callback(host.stop)
        until("the host leads", lambda: guards([host_copy]))
        session, _ = await stack.enter_async_context(
            sdk_stdio(manual, env_extra=sway.session_env(), client_name="charliebot")
        )
        until("the member joined", lambda: joined([host_copy]) == 1)
        assert await code_of(session, "displays") is None
        until("the host window", lambda: windows.visible_window(HOST_TITLE))
        until("charliebot's row", lambda: row_end(windows, "charliebot"))
        button = row_end(windows, "charliebot")
        origin = windows.window_origin(HOST_TITLE)
        assert button is not None and origin is not None
        windows.physical("mousemove", str(origin[0] + 500), str(origin[1] + 400), "click", "1", "sleep", "0.5")
        windows.physical("mousemove", *button, "sleep", "0.2", "click", "1")
        until("the End prompt", lambda: windows.visible_window(END_TITLE))
        until("the End chord bound", lambda: "presses end while its prompt is shown" in host_copy.log())

        async def refused() -> bool:
            return bool(audit_with(host_copy, "end-refused", "synthetic"))

        await press_until(lambda: sway.wayland_client(*wtype_chord("n")).wait(timeout=30), refused)
        assert not audit_with(manual, "agent-ended"), audit_lines(manual.log())
        assert await code_of(session, "displays") is None, "a refused End ended the agent"

        async def ended() -> bool:
            return bool(audit_with(manual, "agent-ended; by the operator"))

        await press_until(lambda: sway.physical_key("ctrl+alt+shift+n"), ended)
        assert audit_with(host_copy, "guard-end-sent", "charliebot"), audit_lines(host_copy.log())
        assert not audit_with(manual, "end-refused"), audit_lines(manual.log())
        with anyio.fail_after(GUARD_S), pytest.raises(Exception):
            await code_of(session, "displays")
        until("the member left", lambda: joined([host_copy]) == 0)


def commitment(marker: str) -> str:
    """What a guard announces of a binding: SHA-256 of its marker, in hex."""
    return hashlib.sha256(marker.encode()).hexdigest()


def line(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


def chord_claim(marker: str) -> bytes:
    """A re-arm claim as a guard on sway sends it: its own identity of the press (a counter),
    and the binding's marker."""
    press = {"time": 1, "button": None, "key": 27, "down": True}
    return line({"type": "rearm", "press": press, "release": None, "shownMsBefore": 5000, "binding": marker})


async def test_a_program_posing_as_the_guard_on_sway_rearms_nobody(tmp_path: Path, sway: SwayDesk) -> None:
    """It holds the lock and the socket, so its messages come from the lock's holder. It
    announces a physical and an injected binding and binds only the injected one (on the
    virtual keyboard): its claim naming the physical one, which nobody pressed, is refused
    `not-seen`; `wtype` presses the injected one, which each member records as injected, and
    the claim naming it is refused `synthetic`."""
    lock, sock = guard_files(OperatorWindows(sway.operator_display))
    physical, injected = (f"mcec-re-arm-{os.urandom(8).hex()}" for _ in range(2))
    chord = "Ctrl+Mod1+Shift+r"
    bind_injected = f"bindsym --inhibited --no-warn --input-device=0:0:virtual_keyboard {chord} nop {injected}"
    with posing_as_guard(lock, sock, GUARD_S) as (held, server):
        copies = agents(tmp_path, 2)
        async with AsyncExitStack() as stack:
            sessions = await connect_all(stack, copies, sway.session_env())
            members = [server.accept()[0] for _ in copies]
            hellos = [json.loads(m.makefile().readline()) for m in members]
            assert [h["type"] for h in hellos] == ["hello", "hello"], hellos
            sway.physical_key("ctrl+alt+shift+s")
            assert [await wait_for_code(s, "emergency-stopped") for s in sessions] == ["emergency-stopped"] * 2
            bound = {"control": "re-arm", "physical": commitment(physical), "injected": commitment(injected)}
            for m in members:
                m.sendall(line({"type": "bound", "chords": [bound]}))
            assert sway.swaymsg(bind_injected).returncode == 0

            # A binding announced but never pressed: no member saw it fire.
            for m in members:
                m.sendall(chord_claim(physical))
            until(
                "every member refused not-seen",
                lambda: all(audit_with(c, "rearm-refused", "not-seen") for c in copies),
            )

            # The virtual keyboard's press of the announced injected binding, then its claim.
            try:
                sway.wayland_client(*wtype_chord("r")).wait(timeout=30)
                await anyio.sleep(0.3)
                for m in members:
                    m.sendall(chord_claim(injected))
                until(
                    "every member refused synthetic",
                    lambda: all(audit_with(c, "rearm-refused", "synthetic") for c in copies),
                )
            finally:
                sway.swaymsg(f"unbindsym --inhibited --no-warn --input-device=0:0:virtual_keyboard {chord}")
            assert [await code_of(s, "displays") for s in sessions] == ["emergency-stopped"] * 2
            assert not any(audit_with(c, "re-armed") for c in copies)
            for m in members:
                m.close()
    sock.unlink(missing_ok=True)
