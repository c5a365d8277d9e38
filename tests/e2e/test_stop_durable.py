"""The stop outlives the process: a physical stop is recorded for the display the moment it
engages; a relaunched mcec (after SIGTERM or SIGKILL, with another HOME and another spelling
of DISPLAY) comes up stopped with the banner and the prompt; a stop seen by one of two
running `mcec mcp` holds in both; the host and a session copy started later come up stopped;
each running mcec is re-armed by a physical click on its own prompt, and the one re-armed
first is not stopped again by the record the other keeps; a record deleted by a program, in
any rhythm, is written back and re-arms nothing; a record that cannot be read is a stop; a
place where no record can be written keeps a stop latched (and says so on the banner) and
keeps a relaunch from acting until a record can be written there.

Real `mcec mcp` processes on the inner display of an Xvfb + Xephyr desk, driven by the
official MCP Python SDK (raw stdio only for the process that is killed by a signal), with
"physical" input sent through the outer display."""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import time
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import pytest

from mcec_e2e import (
    REPO,
    Copy,
    code_of,
    envelope_of,
    host_settings,
    manual_copy,
    sdk_envelope,
    sdk_http,
    sdk_stdio,
    session_copy,
    start_host,
    wait_for_code,
)
from xdesk import Desk, wait_until

PROMPT_TITLE = "mcec: emergency stop"
REARM_OFFSET = (41, 130)  # the prompt's `Re-arm` button, from the prompt window's top-left corner
CHORD = "ctrl+alt+shift+s"
ARTIFACTS = REPO / "target" / "test-artifacts"
RECORDED = "a stop is recorded for this display"

pytestmark = pytest.mark.anyio


def stop_copy(root: Path, hotkey: str | None = None) -> Copy:
    settings = "AgentCommandsEnabled = true\n"
    if hotkey:
        settings += f'EmergencyStopHotkey = "{hotkey}"\n'
    return manual_copy(root, settings=settings, commands=("displays", "click"))


def record_of(desk: Desk) -> Path:
    """Where mcec keeps the inner display's stop record (the home from the user database)."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    return home / ".local/state/mcec/stop" / f"display-{desk.inner.lstrip(':')}"


@asynccontextmanager
async def agent(copy: Copy, desk: Desk, display: str | None = None):
    async with sdk_stdio(copy, env_extra={"DISPLAY": display or desk.inner}) as (session, _init):
        yield session


def is_red(rgb: tuple[int, int, int]) -> bool:
    r, g, b = rgb
    return r > 150 and g < 90 and b < 90


def banner_and_prompt_shown(desk: Desk, name: str) -> None:
    shot = ARTIFACTS / f"{name}.png"
    assert wait_until(lambda: is_red(desk.pixel(desk.screenshot(shot), 512, 10)), 10), (
        f"no red banner at the top: pixel {desk.pixel(shot, 512, 10)}"
    )
    assert wait_until(lambda: desk.visible_window(PROMPT_TITLE), 10), "the re-arm prompt did not open"


def click_rearm(desk: Desk) -> None:
    """The operator's own click on the (topmost) prompt's Re-arm button, once it is drawn."""
    assert wait_until(lambda: desk.visible_window(PROMPT_TITLE), 10), "the re-arm prompt did not open"
    origin = desk.window_origin(PROMPT_TITLE)
    assert origin is not None
    button = (origin[0] + REARM_OFFSET[0], origin[1] + REARM_OFFSET[1])
    shot = ARTIFACTS / "durable-prompt.png"
    assert wait_until(lambda: desk.pixel(desk.screenshot(shot), *button) != (0, 0, 0)), "prompt not drawn"
    # A click counts once the prompt has been on screen a moment (`SHOW_SETTLE`, 0.3 s).
    desk.physical("sleep", "0.6", "mousemove", str(button[0]), str(button[1]), "click", "1")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
async def test_a_physical_stop_survives_a_signal_and_a_relaunch_comes_up_stopped(
    tmp_path: Path, desk: Desk, raw_stdio, sig: signal.Signals
) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    assert not record.exists(), "the harness starts every display without a record"
    first = raw_stdio(copy, {"DISPLAY": desk.inner})
    first.initialize()
    assert envelope_of(first.call("displays", id=2))[0]["ok"], first.stderr()
    desk.physical("key", CHORD)
    assert wait_until(lambda: record.exists(), 10), "the stop was not recorded"
    assert envelope_of(first.call("displays", id=3))[0]["error"]["code"] == "emergency-stopped"
    first.proc.send_signal(sig)
    # SIGTERM is handled (calls stopped, input released, exit 0); SIGKILL cannot be.
    assert first.proc.wait(timeout=30) == (0 if sig == signal.SIGTERM else -sig)
    assert record.read_text().startswith("mcec-stop v1\nreason: operator pressed Ctrl+Alt+Shift+S"), record.read_text()

    # The same copy, relaunched with its own HOME/XDG dirs and another spelling of the display.
    async with agent(copy, desk, display=f"{desk.inner}.0") as s:
        for tool in ("displays", "click", "session-status", "provision-session", "end-session"):
            assert await code_of(s, tool, {"at": {"x": 5, "y": 5}} if tool == "click" else {}) == "emergency-stopped", tool
        banner_and_prompt_shown(desk, f"durable-relaunch-{sig.name}")
        click_rearm(desk)
        assert await wait_for_code(s, None) is None, "a physical re-arm did not re-arm the relaunched mcec"
    assert not record.exists(), "the re-arm did not remove the record"
    assert f"emergency-stop; engaged; reason={RECORDED}" in copy.log(), copy.log()

    # And the next one starts armed.
    async with agent(copy, desk) as s:
        assert await code_of(s, "displays") is None


async def test_a_stop_seen_by_one_of_two_running_mcec_holds_in_both_until_the_one_rearm(
    tmp_path: Path, desk: Desk
) -> None:
    # `other` listens for a different chord, so it only learns of this stop from the record.
    mine, other = stop_copy(tmp_path / "a"), stop_copy(tmp_path / "b", hotkey="Ctrl+Alt+Shift+X")
    async with AsyncExitStack() as stack:
        a = await stack.enter_async_context(agent(mine, desk))
        b = await stack.enter_async_context(agent(other, desk))
        assert await code_of(a, "displays") is None and await code_of(b, "displays") is None
        desk.physical("key", CHORD)
        assert await wait_for_code(a, "emergency-stopped") == "emergency-stopped"
        assert await wait_for_code(b, "emergency-stopped") == "emergency-stopped"
        assert f"reason={RECORDED}" in other.log(), other.log()
        assert "reason=operator pressed Ctrl+Alt+Shift+S" in mine.log(), mine.log()

        # One prompt for the display (its guard's): one physical click re-arms both, each on its
        # own monitor's word, and the record goes (issue 25).
        assert wait_until(lambda: len(desk.visible_windows(PROMPT_TITLE)) == 1, 10), "not one re-arm prompt"
        click_rearm(desk)
        assert await wait_for_code(a, None) is None, f"the first mcec stayed stopped:\n{mine.log()}"
        assert await wait_for_code(b, None) is None, f"the second mcec stayed stopped:\n{other.log()}"
        assert wait_until(lambda: not record_of(desk).exists()), "the re-arm left the record"
        c = await stack.enter_async_context(agent(mine, desk))
        assert await code_of(c, "displays") is None, "a new mcec after the re-arm is not armed"
    assert "re-armed by the operator" in mine.log()
    assert "re-armed by the operator" in other.log()


def delete(record: Path) -> None:
    """What a program running as the user can do to the record."""
    record.unlink(missing_ok=True)


@pytest.mark.parametrize("rhythm", ["twice-10ms-apart", "rm-every-50ms-for-3s", "0.3s-after-a-physical-key"])
async def test_a_deleted_record_is_written_back_and_the_stop_holds_here_and_in_a_relaunch(
    tmp_path: Path, desk: Desk, rhythm: str
) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    async with agent(copy, desk) as s:
        assert await code_of(s, "click", {"at": {"x": 5, "y": 5}}) is None, "the positive control: it acts"
        desk.physical("key", CHORD)
        assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped"
        assert wait_until(record.exists, 10), "the stop was not recorded"
        if rhythm == "twice-10ms-apart":
            for round in range(3):
                delete(record)
                await anyio.sleep(0.01)
                delete(record)
                assert wait_until(record.exists, 10), f"round {round}: the record was not written back"
        elif rhythm == "rm-every-50ms-for-3s":
            end = time.monotonic() + 3
            while time.monotonic() < end:
                delete(record)
                await anyio.sleep(0.05)
        else:
            await anyio.sleep(2.5)  # the chord is older than any "recent input" window
            desk.physical("key", "shift")  # the operator's own key, anywhere
            await anyio.sleep(0.3)
            delete(record)
        assert wait_until(record.exists, 10), "the record was not written back after the last delete"
        assert await code_of(s, "displays") == "emergency-stopped"
        assert await code_of(s, "click", {"at": {"x": 5, "y": 5}}) == "emergency-stopped"
    assert record.exists(), "the stop's record did not outlive the process"
    assert "stop-record-written" in copy.log(), copy.log()
    assert "re-armed" not in copy.log(), copy.log()
    async with agent(copy, desk) as s:
        assert await code_of(s, "displays") == "emergency-stopped", "a relaunch after the deletions is armed"
        click_rearm(desk)  # the way out: the operator's own click on the prompt
        assert await wait_for_code(s, None) is None
    assert not record.exists()


async def test_two_mcec_on_one_display_hold_the_record_until_one_rearm_rearms_all(
    tmp_path: Path, desk: Desk
) -> None:
    copies = [stop_copy(tmp_path / "a"), stop_copy(tmp_path / "b")]
    record = record_of(desk)
    async with AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(agent(c, desk)) for c in copies]
        for s in sessions:
            assert await code_of(s, "displays") is None
        desk.physical("key", CHORD)  # both latch on their own monitor
        for s in sessions:
            assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped"
        assert wait_until(record.exists, 10), "the stop was not recorded"
        for c in copies:
            assert wait_until(lambda: "reason=operator pressed Ctrl+Alt+Shift+S" in c.log(), 10), c.log()

        # The stopped processes write a deleted record back, whichever of them is the guard.
        delete(record)
        assert wait_until(record.exists, 10), "the record was not written back"
        assert any("stop-record-written" in c.log() for c in copies), [c.log() for c in copies]
        fresh = await stack.enter_async_context(agent(stop_copy(tmp_path / "c"), desk))
        assert await code_of(fresh, "displays") == "emergency-stopped", "a relaunch while they are stopped is armed"

        # One physical click in the one prompt re-arms every one of them, and the record goes.
        click_rearm(desk)
        for s in [*sessions, fresh]:
            assert await wait_for_code(s, None) is None, [c.log() for c in copies]
        assert wait_until(lambda: not record.exists(), 10), "the re-arm left the record"
        assert await code_of(sessions[0], "click", {"at": {"x": 5, "y": 5}}) is None


async def test_a_record_deleted_without_a_physical_rearm_rearms_nothing_and_comes_back(
    tmp_path: Path, desk: Desk
) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    async with agent(copy, desk) as s:
        desk.physical("key", CHORD)
        assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped"
        assert wait_until(lambda: record.exists(), 10), "the stop was not recorded"
        record.unlink()  # what a program running as the user could do
        assert wait_until(lambda: "stop-record-written" in copy.log(), 10), copy.log()
        assert await code_of(s, "displays") == "emergency-stopped"
        assert wait_until(lambda: record.exists(), 10), "the running mcec did not write the record back"
    assert "re-armed" not in copy.log()


@pytest.mark.parametrize("garbage", [b"not a stop record\n", b"\xff\xfe\x00", b""], ids=["text", "binary", "empty"])
async def test_an_unreadable_record_is_a_stop(tmp_path: Path, desk: Desk, garbage: bytes) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    # The positive control: with no record this copy starts armed.
    async with agent(copy, desk) as s:
        assert await code_of(s, "displays") is None
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_bytes(garbage)
    async with agent(copy, desk) as s:
        assert await code_of(s, "displays") == "emergency-stopped"
        assert await code_of(s, "click", {"at": {"x": 5, "y": 5}}) == "emergency-stopped"
        banner_and_prompt_shown(desk, "durable-garbage")
        click_rearm(desk)
        assert await wait_for_code(s, None) is None
    assert "the stop record cannot be read" in copy.log(), copy.log()
    assert not record.exists()


async def test_a_recorded_stop_holds_in_the_host_and_in_a_session_copy(
    tmp_path: Path, desk: Desk, raw_stdio, port: int, token: str
) -> None:
    settings = host_settings(port, token, extra="AllowSessionProvisioning = true\n")
    operator = manual_copy(tmp_path / "op", settings=settings, commands=("displays",))
    operator.extra_env["DISPLAY"] = desk.inner

    async def host_answers() -> str | None:
        host = start_host(operator, port, token)
        try:
            async with sdk_http(host.url, host.auth_headers()) as (s, _):
                return await code_of(s, "displays")
        finally:
            host.stop()

    # The positive controls, before any stop: the host and a session copy answer.
    assert await host_answers() is None
    async with agent(operator, desk) as s:
        handoff = sdk_envelope(await s.call_tool("provision-session", {"mcpServer": False}))["result"]
    sess = session_copy(operator, handoff)
    async with agent(sess, desk) as s:
        assert await code_of(s, "session-status") is None

    first = raw_stdio(operator, {"DISPLAY": desk.inner})
    first.initialize()
    desk.physical("key", CHORD)
    assert wait_until(lambda: record_of(desk).exists(), 10), "the stop was not recorded"
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(timeout=30)

    assert await host_answers() == "emergency-stopped"
    async with agent(sess, desk) as s:
        assert await code_of(s, "session-status") == "emergency-stopped"


STOP_DIR_SCRIPT = (
    'mkdir -p "$1" && mount --bind "$1" "$1" && mount -o remount,bind,"$2" "$1" '
    '&& echo $$ > "$3" && shift 3 && exec "$@"'
)


class StopDirMount:
    """The stop directory as one mcec process sees it: a bind mount of it in a mount namespace
    of its own (`unshare -m`), read-only or writable. The tests run as root, for whom a mode
    0500 directory is still writable; a read-only mount is not, and it touches no other
    process (other tests on other displays share the real directory)."""

    def __init__(self, desk: Desk, root: Path, mode: str) -> None:
        self.dir = record_of(desk).parent
        self.dir.mkdir(parents=True, exist_ok=True)
        root.mkdir(parents=True, exist_ok=True)
        self.pid_file = root / "mcec.pid"
        self.mode = mode

    def wrapper(self) -> list[str]:
        return ["unshare", "-m", "--propagation", "private", "sh", "-c", STOP_DIR_SCRIPT, "sh",
                str(self.dir), self.mode, str(self.pid_file)]

    def remount(self, mode: str) -> None:
        """Flip the mount. A read-only remount is refused (busy) while mcec holds a file open
        for writing there, as its write probe does for a moment now and then: try again."""
        pid = self.pid_file.read_text().strip()
        argv = ["nsenter", "-t", pid, "-m", "mount", "-o", f"remount,bind,{mode}", str(self.dir)]
        for _ in range(100):
            done = subprocess.run(argv, capture_output=True, text=True)
            if done.returncode == 0:
                return
            time.sleep(0.01)
        raise AssertionError(f"{' '.join(argv)}: {done.stderr}")


@asynccontextmanager
async def agent_in(copy: Copy, desk: Desk, mount: StopDirMount):
    async with sdk_stdio(copy, env_extra={"DISPLAY": desk.inner}, wrapper=mount.wrapper()) as (session, _init):
        yield session


async def click_code(s) -> tuple[str | None, str]:
    env = sdk_envelope(await s.call_tool("click", {"at": {"x": 5, "y": 5}}))
    return (None, "") if env["ok"] else (env["error"]["code"], env["error"]["detail"])


async def wait_for_click(s, want: str | None) -> tuple[str | None, str]:
    got: tuple[str | None, str] = ("never asked", "")
    for _ in range(100):
        got = await click_code(s)
        if got[0] == want:
            break
        await anyio.sleep(0.05)
    return got


def banner_text(desk: Desk, name: str) -> str:
    """What the top of the screen (the overlay's strip) says, read by Tesseract."""
    shot = desk.screenshot(ARTIFACTS / f"{name}.png")
    strip = ARTIFACTS / f"{name}-strip.png"
    subprocess.run(["convert", str(shot), "-crop", "640x200+192+0", "-resize", "200%", str(strip)], check=True)
    done = subprocess.run(["tesseract", str(strip), "stdout"], capture_output=True, text=True, check=True)
    return " ".join(done.stdout.split())


async def test_a_stop_that_cannot_be_recorded_stays_latched_and_says_so_and_a_relaunch_does_not_act(
    tmp_path: Path, desk: Desk
) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    first_dir = StopDirMount(desk, tmp_path / "first", "rw")
    async with agent_in(copy, desk, first_dir) as first:
        assert (await click_code(first))[0] is None, "the positive control: it acts while a stop can be recorded"
        first_dir.remount("ro")  # the stop directory turns read-only before the chord
        desk.physical("key", CHORD)
        assert await wait_for_code(first, "emergency-stopped") == "emergency-stopped"
        assert wait_until(lambda: "stop-record-unwritten" in copy.log(), 10), copy.log()
        assert not record.exists()
        assert wait_until(lambda: "NOT RECORDED" in banner_text(desk, "durable-unrecorded"), 10), banner_text(
            desk, "durable-unrecorded"
        )
        assert await code_of(first, "displays") == "emergency-stopped"
        assert (await click_code(first))[0] == "emergency-stopped"

        # A relaunch while the directory is still read-only: observation only, and it says why.
        second_dir = StopDirMount(desk, tmp_path / "second", "ro")
        async with agent_in(copy, desk, second_dir) as second:
            assert await code_of(second, "displays") is None
            code, detail = await click_code(second)
            assert code == "emergency-stop-unavailable", (code, detail)
            assert str(record.parent) in detail and "Read-only file system" in detail, detail
            assert (await click_code(first))[0] == "emergency-stopped", "the unrecorded stop did not stay latched"
    # The stopped process is gone; once a record can be written again the relaunch acts.
    third_dir = StopDirMount(desk, tmp_path / "third", "ro")
    async with agent_in(copy, desk, third_dir) as third:
        assert (await click_code(third))[0] == "emergency-stop-unavailable"
        third_dir.remount("rw")
        code, detail = await wait_for_click(third, None)
        assert code is None, (code, detail, copy.log())
    assert "stop-record-usable" in copy.log(), copy.log()


@pytest.mark.parametrize("planted", ["directory", "fifo"])
async def test_something_planted_in_the_records_place_keeps_a_relaunch_from_acting_until_it_goes(
    tmp_path: Path, desk: Desk, planted: str
) -> None:
    copy = stop_copy(tmp_path / "c")
    record = record_of(desk)
    record.parent.mkdir(parents=True, exist_ok=True)
    if planted == "directory":
        record.mkdir()
    else:
        os.mkfifo(record)
    try:
        async with agent(copy, desk) as s:
            assert await code_of(s, "displays") is None, "observation still works"
            code, detail = await click_code(s)
            assert code == "emergency-stop-unavailable", (code, detail)
            assert str(record) in detail and "not a stop record" in detail, detail
            if planted == "directory":
                record.rmdir()
            else:
                record.unlink()
            code, detail = await wait_for_click(s, None)
            assert code is None, (code, detail, copy.log())
    finally:
        if record.is_dir():
            record.rmdir()
        elif record.exists() and not record.is_file():
            record.unlink()
