"""A session copy with an X display of its own (issue 26), end to end with the official SDK.

The desk (xdesk.py) stands for the operator's machine: its inner Xephyr is the operator's
display, reached "physically" through the outer Xvfb. A session provisioned with
`--own-display` starts its own Xephyr as a window on that display: its tools act there only
(its `displays` is the size asked for; a program it launches is listed by its `windows` and
not on the operator's display; its clicks land in a window on its display and never move the
operator's pointer), the operator's physical chord on the operator's display stops it, and
ending it leaves no X server, socket or program of its display. While the operator's own
(physical) pointer is busy in the session's window, its input waits and then answers
`operator-active`; injected motion there does not count. Headless (no
operator display at all), `mcec mcp --session --own-display` gives the client an Xvfb."""

from __future__ import annotations

import json
import os
import pwd
import re
import signal
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcec_e2e import (
    HANG_GUARD_S,
    Copy,
    RawStdio,
    envelope_of,
    installed_copy,
    run_cli,
    sdk_stdio,
    session_copy,
    wait_for_code,
)
from sessions_support import OPERATOR_HOTKEY, OPERATOR_SETTINGS, call, end, session_dirs
from a11y_desk import APP, SYSTEM_PYTHON
from test_consent import ALLOW_OFFSET, button
from xdesk import TESTWIN, Desk, ProbeWindow, wait_until

pytestmark = pytest.mark.anyio

OWN_SIZE = (800, 600)
CHORD = OPERATOR_HOTKEY.lower().replace("f9", "F9")
TOOLS = "displays,windows,capture,click,type,find,session-status"


def provision_own(operator: Copy, size: str = "800x600") -> dict:
    """`mcec provision --own-display` by the operator."""
    code, out, err = run_cli(operator, ["provision", "--json", "--no-mcp-server", "--own-display", size, "--commands", TOOLS])
    assert code == 0, err
    return json.loads(out)


async def grant_launch(session, desk: Desk) -> None:
    """`launch` in a session copy: only the operator's physical Allow in the consent prompt,
    which opens on the operator's display, enables it (provisioning never does)."""
    answer: dict = {}

    async def ask() -> None:
        answer.update(await call(session, "request-command-access", commands=["launch"], reason="start a test window"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask)
        allow = await button(desk, ALLOW_OFFSET)
        desk.physical("mousemove", *allow, "click", "1")
    assert answer.get("ok") is True and answer["result"]["granted"] == ["launch"], answer


def own_env(status: dict, directory: Path) -> dict[str, str]:
    """The environment of a test program on the session's own display (its cookie file)."""
    return {
        "DISPLAY": status["desktop"]["display"],
        "XAUTHORITY": str(directory / "own-display.xauth"),
        "PATH": os.environ.get("PATH", ""),
    }


def alive(pid: int) -> bool:
    """Whether `pid` is a process that has not exited (a zombie has exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def group_members(pgid: int) -> list[int]:
    """Live processes in process group `pgid`."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, IndexError, ProcessLookupError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def server_of(directory: Path) -> int:
    """The pid of the X server started with the session's authority file."""
    want = str(directory / "own-display.xauth").encode()
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        if want in argv and argv[0].rsplit(b"/", 1)[-1] in (b"Xephyr", b"Xvfb"):
            found.append(int(cmdline.parent.name))
    assert len(found) == 1, found
    return found[0]


def socket_of(display: str) -> int:
    """The inode of the display's socket in /tmp/.X11-unix (its server writes no lock file
    with -displayfd). Display numbers are reused by other servers on a shared machine, so
    "gone" means: no socket there, or another one."""
    return os.stat(f"/tmp/.X11-unix/X{display.lstrip(':')}").st_ino


def socket_gone(display: str, inode: int) -> bool:
    try:
        return socket_of(display) != inode
    except FileNotFoundError:
        return True


def pointer(desk: Desk) -> tuple[int, int]:
    out = desk.injected("getmouselocation", "--shell")
    fields = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return int(fields["X"]), int(fields["Y"])


async def test_own_display_tools_act_there_and_the_operators_stop_ends_them(operator: Copy, desk: Desk) -> None:
    handoff = provision_own(operator)
    assert handoff["desktop"] == {"own": True, "width": OWN_SIZE[0], "height": OWN_SIZE[1]}, handoff
    directory = Path(handoff["directory"])
    sess = session_copy(operator, handoff)
    probe = on_operator = None
    env = {"DISPLAY": desk.inner, "MCEC_TEST_CONSENT_TIMEOUT_MS": "30000"}
    async with sdk_stdio(sess, env_extra=env) as (session, _init):
        status = (await call(session, "session-status"))["result"]
        own = status["desktop"]
        assert own["own"] is True and (own["width"], own["height"]) == OWN_SIZE, status
        assert own["operatorDisplay"] == desk.inner and own["display"] != desk.inner, status
        assert status["emergencyStop"]["armed"] is True, status
        server_pid = server_of(directory)
        socket = socket_of(own["display"])
        try:
            # Its displays are its own server's, of the size asked for.
            displays = (await call(session, "displays"))["result"]["displays"]
            assert [(d["bounds"]["width"], d["bounds"]["height"]) for d in displays] == [OWN_SIZE], displays
            # The session's window on the operator's display, titled with its id.
            title = f"mcec session {handoff['sessionId']}"
            assert wait_until(lambda: desk.visible_window(title), HANG_GUARD_S), "no Xephyr window on the operator's display"

            # A program it launches opens on its display, not the operator's.
            await grant_launch(session, desk)
            launched = await call(
                session, "launch", path=str(TESTWIN), args=["--title", "own-launched", "--x", "400", "--y", "300"]
            )
            assert launched["ok"] is True, launched
            launched_pid = launched["result"]["pid"]
            listed = (await call(session, "windows", title="own-launched", condition="appears", timeoutMs=20000))["result"]
            assert [w["title"] for w in listed["windows"]] == ["own-launched"], listed
            assert desk.window_ids("own-launched") == [], "the launched program opened on the operator's display"
            # Accessibility reads the programs on its display, through its own bus.
            gtk = await call(session, "launch", path=SYSTEM_PYTHON, args=[str(APP)])
            assert gtk["ok"] is True, gtk
            found = await call(session, "find", window="mcec a11y main", value="Press me")
            assert found["ok"] is True and found["result"]["element"]["name"] == "Press me", found

            # A click lands in a window on its display (positive control), in none on the
            # operator's, and the operator's pointer does not move.
            probe = ProbeWindow(own_env(status, directory), "--title", "own-probe")
            on_operator = ProbeWindow(desk.inner_env(), "--title", "operator-probe", "--x", "0", "--y", "0")
            found = (await call(session, "windows", title="own-probe", condition="appears", timeoutMs=20000))["result"]["windows"]
            assert len(found) == 1, found
            box = found[0]["bounds"]
            before = pointer(desk)
            center = {"x": box["x"] + box["width"] // 2, "y": box["y"] + box["height"] // 2}
            clicked = await call(session, "click", at=center)
            assert clicked["ok"] is True, clicked
            probe.wait_for(lambda line: line.startswith("press 1"))
            typed = await call(session, "type", text="own")
            assert typed["ok"] is True, typed
            assert probe.typed(3) == "own"
            assert pointer(desk) == before, "the session's click moved the operator's pointer"
            assert not [l for l in on_operator.drain() if l.startswith(("press", "key"))], "input reached the operator's window"

            # The operator's physical chord, on the operator's display, stops the session.
            desk.physical("key", CHORD)
            assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
            refused = await call(session, "click", at={"x": 10, "y": 10})
            assert refused["error"]["code"] == "emergency-stopped", refused
        finally:
            for window in (probe, on_operator):
                if window is not None:
                    window.close()
    # The client is gone: the copy ended its display with everything in it.
    assert wait_until(lambda: not alive(server_pid), HANG_GUARD_S), "the own X server outlived the session"
    assert wait_until(lambda: not group_members(server_pid), HANG_GUARD_S), group_members(server_pid)
    assert not alive(launched_pid), "a program launched in the session outlived it"
    assert socket_gone(own["display"], socket), "the own display's socket was left behind"
    assert not (directory / "own-display.xauth").exists()
    log = sess.log()
    assert "AGENT-AUDIT: own-display-started" in log and "AGENT-AUDIT: own-display-ended" in log, log
    async with sdk_stdio(operator) as (op, _):
        ended = await end(op, handoff["sessionId"], handoff["token"])
    assert ended["ok"] is True, ended


async def test_headless_session_gets_an_xvfb_desktop_and_a_disconnect_ends_it(tmp_path: Path) -> None:
    op = installed_copy(tmp_path / "inst")
    op.write_settings(OPERATOR_SETTINGS)
    # No DISPLAY, no X sockets, no logind: a server with no desktop at all.
    async with sdk_stdio(op, mcp_args=("--session", "--own-display", "640x480")) as (session, _):
        status = (await call(session, "session-status"))["result"]
        own = status["desktop"]
        assert own["own"] is True and (own["width"], own["height"]) == (640, 480), status
        assert own["operatorDisplay"] is None, status
        assert re.fullmatch(r":\d+", own["display"]), own
        displays = (await call(session, "displays"))["result"]["displays"]
        assert [(d["bounds"]["width"], d["bounds"]["height"]) for d in displays] == [(640, 480)], displays
        capture = await call(session, "capture")
        assert capture["ok"] is True, capture
        directory = session_dirs(op)[0]
        server_pid = server_of(directory)
        socket = socket_of(own["display"])
        assert (Path(f"/proc/{server_pid}/comm").read_text().strip()) == "Xvfb"
        # With no operator keyboard the chord is not armed, and the status says so and why...
        assert status["emergencyStop"]["armed"] is False, status
        # ...but the agent acts on its own headless desktop: its click lands in a window there.
        probe = ProbeWindow(own_env(status, directory), "--title", "headless-probe")
        try:
            shown = await call(session, "windows", title="headless-probe", condition="appears", timeoutMs=20000)
            box = shown["result"]["windows"][0]["bounds"]
            center = {"x": box["x"] + box["width"] // 2, "y": box["y"] + box["height"] // 2}
            clicked = await call(session, "click", at=center)
            assert clicked["ok"] is True, clicked
            probe.wait_for(lambda line: line.startswith("press 1"))
        finally:
            probe.close()
        # `mcec stop` for its display stops it (the stop record of its own display).
        code, out, err = run_cli(op, ["stop"], env_extra={"DISPLAY": own["display"]})
        assert code == 0, (out, err)
        assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
        refused = await call(session, "click", at=center)
        assert refused["error"]["code"] == "emergency-stopped", refused
        log = (directory / "mcec.log").read_text()
        assert "AGENT-AUDIT: headless-own-display" in log and "AGENT-AUDIT: actuation-without-stop" in log, log
    assert wait_until(lambda: not alive(server_pid), HANG_GUARD_S), "the Xvfb outlived the session"
    assert wait_until(lambda: not session_dirs(op), HANG_GUARD_S), session_dirs(op)
    assert socket_gone(own["display"], socket), "the own display's socket was left behind"
    # Its display is gone, and so is the stop record that named it (the number will be reused).
    record = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".local/state/mcec/stop" / f"display-{own['display'].lstrip(':')}"
    assert not record.exists(), record


def test_a_copy_killed_with_sigkill_takes_its_display_with_it(operator: Copy) -> None:
    handoff = provision_own(operator, "640x480")
    directory = Path(handoff["directory"])
    copy = RawStdio(session_copy(operator, handoff))  # no DISPLAY: a headless Xvfb
    try:
        assert "result" in copy.initialize(), copy.stderr()
        status, is_error = envelope_of(copy.call("session-status"))
        assert not is_error, status
        display = status["result"]["desktop"]["display"]
        server_pid = server_of(directory)
        socket = socket_of(display)
        os.kill(copy.proc.pid, signal.SIGKILL)
        copy.proc.wait(timeout=HANG_GUARD_S)
    finally:
        copy.kill()
    assert wait_until(lambda: not group_members(server_pid), HANG_GUARD_S), group_members(server_pid)
    assert wait_until(lambda: socket_gone(display, socket), HANG_GUARD_S), "the own display's socket was left behind"


async def test_own_display_limit_and_bad_sizes_are_refused(tmp_path: Path) -> None:
    from mcec_e2e import manual_copy

    op = manual_copy(tmp_path / "op", settings=OPERATOR_SETTINGS + "OwnDisplaySessionsMax = 1\n")
    code, out, err = run_cli(op, ["provision", "--json", "--own-display"])
    assert code == 0, err
    assert json.loads(out)["desktop"] == {"own": True, "width": 1280, "height": 800}
    code, _, err = run_cli(op, ["provision", "--json", "--own-display"])
    assert code == 2 and "OwnDisplaySessionsMax is 1" in err, err
    code, out, err = run_cli(op, ["sessions", "list", "--json"])
    assert code == 0 and [s["ownDisplay"] for s in json.loads(out)] == ["1280x800"], out
    code, out, _ = run_cli(op, ["sessions", "list"])
    assert "own 1280x800" in out, out
    code, _, err = run_cli(op, ["provision", "--json", "--own-display", "100x100"])
    assert code == 2 and "width 100 is outside 320..=7680" in err, err
    op.write_settings(OPERATOR_SETTINGS)
    async with sdk_stdio(op) as (session, _):
        refused = await call(session, "provision-session", ownDisplay={"width": 9000})
        assert refused["error"]["code"] == "bad-arguments" and "ownDisplay" in refused["error"]["detail"], refused
        made = await call(session, "provision-session", mcpServer=False, ownDisplay={"height": 720})
        assert made["ok"] is True, made
        assert made["result"]["desktop"] == {"own": True, "width": 1280, "height": 720}
    settings = (Path(made["result"]["directory"]) / "mcec.settings").read_text()
    assert 'OwnDisplay = "1280x720"' in settings, settings
    # The operator's rule: every session gets a display of its own, asked for or not.
    op.write_settings(OPERATOR_SETTINGS + 'SessionDisplay = "own"\n')
    code, out, err = run_cli(op, ["provision", "--json"])
    assert code == 0, err
    assert json.loads(out)["desktop"] == {"own": True, "width": 1280, "height": 800}
    async with sdk_stdio(op) as (session, _):
        made = await call(session, "provision-session", mcpServer=False)
        assert made["ok"] is True and made["result"]["desktop"]["own"] is True, made


async def test_two_own_display_sessions_each_click_lands_on_its_own_display(operator: Copy, desk: Desk) -> None:
    handoffs = [provision_own(operator, "640x480") for _ in range(2)]
    copies = [session_copy(operator, h) for h in handoffs]
    env = {"DISPLAY": desk.inner}
    probes: list[ProbeWindow] = []
    try:
        async with sdk_stdio(copies[0], env_extra=env) as (one, _), sdk_stdio(copies[1], env_extra=env) as (two, _):
            sessions = (one, two)
            displays = []
            for session, handoff in zip(sessions, handoffs):
                status = (await call(session, "session-status"))["result"]
                displays.append(status["desktop"]["display"])
                probes.append(ProbeWindow(own_env(status, Path(handoff["directory"])), "--title", "own-probe"))
            assert len(set(displays + [desk.inner])) == 3, displays
            on_operator = ProbeWindow(desk.inner_env(), "--title", "operator-probe", "--x", "0", "--y", "0")
            probes.append(on_operator)
            before = pointer(desk)
            for clicker, session in enumerate(sessions):
                shown = await call(session, "windows", title="own-probe", condition="appears", timeoutMs=20000)
                box = shown["result"]["windows"][0]["bounds"]
                center = {"x": box["x"] + box["width"] // 2, "y": box["y"] + box["height"] // 2}
                assert (await call(session, "click", at=center))["ok"] is True
                probes[clicker].wait_for(lambda line: line.startswith("press 1"))
                other = probes[1 - clicker].drain()
                assert not [l for l in other if l.startswith("press")], f"session {clicker}'s click reached the other's window"
            assert not [l for l in on_operator.drain() if l.startswith("press")], "a click reached the operator's window"
            assert pointer(desk) == before, "a session's click moved the operator's pointer"
            # The chord injected inside a session's display (the operator's hand never types
            # there except through its window) stops nothing.
            status = (await call(one, "session-status"))["result"]
            subprocess.run(
                ["xdotool", "key", CHORD], env=own_env(status, Path(handoffs[0]["directory"])), check=True, timeout=30
            )
            await anyio.sleep(0.5)
            assert (await call(one, "displays"))["ok"] is True, "a chord injected in the session's display stopped it"
            assert (await call(two, "displays"))["ok"] is True
            # One physical chord on the operator's display stops both.
            desk.physical("key", CHORD)
            for session in sessions:
                assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
    finally:
        for probe in probes:
            probe.close()


async def test_a_missing_x_server_is_no_desktop_naming_the_package(operator: Copy, tmp_path: Path) -> None:
    handoff = provision_own(operator, "640x480")
    empty = tmp_path / "no-x-servers"
    empty.mkdir()
    # Headless, with no Xvfb on PATH: every desktop tool says what to install, nothing acts.
    async with sdk_stdio(session_copy(operator, handoff), env_extra={"PATH": str(empty)}) as (session, _):
        refused = await call(session, "displays")
        assert refused["error"]["code"] == "no-desktop", refused
        assert "apt-get install xvfb" in refused["error"]["detail"], refused
        assert "never acts on the operator's display" in refused["error"]["detail"], refused
    assert "AGENT-AUDIT: own-display-failed" in session_copy(operator, handoff).log()
    assert not (Path(handoff["directory"]) / "own-display.xauth").exists()


async def test_the_agents_input_waits_while_the_operators_hand_is_in_its_window(operator: Copy, desk: Desk) -> None:
    handoff = provision_own(operator, "640x480")
    env = {"DISPLAY": desk.inner}
    async with sdk_stdio(session_copy(operator, handoff), env_extra=env, client_name="hand-test-agent") as (session, _):
        # The window on the operator's display is titled with the session id and, once the
        # client has said who it is, with its name and version (the SDK's `initialized`
        # notification is handled with the client's next message).
        assert (await call(session, "session-status"))["ok"] is True
        titled = f"mcec session {handoff['sessionId']}: hand-test-agent 1.0"
        assert wait_until(lambda: desk.visible_window(titled), HANG_GUARD_S), "the window was not named after the client"
        x, y = desk.window_origin(titled)
        inside = (x + 320, y + 240)  # the middle of the 640x480 window (the inner display sits at 0,0 on the outer)
        outside = (x + 640 + 100, y + 240)
        assert outside[0] < 1024, "the test needs room right of the session's window"
        target = {"x": 20, "y": 20}

        # Positive control: nobody's hand in the window, the click is sent.
        assert (await call(session, "click", at=target))["ok"] is True

        # Software moving the operator's pointer in the window is not the operator's hand.
        desk.injected("mousemove", str(inside[0]), str(inside[1]))
        for step in range(10):
            desk.injected("mousemove", str(inside[0] + step), str(inside[1]))
        assert (await call(session, "click", at=target))["ok"] is True, "injected motion made the agent wait"

        # The operator's physical hand moves in the window for longer than mcec waits.
        done = anyio.Event()

        def wiggle() -> None:
            step = 0
            while not done.is_set():
                desk.physical("mousemove", str(inside[0] + step % 40), str(inside[1] + step % 7))
                step += 1
                time.sleep(0.05)

        for step in range(5):
            desk.physical("mousemove", str(inside[0] - step), str(inside[1]))
        time.sleep(0.2)
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.to_thread.run_sync, wiggle)
            try:
                started = time.monotonic()
                refused = await call(session, "click", at=target)
                waited = time.monotonic() - started
            finally:
                done.set()
        assert refused["ok"] is False and refused["error"]["code"] == "operator-active", refused
        assert waited >= 4.5, f"answered operator-active after {waited:.1f} s, before its 5 s wait"

        # The hand leaves the window: 2 s later the agent's click goes through.
        desk.physical("mousemove", str(outside[0]), str(outside[1]))
        time.sleep(2.5)
        assert (await call(session, "click", at=target))["ok"] is True


def test_provisionings_at_once_never_pass_the_own_display_limit(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from mcec_e2e import manual_copy

    op = manual_copy(tmp_path / "op", settings=OPERATOR_SETTINGS + "OwnDisplaySessionsMax = 2\n")
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda _: run_cli(op, ["provision", "--json", "--own-display", "640x480"]), range(6)))
    made = [json.loads(out) for code, out, _ in results if code == 0]
    refused = [err for code, _, err in results if code != 0]
    assert len(made) == 2, results
    assert len(refused) == 4 and all("OwnDisplaySessionsMax is 2" in err for err in refused), refused
    code, out, err = run_cli(op, ["sessions", "list", "--json"])
    assert code == 0 and len(json.loads(out)) == 2, out
