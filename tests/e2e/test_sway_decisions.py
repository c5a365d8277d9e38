"""The operator-only decisions of the host's windows on sway (issue 27): the provisioning
opt-in's confirmation, the token reveal and the console's End.

A click on sway is never the operator's word (no Wayland client learns which device pressed
its window), so there it only opens the prompt, which names a chord; mcec binds that chord on
sway's physical keyboards with a fresh nonce while the prompt is shown, and a press of it is
judged like the click on X11. A real sway 1.7 on an Xvfb (`swaydesk.py`): xdotool on that
Xvfb is the operator's keyboard, `wtype` the virtual one. mcec's windows are on the second
Xvfb, where the test clicks them with xdotool (on sway such a click is judged by nothing, so
it does not matter who makes it). For each decision: with no prompt shown its chord is bound
nowhere (the stop chord after it is the positive control: sway reports bindings in the order
of the keys); from `wtype` the chord is refused as synthetic, audited, and decides nothing;
from the physical keyboard it decides.

Build first: `cargo build -p mcec`."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Callable, Iterator

import anyio
import pytest

from mcec_e2e import (
    Copy,
    audit_lines,
    audit_with,
    code_of,
    host_settings,
    manual_copy,
    sdk_http,
    start_host,
    start_process,
    stop_process,
)
from sessions_support import OPT_IN, session_dirs
from swaydesk import SwayDesk
from test_agent_tab import CONFIRM_TITLE, PROVISION_NEW, SETTINGS, at, open_agent_tab
from test_agent_tab_token import REVEAL_TITLE, REVEAL_TOKEN, choose_codex
from test_console_end import END_TITLE, HOST_TITLE, row_end
from test_sway import GUARD_S, Bindings, until
from xdesk import Desk


class OperatorWindows(Desk):
    """The Xvfb mcec's windows are on, driven with the X tests' helpers. On sway no click on
    them is judged, so the helpers' "physical" is simply xdotool there."""

    def __init__(self, display: str) -> None:
        self.inner = self.outer = display

    def close(self) -> None:
        pass


@pytest.fixture
def sway() -> Iterator[SwayDesk]:
    with SwayDesk() as desk:
        yield desk


def wtype_chord(key: str) -> list[str]:
    return ["wtype", "-M", "ctrl", "-M", "alt", "-M", "shift", "-k", key, "-m", "shift", "-m", "alt", "-m", "ctrl"]


def press_until(press: Callable[[], object], done: Callable[[], object]) -> None:
    """Presses until `done()`: the chord is bound a moment after the prompt shows, a press
    counts only once it has been on screen a moment, and every press binds a fresh nonce."""
    deadline = time.monotonic() + GUARD_S
    while True:
        press()
        for _ in range(10):
            if done():
                return
            time.sleep(0.05)
        assert time.monotonic() < deadline, "the chord never did it"


def start_on_sway(copy: Copy, sway: SwayDesk) -> subprocess.Popen:
    proc, _ = start_process(copy, [], env_extra=sway.session_env())
    return proc


def bound_nowhere(sway: SwayDesk, bindings: Bindings, copy: Copy, key: str) -> None:
    """With no prompt for it shown, the physical `key` chord fires no binding: pressed before
    the stop chord, only the stop's binding is reported. Then the physical re-arm chord
    re-arms (while the re-arm prompt is shown, its chord is bound)."""
    before = len(bindings.fired)
    rearmed = len(audit_with(copy, "re-armed by the operator"))
    sway.physical_key(f"ctrl+alt+shift+{key}")
    sway.physical_key("ctrl+alt+shift+s")
    until("the stop's binding reported", lambda: len(bindings.fired) > before)
    assert all(c.startswith("mcec-stop-") for c in bindings.fired[before:]), bindings.fired[before:]
    until("the re-arm chord bound", lambda: "presses re-arm while its prompt is shown" in copy.log())
    press_until(
        lambda: sway.physical_key("ctrl+alt+shift+r"),
        lambda: len(audit_with(copy, "re-armed by the operator")) > rearmed,
    )


def unique(markers: list[str], name: str) -> list[str]:
    mine = [c for c in markers if c.startswith(f"mcec-{name}-")]
    assert len(set(mine)) == len(mine), f"a nonce was used twice: {mine}"
    return mine


def test_the_opt_in_is_confirmed_only_by_the_physical_chord(tmp_path: Path, sway: SwayDesk) -> None:
    copy = manual_copy(tmp_path / "c", settings=SETTINGS)
    windows = OperatorWindows(sway.operator_display)
    bindings = Bindings(sway)
    proc = start_on_sway(copy, sway)
    try:
        until("the stop armed", lambda: "answered by chord" in copy.log())
        bound_nowhere(sway, bindings, copy, "p")
        assert copy.settings_path.read_text() == SETTINGS

        # The checkbox (a click: on sway nobody's in particular) opens the confirmation, which
        # names the chord and has it bound while it is shown.
        origin = open_agent_tab(windows)
        windows.physical("mousemove", *at(origin, (15, 43)), "sleep", "0.3", "click", "1")
        until("the confirmation", lambda: windows.visible_window(CONFIRM_TITLE))
        until("the opt-in chord bound", lambda: "presses opt-in while its prompt is shown" in copy.log())

        # From the virtual keyboard: refused as synthetic, audited, nothing changed.
        press_until(
            lambda: sway.wayland_client(*wtype_chord("p")).wait(timeout=30),
            lambda: audit_with(copy, "provisioning-opt-in-refused", "reason=synthetic"),
        )
        assert not audit_with(copy, "provisioning-opt-in;"), audit_lines(copy.log())
        assert copy.settings_path.read_text() == SETTINGS

        # From the physical keyboard: confirmed, only that key added, the prompt closes.
        press_until(lambda: sway.physical_key("ctrl+alt+shift+p"), lambda: audit_with(copy, "provisioning-opt-in;"))
        assert "AllowSessionProvisioning=true" in audit_with(copy, "provisioning-opt-in;")[0]
        assert copy.settings_path.read_text() == SETTINGS + "AllowSessionProvisioning = true\n"
        until("the confirmation closed", lambda: not windows.visible_window(CONFIRM_TITLE))

        # Closed, its chord is bound nowhere again.
        bound_nowhere(sway, bindings, copy, "p")
    finally:
        stop_process(proc)
        bindings.close()
    assert len(unique(bindings.fired, "opt-in")) >= 2, bindings.fired
    assert len(audit_with(copy, "provisioning-opt-in;")) == 1, audit_lines(copy.log())


def test_the_token_is_revealed_only_by_the_physical_chord(tmp_path: Path, sway: SwayDesk) -> None:
    copy = manual_copy(tmp_path / "c", settings=SETTINGS + OPT_IN)
    windows = OperatorWindows(sway.operator_display)
    bindings = Bindings(sway)
    proc = start_on_sway(copy, sway)
    try:
        until("the stop armed", lambda: "answered by chord" in copy.log())
        origin = open_agent_tab(windows)
        windows.physical("mousemove", *at(origin, PROVISION_NEW), "click", "1")
        until("a session provisioned", lambda: audit_with(copy, "session-provisioned", "by=operator-ui"))
        assert len(session_dirs(copy)) == 1
        choose_codex(windows, origin)
        bound_nowhere(sway, bindings, copy, "t")
        assert not audit_with(copy, "token-reveal"), audit_lines(copy.log())

        windows.physical("mousemove", *at(origin, REVEAL_TOKEN), "click", "1")
        until("the reveal's confirmation", lambda: windows.visible_window(REVEAL_TITLE))
        until("the reveal chord bound", lambda: "presses reveal while its prompt is shown" in copy.log())
        press_until(
            lambda: sway.wayland_client(*wtype_chord("t")).wait(timeout=30),
            lambda: audit_with(copy, "token-reveal-refused", "reason=synthetic"),
        )
        assert not audit_with(copy, "token-revealed"), audit_lines(copy.log())
        assert windows.visible_window(REVEAL_TITLE)

        press_until(lambda: sway.physical_key("ctrl+alt+shift+t"), lambda: audit_with(copy, "token-revealed"))
        until("the reveal closed", lambda: not windows.visible_window(REVEAL_TITLE))
        bound_nowhere(sway, bindings, copy, "t")
    finally:
        stop_process(proc)
        bindings.close()
    assert len(unique(bindings.fired, "reveal")) >= 2, bindings.fired
    assert len(audit_with(copy, "token-revealed")) == 1, audit_lines(copy.log())


@pytest.mark.anyio
async def test_end_ends_the_agent_only_by_the_physical_chord(
    tmp_path: Path, sway: SwayDesk, port: int, token: str
) -> None:
    """The host's own agent (its HTTP front door, named `deltabot` by its `initialize`): the
    row's End opens the End prompt naming it; the chord ends it only from the physical keyboard."""
    copy = manual_copy(tmp_path / "host", settings=host_settings(port, token), commands=("displays",))
    copy.extra_env.update(sway.session_env())
    windows = OperatorWindows(sway.operator_display)
    bindings = Bindings(sway)
    host = start_host(copy, port, token)
    ended = False
    try:
        until("the stop armed", lambda: "answered by chord" in copy.log())
        try:
            async with sdk_http(host.url, host.auth_headers(), client_name="deltabot") as (session, _):
                assert await code_of(session, "displays") is None
                until("the host window", lambda: windows.visible_window(HOST_TITLE))
                until("deltabot's row", lambda: row_end(windows, "deltabot"))
                bound_nowhere(sway, bindings, copy, "n")
                assert await code_of(session, "displays") is None

                button = row_end(windows, "deltabot")
                origin = windows.window_origin(HOST_TITLE)
                assert button is not None and origin is not None
                windows.physical("mousemove", str(origin[0] + 500), str(origin[1] + 400), "click", "1", "sleep", "0.5")
                windows.physical("mousemove", *button, "sleep", "0.2", "click", "1")
                until("the End prompt", lambda: windows.visible_window(END_TITLE))
                until("the End chord bound", lambda: "presses end while its prompt is shown" in copy.log())

                press_until(
                    lambda: sway.wayland_client(*wtype_chord("n")).wait(timeout=30),
                    lambda: audit_with(copy, "end-refused", "synthetic"),
                )
                assert not audit_with(copy, "agent-ended"), audit_lines(copy.log())
                assert await code_of(session, "displays") is None, "a refused End ended the agent"

                press_until(
                    lambda: sway.physical_key("ctrl+alt+shift+n"),
                    lambda: audit_with(copy, "agent-ended; by the operator"),
                )
                ended = True
                with anyio.fail_after(GUARD_S):
                    await code_of(session, "displays")
                raise AssertionError("a call went through after End closed the front door")
        except Exception as failure:
            # The client's connection dies with the front door: expected once the End counted.
            if not ended or isinstance(failure, AssertionError):
                raise
        until("the End prompt closed", lambda: not windows.visible_window(END_TITLE))
        assert host.proc.poll() is None, "the host exited: End on its agent only closes the front door"
        bound_nowhere(sway, bindings, copy, "n")
    finally:
        host.stop()
        bindings.close()
    assert len(unique(bindings.fired, "end")) >= 2, bindings.fired
    assert len(audit_with(copy, "agent-ended")) == 1, audit_lines(copy.log())
