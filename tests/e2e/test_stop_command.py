"""The operator's other ways to stop (issue 25), end to end on the Xvfb + Xephyr desk:

- `mcec stop` records a new stop for the display: two running `mcec mcp` copies both stop
  (their next call is refused `emergency-stopped`, their audit says why), an injected click on
  Re-arm re-arms neither, and only a physical click in each one's prompt re-arms it. With
  nothing running it leaves a record that an mcec started later honours. Without a display it
  fails, saying so, and stops nothing.
- The host window's Stop button stops the host, whoever clicks it (an injected click here:
  stopping is always allowed).
- The host on a default configuration says why its stop is not armed: nothing serves agents
  (it said "EmergencyStopEnabled is false", which was not the reason).

Real `mcec` processes driven by the official MCP Python SDK; "physical" input is sent through
the outer display, injected input on the inner one."""

from __future__ import annotations

import os
import pwd
import subprocess
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from mcec_e2e import (
    REPO,
    Copy,
    audit_with,
    code_of,
    host_settings,
    installed_copy,
    manual_copy,
    run_cli,
    sdk_http,
    start_host,
    start_process,
    stop_process,
    wait_for_code,
)
from test_stop_durable import (
    PROMPT_TITLE,
    REARM_OFFSET,
    StopDirMount,
    agent,
    click_rearm,
    is_red,
    record_of,
    stop_copy,
)
from xdesk import Desk, wait_until

ARTIFACTS = REPO / "target" / "test-artifacts"
COMMAND_REASON = "the operator ran `mcec stop`"
FOLLOWED = f"emergency-stop; engaged; reason=a stop is recorded for this display ({COMMAND_REASON})"
BUTTON_REASON = "the operator pressed Stop in the mcec window"
HOST_TITLE = "^mcec$"
STOP_BUTTON = (56, 77)  # the host window's Stop button, from the window's top-left corner

pytestmark = pytest.mark.anyio


def mcec_stop(copy: Copy, display: str | None) -> tuple[int, str, str]:
    """`mcec stop` run as the operator would, with `display` as DISPLAY (None: unset)."""
    return run_cli(copy, ["stop"], env_extra={"DISPLAY": display} if display else None)


async def test_mcec_stop_stops_two_running_mcec_and_only_a_physical_rearm_in_the_one_prompt_rearms_both(
    tmp_path: Path, desk: Desk
) -> None:
    copies = [stop_copy(tmp_path / "a"), stop_copy(tmp_path / "b")]
    record = record_of(desk)
    async with AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(agent(c, desk)) for c in copies]
        for s in sessions:
            assert await code_of(s, "click", {"at": {"x": 5, "y": 5}}) is None, "the positive control: both act"

        rc, out, err = mcec_stop(copies[0], desk.inner)
        assert rc == 0, err
        assert f"display {desk.inner}" in out and str(record) in out and "no command does" in out, out
        assert record.read_text().startswith(f"mcec-stop v1\nreason: {COMMAND_REASON}\n"), record.read_text()
        for c, s in zip(copies, sessions):
            assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped", c.log()
            assert await code_of(s, "click", {"at": {"x": 5, "y": 5}}) == "emergency-stopped"
            assert wait_until(lambda: bool(audit_with(c, FOLLOWED)), 10), c.log()
        assert audit_with(copies[0], "emergency-stop-command;", str(record)), copies[0].log()

        # An injected click on the prompt's Re-arm is refused; nothing re-arms.
        assert wait_until(lambda: desk.visible_window(PROMPT_TITLE), 10), "no re-arm prompt opened"
        origin = desk.window_origin(PROMPT_TITLE)
        assert origin is not None
        button = (origin[0] + REARM_OFFSET[0], origin[1] + REARM_OFFSET[1])
        shot = ARTIFACTS / "stop-command-prompt.png"
        assert wait_until(lambda: desk.pixel(desk.screenshot(shot), *button) != (0, 0, 0)), "prompt not drawn"
        desk.injected("sleep", "0.6", "mousemove", str(button[0]), str(button[1]), "click", "1")
        assert wait_until(lambda: any("AGENT-AUDIT: rearm-refused" in c.log() for c in copies), 10), (
            f"no refusal audited:\n{copies[0].log()}\n{copies[1].log()}"
        )
        for s in sessions:
            assert await code_of(s, "displays") == "emergency-stopped", "an injected click re-armed"

        # One prompt for the display (its guard's); the operator's own click there re-arms both,
        # each having judged that click against its own monitor (issue 25).
        assert len(desk.visible_windows(PROMPT_TITLE)) == 1, "more than one re-arm prompt"
        desk.physical("sleep", "1.3")  # no program has moved the pointer for a second
        click_rearm(desk)
        for c, s in zip(copies, sessions):
            assert await wait_for_code(s, None) is None, f"still stopped after the physical re-arm:\n{c.log()}"
        assert wait_until(lambda: not desk.visible_window(PROMPT_TITLE), 10), "the prompt stayed open"
        assert wait_until(lambda: not record.exists(), 10), "the re-arm left the record"
    for c in copies:
        assert "re-armed by the operator" in c.log(), c.log()


async def test_mcec_stop_with_nothing_running_stops_an_mcec_started_later(tmp_path: Path, desk: Desk) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    async with agent(copy, desk) as s:
        assert await code_of(s, "displays") is None, "the positive control: without a record it starts armed"
    rc, out, err = mcec_stop(copy, f"{desk.inner}.0")  # another spelling of the same display
    assert rc == 0, err
    assert str(record) in out, out
    assert f"reason: {COMMAND_REASON}\n" in record.read_text()

    async with agent(copy, desk) as s:
        for tool in ("displays", "click"):
            args = {"at": {"x": 5, "y": 5}} if tool == "click" else {}
            assert await code_of(s, tool, args) == "emergency-stopped", tool
        assert wait_until(lambda: bool(audit_with(copy, FOLLOWED)), 10), copy.log()
        click_rearm(desk)
        assert await wait_for_code(s, None) is None, "a physical re-arm did not re-arm"
    assert not record.exists(), "the re-arm did not remove the record"


def test_mcec_stop_without_a_display_fails_and_stops_nothing(tmp_path: Path) -> None:
    copy = manual_copy(tmp_path / "c")
    # Other test runs on this machine write display records; none of them writes this one.
    unidentified = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".local/state/mcec/stop/display-unidentified"
    existed = unidentified.exists()
    # No DISPLAY, and the display search points at no sockets and no logind (mcec_e2e's env).
    rc, out, err = mcec_stop(copy, None)
    assert rc == 2, (rc, out, err)
    assert out == "", out
    assert "No X display found" in err and "Nothing was stopped" in err and "DISPLAY=:0 mcec stop" in err, err
    assert existed or not unidentified.exists(), "a record was written without a display"


def test_mcec_stop_where_no_record_can_be_written_fails_and_says_where(tmp_path: Path, desk: Desk) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    mount = StopDirMount(desk, tmp_path / "ro", "ro")  # the stop directory, read-only for this process only
    done = subprocess.run(
        [*mount.wrapper(), str(copy.exe), "stop"],
        capture_output=True,
        text=True,
        env=copy.env(DISPLAY=desk.inner),
        cwd=copy.root,
        timeout=120,
    )
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "the stop could not be recorded" in done.stderr and "Nothing was stopped" in done.stderr, done.stderr
    assert str(record.parent) in done.stderr and "Read-only file system" in done.stderr, done.stderr
    assert not record.exists()
    # The positive control: the same command where a record can be written.
    rc, _, err = mcec_stop(copy, desk.inner)
    assert rc == 0 and record.exists(), err
    record.unlink()


async def test_the_host_windows_stop_button_stops_the_host(tmp_path: Path, desk: Desk, port: int, token: str) -> None:
    copy = manual_copy(tmp_path / "h", settings=host_settings(port, token), commands=("displays",))
    copy.extra_env["DISPLAY"] = desk.inner
    record = record_of(desk)
    host = start_host(copy, port, token)
    try:
        async with sdk_http(host.url, host.auth_headers()) as (s, _):
            assert await code_of(s, "displays") is None, "the positive control: the host answers"
            assert wait_until(lambda: desk.visible_window(HOST_TITLE), 30), "the host window did not open"
            origin = desk.window_origin(HOST_TITLE)
            assert origin is not None
            button = (origin[0] + STOP_BUTTON[0], origin[1] + STOP_BUTTON[1])
            shot = ARTIFACTS / "host-stop-button.png"
            assert wait_until(lambda: is_red(desk.pixel(desk.screenshot(shot), *button)), 30), (
                f"no red Stop button at {button}: {desk.pixel(shot, *button)}"
            )
            # Stopping is always allowed: a click a program sent counts.
            desk.injected("mousemove", str(button[0]), str(button[1]), "click", "1")
            assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped", copy.log()
            assert wait_until(lambda: bool(audit_with(copy, f"emergency-stop; engaged; reason={BUTTON_REASON}")), 10)
            assert wait_until(record.exists, 10), "the stop was not recorded"
            assert f"reason: {BUTTON_REASON}\n" in record.read_text()
            # Stopped, the window offers no Stop (the re-arm is in its menu).
            after = ARTIFACTS / "host-stopped.png"
            assert wait_until(lambda: not is_red(desk.pixel(desk.screenshot(after), *button)), 10), (
                "the Stop button is still shown while stopped"
            )
    finally:
        host.stop()
        record.unlink(missing_ok=True)  # no mcec runs on the display any more


@pytest.mark.parametrize(
    ("settings", "reason", "event"),
    [
        (None, "nothing here serves agents, so there is nothing to stop", "emergency-stop-not-needed"),
        ("EmergencyStopEnabled = false\nAgentCommandsEnabled = true\n", "EmergencyStopEnabled is false",
         "emergency-stop-disabled"),
    ],
    ids=["installed-default", "stop-off"],
)
def test_the_host_says_the_real_reason_its_stop_is_not_armed(
    tmp_path: Path, desk: Desk, settings: str | None, reason: str, event: str
) -> None:
    copy = installed_copy(tmp_path / "i")
    if settings is not None:
        copy.write_settings(settings)
    proc, _ = start_process(copy, [], env_extra={"DISPLAY": desk.inner})
    try:
        assert wait_until(lambda: bool(audit_with(copy, f"{event};")), 30), copy.log()
        assert wait_until(lambda: desk.visible_window(HOST_TITLE), 30), "the host window did not open"
        origin = desk.window_origin(HOST_TITLE)
        assert origin is not None
        shot = ARTIFACTS / f"host-not-armed-{event}.png"
        # The window's own words (read by Tesseract, which may not keep the case), not only the log's.
        said = reason.split(",")[0].lower()
        assert wait_until(lambda: said in window_text(desk, shot, origin).lower(), 30), window_text(desk, shot, origin)
    finally:
        stop_process(proc)
    log = copy.log()
    assert f"emergency stop: NOT armed: {reason}" in log, log
    if settings is None:
        assert "EmergencyStopEnabled is false" not in log, log


def window_text(desk: Desk, shot: Path, origin: tuple[int, int]) -> str:
    """What the host window (560x480 at `origin`) says, read by Tesseract, on one line."""
    desk.screenshot(shot)
    crop = shot.with_name(shot.stem + "-window.png")
    subprocess.run(
        ["convert", str(shot), "-crop", f"560x480+{origin[0]}+{origin[1]}", "-resize", "200%", str(crop)], check=True
    )
    done = subprocess.run(["tesseract", str(crop), "stdout"], capture_output=True, text=True, check=True)
    return " ".join(done.stdout.split())
