"""The operator's windows of mcec.exe under Wine that answer something: the host window (plain
`mcec.exe`) with its re-arm item (which opens the re-arm prompt) and its settings window's
Agent tab (whose opt-in checkbox opens an attested confirmation), and the consent prompt of
`request-command-access`, all painted by the CPU painter into Win32 windows
(crates/operator/src/soft/win32.rs). Each answer counts only when the low-level mouse hook saw
the very click that pressed the control come from a device: xdotool on Wine's Xvfb is the
operator's hand, and `mcec-send-input.exe click` (another Wine process, `SendInput`) is a
program clicking at the pointer. Each test shows the physical answer working before the
injected one is refused; test_message_clicks_wine.py covers clicks made of window messages.

    scripts/windows-build && .venv/bin/python -m pytest -q tests/windows/test_host_wine.py
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import anyio
import pytest

from wine_desk import WineDesk
from test_mcec_wine import call, run, wine_copy
from test_operator_wine import (
    ARTIFACTS,
    CHORD,
    PROMPT_TITLE,
    Target,
    code_of,
    pixel,
    rearm_button,
    screenshot,
    wait_for_code,
    window_named,
)
from mcec_e2e import audit_with, free_port, host_settings, sdk_http, sdk_stdio, start_host  # noqa: E402
from xdesk import PROBE_PATIENCE_S, wait_until  # noqa: E402

HOST_TITLE = "mcec"
SETTINGS_TITLE = "mcec settings"
CONSENT_TITLE = "mcec: an agent asks for more access"
#: Client areas on the 1024x768 Xvfb, where the painter places them (host.rs, settings_window.rs,
#: consent_prompt.rs: 560x480 at (1024/16, (768-480)/3); 640x560 and 560x380 centred).
HOST_ORIGIN = (64, 96)
SETTINGS_ORIGIN = (192, 104)
CONSENT_ORIGIN = (232, 194)
#: Offsets in those client areas (egui's dark theme at scale 1, as on X11: tests/e2e).
MENU_BUTTON = (24, 12)
MENU_FIRST_ITEM = (40, 40)
#: While stopped the first item is the re-arm item: its button starts after the painted sign.
MENU_REARM_ITEM = (120, 40)
CHECKBOX = (15, 43)
#: The opt-in's confirmation prompt (crates/operator/src/opt_in_prompt.rs): 460x170, centred,
#: and its Confirm button.
OPT_IN_TITLE = "mcec: confirm session provisioning"
OPT_IN_ORIGIN = ((1024 - 460) // 2, (768 - 170) // 2)
CONFIRM = [str(OPT_IN_ORIGIN[0] + 41), str(OPT_IN_ORIGIN[1] + 92)]
#: `mcec_rules::activation::SHOW_SETTLE` (0.3 s) and a margin: the operator's own click on a
#: window that just appeared waits this long, as a hand does (a wait before acting, not an
#: assertion about speed).
SETTLE_S = 0.6
ALLOW_OFFSET = (36, 356)
TOKEN = "wine-host-token-0123456789abcdef"
#: A hang guard, not a timed assertion: a prompt nobody answers ends in 20 s.
CONSENT_ENV = {"MCEC_TEST_CONSENT_TIMEOUT_MS": "20000"}


pytestmark = pytest.mark.usefixtures("no_stop_record")


def at(origin: tuple[int, int], offset: tuple[int, int]) -> list[str]:
    return [str(origin[0] + offset[0]), str(origin[1] + offset[1])]


def injected_click(desk: WineDesk, point: list[str]) -> None:
    """Another program clicks at `point`: the pointer is put there, `SendInput` presses."""
    desk.xdotool("mousemove", *point)
    assert desk.wine("mcec-send-input", "click").startswith("SENT click")


def drawn(desk: WineDesk, point: list[str], name: str) -> bool:
    """Whether the window under `point` was painted (a fresh Wine window is black there)."""
    return wait_until(lambda: pixel(screenshot(desk, ARTIFACTS / name), *map(int, point)) != (0, 0, 0),
                      PROBE_PATIENCE_S)


def refusal_drawn(path: Path, x: int, y: int, width: int = 400) -> bool:
    """Whether the row from (x, y) holds the refusal red of the operator windows' messages."""
    out = subprocess.run(["convert", str(path), "-crop", f"{width}x1+{x}+{y}", "-depth", "8", "txt:-"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines()[1:]:
        r, g, b = (int(v) for v in line.split("(")[1].split(")")[0].split(",")[:3])
        if r > 180 and g < 150 and b < 150:
            return True
    return False


def open_menu(desk: WineDesk) -> None:
    """The operator opens the host window's menu; returns once its items are drawn (the area
    under the menu button changes)."""
    desk.focus("^mcec$")
    area = (HOST_ORIGIN[0] + 10, HOST_ORIGIN[1] + 28)
    before = crop(screenshot(desk, ARTIFACTS / "windows-host-menu.png"), *area)
    desk.xdotool("mousemove", *at(HOST_ORIGIN, MENU_BUTTON), "click", "1")
    assert wait_until(lambda: crop(screenshot(desk, ARTIFACTS / "windows-host-menu.png"), *area) != before,
                      PROBE_PATIENCE_S), "the host menu did not open"


def crop(path: Path, x: int, y: int, w: int = 140, h: int = 60) -> str:
    return subprocess.run(["convert", str(path), "-crop", f"{w}x{h}+{x}+{y}", "-depth", "8", "txt:-"],
                          capture_output=True, text=True, check=True).stdout


async def provision_code(session) -> str | None:
    return await code_of(session, "provision-session")


def confirm_opt_in(desk: WineDesk, checkbox: list[str], click) -> None:
    """The checkbox (any click on it) opens the attested confirmation; `click` answers it on
    Confirm once it is drawn and has been on screen a moment."""
    desk.xdotool("mousemove", *checkbox, "click", "1")
    assert wait_until(lambda: window_named(desk, OPT_IN_TITLE), PROBE_PATIENCE_S), "no confirmation prompt"
    assert drawn(desk, CONFIRM, "windows-opt-in-prompt.png"), "the confirmation was never drawn"
    time.sleep(SETTLE_S)
    click(CONFIRM)


def physical_click(desk: WineDesk):
    return lambda point: desk.xdotool("mousemove", *point, "click", "1")


def test_host_window_opt_in_counts_only_a_physical_click(desk: WineDesk, tmp_path: Path) -> None:
    port = free_port()
    copy = wine_copy(desk, tmp_path, host_settings(port, TOKEN))
    host = start_host(copy, port, TOKEN)
    try:
        assert wait_until(lambda: window_named(desk, HOST_TITLE), PROBE_PATIENCE_S), "no host window"
        assert drawn(desk, at(HOST_ORIGIN, MENU_BUTTON), "windows-host-opening.png"), "host window never drawn"
        open_menu(desk)
        # Settings… is the menu's first item while the stop is armed.
        desk.xdotool("mousemove", *at(HOST_ORIGIN, MENU_FIRST_ITEM), "click", "1")
        assert wait_until(lambda: window_named(desk, SETTINGS_TITLE), PROBE_PATIENCE_S), "no settings window"
        checkbox = at(SETTINGS_ORIGIN, CHECKBOX)
        assert drawn(desk, checkbox, "windows-agent-tab.png"), "the Agent tab was never drawn"

        async def main():
            async with sdk_http(host.url, host.auth_headers()) as (session, _):
                assert await provision_code(session) == "provisioning-not-authorized"
                # Positive control: the operator's click on Confirm turns provisioning on.
                await anyio.to_thread.run_sync(lambda: confirm_opt_in(desk, checkbox, physical_click(desk)))
                assert await anyio.to_thread.run_sync(
                    lambda: wait_until(lambda: bool(audit_with(copy, "provisioning-opt-in;")), PROBE_PATIENCE_S)
                ), copy.log()
                assert await provision_code(session) is None, "provisioning stayed off after a physical opt-in"
                assert await anyio.to_thread.run_sync(lambda: closed(desk, OPT_IN_TITLE)), "the prompt stayed"
                # And off again, by hand.
                await anyio.to_thread.run_sync(lambda: confirm_opt_in(desk, checkbox, physical_click(desk)))
                assert await anyio.to_thread.run_sync(
                    lambda: wait_until(lambda: len(audit_with(copy, "provisioning-opt-in;")) == 2, PROBE_PATIENCE_S)
                ), copy.log()
                assert "AllowSessionProvisioning=false" in audit_with(copy, "provisioning-opt-in;")[1]
                assert await anyio.to_thread.run_sync(lambda: closed(desk, OPT_IN_TITLE)), "the prompt stayed"
                # A program clicks Confirm: the window reports it, the core refuses it.
                await anyio.to_thread.run_sync(
                    lambda: confirm_opt_in(desk, checkbox, lambda point: injected_click(desk, point))
                )
                assert await anyio.to_thread.run_sync(
                    lambda: wait_until(lambda: bool(audit_with(copy, "provisioning-opt-in-refused")), PROBE_PATIENCE_S)
                ), copy.log()
                assert await provision_code(session) == "provisioning-not-authorized"

        run(main)
        # The operator sees the refusal: the confirmation's message line turns red.
        # Kept in target/; docs/screenshots/windows-host-window.png is one such picture, looked at.
        shot = ARTIFACTS / "windows-host-window.png"
        band = (OPT_IN_ORIGIN[0] + 8, OPT_IN_ORIGIN[1] + 40)
        assert wait_until(lambda: refusal_in_band(screenshot(desk, shot), *band), PROBE_PATIENCE_S), shot
    finally:
        host.stop()
    refused = audit_with(copy, "provisioning-opt-in-refused")
    assert len(refused) == 1 and "reason=synthetic" in refused[0], refused
    assert "AllowSessionProvisioning = false" in copy.settings_path.read_text()


def refusal_in_band(path: Path, x: int, y: int, rows: int = 60) -> bool:
    """Whether any row of the `rows` from (x, y) holds the refusal red."""
    return any(refusal_drawn(path, x, y + dy) for dy in range(0, rows, 2))


def test_host_menu_rearm_counts_only_a_physical_click(desk: WineDesk, tmp_path: Path) -> None:
    port = free_port()
    copy = wine_copy(desk, tmp_path, host_settings(port, TOKEN))
    copy.enable_commands("displays")
    host = start_host(copy, port, TOKEN)
    target = Target(desk, 0, 560, 1024, 200)
    rearm_item = at(HOST_ORIGIN, MENU_REARM_ITEM)
    try:
        assert wait_until(lambda: window_named(desk, HOST_TITLE), PROBE_PATIENCE_S), "no host window"

        async def main():
            async with sdk_http(host.url, host.auth_headers()) as (session, _):
                desk.xdotool("key", CHORD)
                assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
                stopped_line = (HOST_ORIGIN[0] + 8, HOST_ORIGIN[1] + 45)
                assert wait_until(lambda: refusal_drawn(screenshot(desk, ARTIFACTS / "windows-host-stopped.png"),
                                                        *stopped_line), PROBE_PATIENCE_S), "the host never said STOPPED"
                # The menu's re-arm item (a click of anyone's) opens the re-arm prompt, whose
                # Re-arm is judged on the click that pressed it.
                open_menu(desk)
                desk.xdotool("mousemove", *rearm_item, "click", "1")
                assert wait_until(lambda: window_named(desk, PROMPT_TITLE), PROBE_PATIENCE_S), "no re-arm prompt"
                assert drawn(desk, rearm_button(), "windows-host-rearm-prompt.png")
                injected_click(desk, rearm_button())
                assert await anyio.to_thread.run_sync(
                    lambda: wait_until(lambda: bool(audit_with(copy, "rearm-refused")), PROBE_PATIENCE_S)
                ), copy.log()
                assert await code_of(session, "displays") == "emergency-stopped"
                desk.xdotool("mousemove", *rearm_button(), "click", "1")
                assert await wait_for_code(session, None) is None, copy.log()

        run(main)
    finally:
        target.close()
        host.stop()
    assert len(audit_with(copy, "rearm-refused")) == 1, copy.log()
    assert audit_with(copy, "re-armed by the operator"), copy.log()


class Request:
    """A `request-command-access` call running in the background while the test answers."""

    def __init__(self, session, commands: list[str]) -> None:
        self.session, self.commands = session, commands
        self.answer: dict | None = None

    async def run(self) -> None:
        self.answer = await call(self.session, "request-command-access", commands=self.commands, reason="click OK")

    def code(self) -> str | None:
        assert self.answer is not None, "no answer yet"
        return None if self.answer["ok"] else self.answer["error"]["code"]


def closed(desk: WineDesk, title: str) -> bool:
    return wait_until(lambda: not window_named(desk, title), PROBE_PATIENCE_S)


def consent_copy(desk: WineDesk, tmp_path: Path):
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n")
    copy.enable_commands("capture", "displays")
    return copy


async def consent_open(desk: WineDesk) -> list[str]:
    """The Allow button, once the prompt is on screen and drawn."""
    await anyio.to_thread.run_sync(lambda: wait_until(lambda: window_named(desk, CONSENT_TITLE), PROBE_PATIENCE_S))
    allow = at(CONSENT_ORIGIN, ALLOW_OFFSET)
    assert await anyio.to_thread.run_sync(lambda: drawn(desk, allow, "windows-consent.png")), "no consent prompt"
    # A hand's click comes a moment after the prompt appeared (mcec_rules::activation::SHOW_SETTLE).
    await anyio.sleep(SETTLE_S)
    return allow


def test_consent_physical_allow_grants_and_an_injected_one_is_refused(desk: WineDesk, tmp_path: Path) -> None:
    copy = consent_copy(desk, tmp_path)
    target = Target(desk, 0, 620, 1024, 140)

    async def main():
        async with sdk_stdio(copy, env_extra=CONSENT_ENV) as (session, _):
            assert await code_of(session, "click", x=5, y=700) == "command-disabled"
            first = Request(session, ["click"])
            async with anyio.create_task_group() as tg:
                tg.start_soon(first.run)
                allow = await consent_open(desk)
                desk.xdotool("mousemove", *allow, "click", "1")
            assert first.answer is not None and first.answer["ok"], first.answer
            assert first.answer["result"]["granted"] == ["click"]
            assert await anyio.to_thread.run_sync(lambda: closed(desk, CONSENT_TITLE)), "the prompt stayed open"

            second = Request(session, ["key"])
            async with anyio.create_task_group() as tg:
                tg.start_soon(second.run)
                allow = await consent_open(desk)
                injected_click(desk, allow)
                assert await anyio.to_thread.run_sync(
                    lambda: wait_until(lambda: bool(audit_with(copy, "consent-refused", "synthetic")), PROBE_PATIENCE_S)
                ), copy.log()
                screenshot(desk, ARTIFACTS / "windows-consent-refused.png")
                assert second.answer is None and window_named(desk, CONSENT_TITLE), "an injected click answered"
                desk.focus(CONSENT_TITLE)
                desk.xdotool("key", "Escape")
            assert second.code() == "consent-denied", second.answer

    try:
        run(main)
    finally:
        target.close()
    assert len(audit_with(copy, "consent; granted")) == 1, copy.log()


@pytest.mark.parametrize("key", ["Return", "Escape"])
def test_enter_and_esc_deny_consent_and_leave_the_stop_latched(desk: WineDesk, tmp_path: Path, key: str) -> None:
    """As on X11, Enter and Esc are a denial (a "Leave stopped") whatever has the focus, so they
    never grant or re-arm, from the operator's keyboard or another program's `SendInput`."""
    copy = consent_copy(desk, tmp_path)
    target = Target(desk, 0, 620, 1024, 140)

    async def main():
        async with sdk_stdio(copy, env_extra=CONSENT_ENV) as (session, _):
            # The operator's own key: a denial, at once.
            physical = Request(session, ["click"])
            async with anyio.create_task_group() as tg:
                tg.start_soon(physical.run)
                await consent_open(desk)
                desk.focus(CONSENT_TITLE)
                desk.xdotool("key", key)
            assert physical.code() == "consent-denied", physical.answer
            # The answered prompt's window is gone before the next one opens (focus finds the new one).
            assert await anyio.to_thread.run_sync(lambda: closed(desk, CONSENT_TITLE)), "the prompt stayed open"

            # Another program's key at the focused prompt grants nothing either.
            injected = Request(session, ["type"])
            async with anyio.create_task_group() as tg:
                tg.start_soon(injected.run)
                await consent_open(desk)
                desk.focus(CONSENT_TITLE)
                sent = desk.wine("mcec-send-input", "chord", "--hotkey", "Enter" if key == "Return" else "Esc")
                assert sent.startswith("SENT chord"), sent
            assert injected.code() == "consent-denied", injected.answer
            assert await code_of(session, "click", x=5, y=700) == "command-disabled"
            assert await code_of(session, "type", text="x") == "command-disabled"

            # On the re-arm prompt the same key closes the prompt and leaves the stop latched.
            desk.focus("mcec stop target")
            desk.xdotool("key", CHORD)
            assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
            assert wait_until(lambda: window_named(desk, PROMPT_TITLE), PROBE_PATIENCE_S), "no re-arm prompt"
            assert drawn(desk, rearm_button(), "windows-rearm-prompt-keys.png")
            desk.focus(PROMPT_TITLE)
            desk.xdotool("key", key)
            assert wait_until(lambda: not window_named(desk, PROMPT_TITLE), PROBE_PATIENCE_S), "the prompt stayed"
            assert await code_of(session, "displays") == "emergency-stopped"

    try:
        run(main)
    finally:
        target.close()
    assert not audit_with(copy, "consent; granted"), copy.log()
    assert len(audit_with(copy, "consent; denied")) == 2, copy.log()
    assert audit_with(copy, "rearm-prompt", "dismissed"), copy.log()
