"""The host settings window's Agent tab, end to end: a real `mcec` host on the inner display
of an Xvfb + Xephyr desk. The opt-in checkbox (AllowSessionProvisioning) opens a confirmation
prompt, and the setting changes only on a physical click on its Confirm: an injected click
(xdotool on the inner display) is refused and audited and mcec.settings stays byte for byte the
same; a physical click (xdotool on the outer display, replayed by Xephyr's own mouse) rewrites
just that line, and `mcec provision` then works.
A settings file broken while the host runs is never rewritten."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from mcec_e2e import (
    REPO,
    Copy,
    audit_with,
    free_port,
    manual_copy,
    run_cli,
    sdk_envelope,
    sdk_http,
    session_copy,
    sessions_root,
    start_process,
    stop_process,
    wait_for_port,
)
from xdesk import Desk, wait_until

ARTIFACTS = REPO / "target" / "test-artifacts"
HOST_TITLE = "^mcec$"
SETTINGS_TITLE = "mcec settings"
# Offsets from the top-left corner of a window (egui's default dark theme at scale 1).
MENU_BUTTON = (24, 12)
MENU_SETTINGS_ITEM = (40, 40)
CHECKBOX = (15, 43)
PROVISION_NEW = (355, 145)
DELETE_ALL = (257, 145)
IGNORED_CLICK = "the opt-in checkbox was clicked in a session copy; ignored"
IGNORED_PROVISION = "Provision new… was clicked while provisioning is off; ignored"
CONFIRM_TITLE = "mcec: confirm session provisioning"
CONFIRM = (40, 92)

SETTINGS = (
    "# the operator's own settings; comments and order must survive\n"
    "AgentCommandsEnabled = true\n"
    "\n"
    "EmergencyStopHotkey = \"Ctrl+Alt+Shift+S\"   # the chord\n"
    "CommandOverlayEnabled = true\n"
)


@pytest.fixture
def host_copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings=SETTINGS)


def at(origin: tuple[int, int], offset: tuple[int, int]) -> list[str]:
    return [str(origin[0] + offset[0]), str(origin[1] + offset[1])]


def open_agent_tab(desk: Desk) -> tuple[int, int]:
    """Physically open the host menu, choose Settings…, and return the settings window's origin."""
    assert wait_until(lambda: desk.visible_window(HOST_TITLE), timeout=30), "the host window did not open"
    host = desk.window_origin(HOST_TITLE)
    assert host is not None
    desk.physical("mousemove", *at(host, MENU_BUTTON), "click", "1")
    desk.physical("sleep", "0.5", "mousemove", *at(host, MENU_SETTINGS_ITEM), "click", "1")
    assert wait_until(lambda: desk.visible_window(SETTINGS_TITLE), timeout=30), "the settings window did not open"
    origin = desk.window_origin(SETTINGS_TITLE)
    assert origin is not None
    # Drawn once the checkbox area is no longer the black of a fresh window.
    shot = ARTIFACTS / "agent-tab-opening.png"
    assert wait_until(lambda: desk.pixel(desk.screenshot(shot), *map(int, at(origin, CHECKBOX))) != (0, 0, 0)), (
        "the settings window was never drawn"
    )
    return origin


def confirm_button(desk: Desk) -> list[str]:
    """Where the opt-in confirmation's Confirm is, once it is open, drawn, and has been on screen
    a moment (a click counts only after `SHOW_SETTLE`, and a second after a program last moved
    the pointer: `STEER_WINDOW`)."""
    if not wait_until(lambda: desk.visible_window(CONFIRM_TITLE), timeout=30):
        raise AssertionError(f"the confirmation did not open: {desk.screenshot(ARTIFACTS / 'agent-tab-no-confirm.png')}")
    origin = desk.window_origin(CONFIRM_TITLE)
    assert origin is not None
    point = at(origin, CONFIRM)
    shot = ARTIFACTS / "agent-tab-confirm.png"
    assert wait_until(lambda: desk.pixel(desk.screenshot(shot), *map(int, point)) != (0, 0, 0)), "not drawn"
    desk.physical("sleep", "1.3")
    return point


def physical_opt_in(desk: Desk, origin: tuple[int, int]) -> None:
    """The operator ticks the checkbox and confirms, both with their own mouse."""
    desk.physical("mousemove", *at(origin, CHECKBOX), "sleep", "0.3", "click", "1")
    desk.physical("mousemove", *confirm_button(desk), "click", "1")


def start_host(copy: Copy, desk: Desk) -> subprocess.Popen:
    proc, _ = start_process(copy, [], env_extra={"DISPLAY": desk.inner})
    return proc


def test_only_a_physical_click_turns_provisioning_on(host_copy: Copy, desk: Desk) -> None:
    proc = start_host(host_copy, desk)
    try:
        origin = open_agent_tab(desk)
        rc, _, err = run_cli(host_copy, ["provision"])
        assert rc != 0 and "provisioning is off" in err, err

        # An injected click ticks the checkbox as far as the toolkit can tell (it opens the
        # confirmation), and an injected click on Confirm is refused.
        desk.injected("mousemove", *at(origin, CHECKBOX), "click", "1")
        confirm = confirm_button(desk)
        desk.injected("mousemove", *confirm, "click", "1")
        assert wait_until(lambda: bool(audit_with(host_copy, "provisioning-opt-in-refused")), timeout=10), (
            f"no refusal audited:\n{host_copy.log()}"
        )
        refused = audit_with(host_copy, "provisioning-opt-in-refused")
        assert "reason=synthetic" in refused[0] and "injected" in refused[0], refused
        assert host_copy.settings_path.read_text() == SETTINGS
        desk.screenshot(ARTIFACTS / "agent-tab-refused.png")

        # A physical click on Confirm is honoured: only that key is added.
        desk.physical("sleep", "1.3", "mousemove", *confirm, "click", "1")
        assert wait_until(lambda: bool(audit_with(host_copy, "provisioning-opt-in;")), timeout=10), (
            f"no opt-in audited:\n{host_copy.log()}"
        )
        assert "AllowSessionProvisioning=true" in audit_with(host_copy, "provisioning-opt-in;")[0]
        assert host_copy.settings_path.read_text() == SETTINGS + "AllowSessionProvisioning = true\n"
        assert stat.S_IMODE(os.stat(host_copy.settings_path).st_mode) == 0o600

        # The operator CLI reads the file: provisioning now works.
        rc, out, err = run_cli(host_copy, ["provision"])
        assert rc == 0, err
        assert '"mcpServers"' in out and "Authorization" in out and "Bearer " in out

        # The running host applies the change too: Provision new… (physical) shows the handoff.
        desk.physical("mousemove", *at(origin, PROVISION_NEW), "click", "1")
        assert wait_until(lambda: len(audit_with(host_copy, "session-provisioned", "by=operator-ui")) == 1, timeout=30), (
            f"Provision new… did not provision:\n{host_copy.log()}"
        )
        assert len([p for p in sessions_root(host_copy).iterdir() if p.is_dir()]) == 2
        desk.physical("sleep", "0.5")
        desk.screenshot(ARTIFACTS / "agent-tab.png")

        # Delete all (physical) removes both stale sessions through the guarded removal.
        desk.physical("mousemove", *at(origin, DELETE_ALL), "click", "1")
        assert wait_until(lambda: len(audit_with(host_copy, "session-removed", "by=operator-ui")) == 2, timeout=30), (
            f"Delete all did not remove the sessions:\n{host_copy.log()}"
        )
        assert [p for p in sessions_root(host_copy).iterdir() if p.is_dir()] == []
    finally:
        stop_process(proc)


def test_a_broken_settings_file_is_never_rewritten(host_copy: Copy, desk: Desk) -> None:
    proc = start_host(host_copy, desk)
    try:
        origin = open_agent_tab(desk)
        broken = SETTINGS + "AllowSessionProvisioning = \"yes please\"\n"
        host_copy.settings_path.write_text(broken)
        physical_opt_in(desk, origin)
        assert wait_until(lambda: bool(audit_with(host_copy, "provisioning-opt-in-refused")), timeout=10), (
            f"no refusal audited:\n{host_copy.log()}"
        )
        assert "reason=settings-unparsable" in audit_with(host_copy, "provisioning-opt-in-refused")[0]
        assert host_copy.settings_path.read_text() == broken
        desk.screenshot(ARTIFACTS / "agent-tab-broken-settings.png")
    finally:
        stop_process(proc)


def test_a_session_copy_cannot_opt_in(host_copy: Copy, desk: Desk) -> None:
    host_copy.write_settings(SETTINGS + "AllowSessionProvisioning = true\n")
    rc, out, err = run_cli(host_copy, ["provision", "--json", "--no-mcp-server"])
    assert rc == 0, err
    session = session_copy(host_copy, json.loads(out))
    before = session.settings_path.read_text()
    assert "AllowSessionProvisioning = false" in before
    proc = start_host(session, desk)
    try:
        origin = open_agent_tab(desk)
        desk.physical("mousemove", *at(origin, CHECKBOX), "click", "1")
        # The click reached the disabled checkbox: the window says it ignored it.
        assert wait_until(lambda: IGNORED_CLICK in session.log(), timeout=10), session.log()
        desk.screenshot(ARTIFACTS / "agent-tab-session-copy.png")
        assert session.settings_path.read_text() == before
        assert not audit_with(session, "provisioning-opt-in"), session.log()  # no event reached the core
    finally:
        stop_process(proc)


@pytest.mark.anyio
async def test_the_running_host_applies_the_opt_in_without_a_restart(tmp_path: Path, desk: Desk) -> None:
    port, token = free_port(), "agent-tab-e2e-token"
    settings = SETTINGS + f'McpServerEnabled = true\nMcpHttpPort = {port}\nMcpAuthToken = "{token}"\n'
    copy = manual_copy(tmp_path / "h", settings=settings)
    proc = start_host(copy, desk)
    try:
        wait_for_port(proc, port)
        url, headers = f"http://127.0.0.1:{port}/mcp", {"Authorization": f"Bearer {token}"}
        async with sdk_http(url, headers) as (session, _):

            async def provision_code() -> str | None:
                env = sdk_envelope(await session.call_tool("provision-session", {"mcpServer": False}))
                return None if env["ok"] else env["error"]["code"]

            assert await provision_code() == "provisioning-not-authorized"
            origin = open_agent_tab(desk)
            physical_opt_in(desk, origin)
            assert wait_until(lambda: len(audit_with(copy, "provisioning-opt-in;")) == 1, timeout=10), copy.log()
            assert await provision_code() is None
            # And back off, with another physical click: the agent loses the right at once.
            assert wait_until(lambda: not desk.visible_window(CONFIRM_TITLE)), "the confirmation stayed open"
            # The first click on its window after the confirmation (another X client's window)
            # had the keyboard focus only focuses it: the operator clicks it once first.
            desk.physical("mousemove", *at(origin, (500, 400)), "click", "1", "sleep", "0.5")
            physical_opt_in(desk, origin)
            assert wait_until(lambda: len(audit_with(copy, "provisioning-opt-in;")) == 2, timeout=10), copy.log()
            assert "AllowSessionProvisioning=false" in audit_with(copy, "provisioning-opt-in;")[1]
            assert await provision_code() == "provisioning-not-authorized"
        assert copy.settings_path.read_text() == settings + "AllowSessionProvisioning = false\n"
    finally:
        stop_process(proc)


def session_dirs(copy: Copy) -> list[Path]:
    root = sessions_root(copy)
    return [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []


def test_provision_new_is_refused_while_the_opt_in_is_off(host_copy: Copy, desk: Desk) -> None:
    """Provision new… with AllowSessionProvisioning off: the button is disabled, so an
    injected click (XTEST on the inner display) and the operator's own click both reach it
    (the window logs each) and provision nothing; the core refuses and audits a request that
    got past it (its unit test). Positive control: with the opt-in on, the operator's click on
    the same button provisions."""
    proc = start_host(host_copy, desk)
    try:
        origin = open_agent_tab(desk)
        desk.injected("mousemove", *at(origin, PROVISION_NEW), "click", "1")
        assert wait_until(lambda: host_copy.log().count(IGNORED_PROVISION) == 1, timeout=10), (
            f"the injected click never reached the button:\n{host_copy.log()}"
        )
        desk.physical("sleep", "0.3", "mousemove", *at(origin, PROVISION_NEW), "click", "1")
        assert wait_until(lambda: host_copy.log().count(IGNORED_PROVISION) == 2, timeout=10), host_copy.log()
        desk.physical("sleep", "0.5")
        desk.screenshot(ARTIFACTS / "agent-tab-provision-refused.png")
        assert session_dirs(host_copy) == []
        assert not audit_with(host_copy, "session-provisioned"), host_copy.log()
        assert host_copy.settings_path.read_text() == SETTINGS
    finally:
        stop_process(proc)

    host_copy.write_settings(SETTINGS + "AllowSessionProvisioning = true\n")
    proc = start_host(host_copy, desk)
    try:
        origin = open_agent_tab(desk)
        desk.physical("mousemove", *at(origin, PROVISION_NEW), "click", "1")
        assert wait_until(lambda: bool(audit_with(host_copy, "session-provisioned", "by=operator-ui")), timeout=30), (
            f"Provision new… did not provision with the opt-in on:\n{host_copy.log()}"
        )
        assert len(session_dirs(host_copy)) == 1
    finally:
        stop_process(proc)
