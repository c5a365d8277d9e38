"""On a Wayland session's X server the stop must not claim to be armed (issue 16).

A real Wayland session: headless sway 1.7 starting XWayland 22.1 (`waydesk.py`), with the real
`mcec mcp` driven through the official MCP Python SDK. There, actuation answers
`emergency-stop-unavailable` with the Wayland reason, observation works, `session-status` and
the log say why; a chord typed through Wayland's virtual keyboard (`wtype`), which the old
monitor took for the operator's own, latches nothing; with
`UnsafeAllowActuationWithoutStopOnWayland` the agent acts, and the start and each tool's first
use are audited. The positive control runs the same calls on a plain
Xvfb, where the stop arms and the unsafe key changes nothing.

mcec takes the X11 path here because its environment has no `WAYLAND_DISPLAY` (as a program of
the session's X server may not), or on a compositor that offers no wlroots protocol (GNOME,
KDE). With the session's `WAYLAND_DISPLAY`, sway (a wlroots compositor) is served by the
Wayland backend without IPC instead (`test_wlroots.py`); one test here checks that choice on
this session too.

Build first: `cargo build -p mcec && cargo build -p mcec-desktop-x11 --bin mcec-testwin`."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import anyio
import pytest

from mcec_e2e import Copy, audit_lines, manual_copy, sdk_envelope, sdk_stdio
from waydesk import WaylandDesk
from xdesk import ProbeWindow, Screen

COMMANDS = ("displays", "windows", "capture", "click", "type", "key")
WAYLAND_REASON = "this is a Wayland session; the X11 stop cannot see your keyboard here"
UNSAFE = "UnsafeAllowActuationWithoutStopOnWayland = true\n"

pytestmark = pytest.mark.anyio


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def wayland() -> Iterator[WaylandDesk]:
    with WaylandDesk() as desk:
        yield desk


@pytest.fixture(scope="module")
def xvfb() -> Iterator[Screen]:
    with Screen() as s:
        yield s


def open_probe(env: dict[str, str], name: str) -> ProbeWindow:
    """`mcec-testwin` named `name` (class and title) on the display `env` names."""
    return ProbeWindow(env, "--class", name, "--title", name)


def inputs(win: ProbeWindow) -> list[str]:
    """Input events printed so far (presses, releases, keys)."""
    return [x for x in win.drain(0.1) if x.split(" ", 1)[0] in ("press", "release", "key")]


@pytest.fixture
def windows() -> Iterator[Callable[[dict[str, str], str], ProbeWindow]]:
    opened: list[ProbeWindow] = []

    def open_window(env: dict[str, str], name: str) -> ProbeWindow:
        w = open_probe(env, name)
        opened.append(w)
        return w

    yield open_window
    for w in opened:
        w.close()


def copy_with(tmp_path: Path, extra: str = "", name: str = "c") -> Copy:
    return manual_copy(tmp_path / name, settings="AgentCommandsEnabled = true\n" + extra, commands=COMMANDS)


async def call(session: Any, tool: str, args: dict | None = None) -> tuple[dict, Any]:
    result = await session.call_tool(tool, args or {})
    return sdk_envelope(result), result


async def ok(session: Any, tool: str, args: dict | None = None) -> Any:
    env, result = await call(session, tool, args)
    assert env["ok"] and not result.is_error, f"{tool} {args}: {env}"
    return env["result"]


ACTUATIONS = (
    ("click", {"at": {"x": 20, "y": 20}, "className": "Wayfarer"}),
    ("key", {"keys": "a"}),
    ("type", {"text": "hi"}),
)


async def observation_works(session: Any, window: str) -> None:
    displays = await ok(session, "displays")
    assert displays["displays"], displays
    listed = await ok(session, "windows", {"className": window})
    assert [w["className"] for w in listed["windows"]] == [window], listed
    env, result = await call(session, "capture")
    assert env["ok"], env
    assert [c.mime_type for c in result.content if getattr(c, "type", None) == "image"] == ["image/png"]


# --------------------------------------------------------------------------- XWayland


@pytest.mark.parametrize("from_session", [True, False], ids=["session-type-env", "server-signals-only"])
async def test_actuation_is_refused_on_xwayland_and_observation_works(
    tmp_path: Path, wayland: WaylandDesk, windows, from_session: bool
) -> None:
    """With the session's XDG_SESSION_TYPE=wayland beside DISPLAY, and with DISPLAY alone (then
    only what the X server itself shows, its `XWAYLAND0` output, gives it away)."""
    copy = copy_with(tmp_path)
    win = windows(wayland.env(), "Wayfarer")
    env_extra = wayland.env(XDG_SESSION_TYPE="wayland") if from_session else wayland.env()
    async with sdk_stdio(copy, env_extra=env_extra) as (session, _):
        for tool, args in ACTUATIONS:
            env, result = await call(session, tool, args)
            assert result.is_error and env["ok"] is False, f"{tool} acted on XWayland: {env}"
            assert env.get("error", {}).get("code") == "emergency-stop-unavailable", env
            detail = env["error"]["detail"]
            assert WAYLAND_REASON in detail, detail
            assert "RandR output XWAYLAND" in detail, detail
            assert ("XDG_SESSION_TYPE=wayland" in detail) == from_session, detail
            assert "X11 session" in detail, detail
        await observation_works(session, "Wayfarer")
        status = await ok(session, "session-status")
        stop = status["emergencyStop"]
        assert stop["armed"] is False and stop["actuationAllowed"] is False, stop
        assert WAYLAND_REASON in stop["status"], stop
        assert status["refusals"] == {"emergency-stop-unavailable": 3}, status
    assert inputs(win) == [], "a refused call still reached the window"
    log = copy.log()
    assert WAYLAND_REASON in log
    assert "emergency stop: armed" not in log
    audits = audit_lines(log)
    assert any("emergency-stop-unavailable" in line and WAYLAND_REASON in line for line in audits), audits
    assert not any("actuation-without-stop" in line for line in audits), audits


async def test_the_unsafe_setting_lets_agents_act_without_a_stop_and_is_audited(
    tmp_path: Path, wayland: WaylandDesk, windows
) -> None:
    copy = copy_with(tmp_path, UNSAFE)
    win = windows(wayland.env(), "Wayfarer")
    async with sdk_stdio(copy, env_extra=wayland.env()) as (session, _):
        await ok(session, "click", {"at": {"x": 20, "y": 20}, "className": "Wayfarer"})
        assert win.wait_for(lambda line: line.startswith("press")).startswith("press 1 20 20")
        await ok(session, "click", {"at": {"x": 30, "y": 30}, "className": "Wayfarer"})
        await ok(session, "key", {"keys": "a"})
        await ok(session, "type", {"text": "hi"})
        await observation_works(session, "Wayfarer")
        stop = (await ok(session, "session-status"))["emergencyStop"]
        assert stop["armed"] is False and stop["actuationAllowed"] is True, stop
        assert "NOT armed" in stop["status"] and WAYLAND_REASON in stop["status"], stop
        assert "UnsafeAllowActuationWithoutStopOnWayland" in stop["status"], stop
    audits = audit_lines(copy.log())
    start = [line for line in audits if "unsafe-actuation-without-stop" in line]
    assert len(start) == 1 and WAYLAND_REASON in start[0], audits
    first_use = [line for line in audits if "actuation-without-stop" in line and "first use" in line]
    assert [line.split("first use of ")[1].split(";")[0] for line in first_use] == ["click", "key", "type"], audits
    assert "emergency stop: armed" not in copy.log()


def type_chord_until_seen(wayland: WaylandDesk, win: ProbeWindow, chord: list[str]) -> None:
    """Type `chord` with wtype until the X client reports its `s`. Right after a window maps,
    sway sometimes delivers only the releases of the first sequence (focus and wtype's keymap
    are still settling); every chord typed is one more chance for a monitor to latch, so a
    repeat only makes the negative check below stricter."""
    for _ in range(5):
        typed = wayland.wayland_client("wtype", *chord)
        assert typed.returncode == 0, typed.stderr
        if any(line.startswith("key ") and line.split()[3] in ("53", "73") for line in win.drain(1.0)):
            return
    raise AssertionError("five wtype chords never reached the X client")


async def test_a_wayland_virtual_keyboard_cannot_press_the_stop(tmp_path: Path, wayland: WaylandDesk, windows) -> None:
    """Keys from Wayland's virtual-keyboard protocol (`wtype`, what any agent with a Wayland
    input tool sends) reach X clients from an `xwayland-keyboard` device, as the operator's own
    keys do. Before mcec knew XWayland, its monitor took them for physical and the injected
    chord latched the stop (and a Space could re-arm it). Now no monitor listens there: the
    chord changes nothing and actuation stays unavailable, never "stopped"."""
    if shutil.which("wtype") is None:
        pytest.fail("wtype is missing; run scripts/test (it installs it)")
    copy = copy_with(tmp_path)
    win = windows(wayland.env(), "Wayfarer")
    # Real key presses for each modifier (`-M` would only set the modifier state). wtype brings
    # its own keymap (keycode 9 = Control_L, ...); typing the chord once before mcec starts
    # leaves that keymap on XWayland, so a monitor reading it would know these keys.
    chord = ["-P", "Control_L", "-P", "Alt_L", "-P", "Shift_L", "-k", "s"]
    chord += ["-p", "Shift_L", "-p", "Alt_L", "-p", "Control_L"]
    type_chord_until_seen(wayland, win, chord)
    async with sdk_stdio(copy, env_extra=wayland.env(XDG_SESSION_TYPE="wayland")) as (session, _):
        # Positive control: the whole chord, its `s` last, reached an X client of the session.
        type_chord_until_seen(wayland, win, chord)
        env, _ = await call(session, "click", {"at": {"x": 20, "y": 20}, "className": "Wayfarer"})
        assert env.get("error", {}).get("code") == "emergency-stop-unavailable", env
        status = await ok(session, "session-status")
        assert status["emergencyStopped"] is False and status["stops"] == [], status
    assert not any("emergency-stop" in line and "engaged" in line for line in audit_lines(copy.log()))


async def test_turning_the_stop_off_does_not_unlock_xwayland(
    tmp_path: Path, wayland: WaylandDesk, xvfb: Screen
) -> None:
    """`EmergencyStopEnabled = false` lets agents act on a plain X server (and the status says
    the stop is not armed); on XWayland only the key that names the risk does."""
    off = "EmergencyStopEnabled = false\n"
    async with sdk_stdio(copy_with(tmp_path, off, "x11"), env_extra=xvfb.env()) as (session, _):
        await ok(session, "key", {"keys": "a"})
        stop = (await ok(session, "session-status"))["emergencyStop"]
        assert stop["armed"] is False and stop["actuationAllowed"] is True, stop
        assert "EmergencyStopEnabled is false" in stop["status"], stop
    async with sdk_stdio(copy_with(tmp_path, off, "wl"), env_extra=wayland.env()) as (session, _):
        env, _ = await call(session, "key", {"keys": "a"})
        assert env.get("error", {}).get("code") == "emergency-stop-unavailable", env
        assert WAYLAND_REASON in env["error"]["detail"], env


async def test_with_the_sessions_wayland_display_the_wlroots_compositor_is_served_and_named(
    tmp_path: Path, wayland: WaylandDesk, windows
) -> None:
    """The session's own environment (`WAYLAND_DISPLAY`, no `SWAYSOCK`): sway offers the
    wlroots protocols, so mcec serves the Wayland display, lists the XWayland window through
    the foreign-toplevel list (no `bounds` there) and refuses actuation naming the compositor."""
    copy = copy_with(tmp_path)
    win = windows(wayland.env(), "Wayfarer")
    async with sdk_stdio(copy, env_extra=wayland.session_env()) as (session, _):
        env, _ = await call(session, "click", {"at": {"x": 20, "y": 20}})
        assert env.get("error", {}).get("code") == "emergency-stop-unavailable", env
        assert "`sway`" in env["error"]["detail"] and WAYLAND_REASON not in env["error"]["detail"], env
        listed = await ok(session, "windows", {"title": "Wayfarer"})
        assert [w["title"] for w in listed["windows"]] == ["Wayfarer"], listed
        assert "bounds" not in listed["windows"][0] and listed["windows"][0]["boundsUnavailable"], listed
    assert inputs(win) == [], "a refused call still reached the window"


def overlay_rect(wayland: WaylandDesk) -> dict | None:
    """mcec's overlay on XWayland as the X server places it (xdotool, not mcec), if mapped."""
    found = subprocess.run(["xdotool", "search", "--onlyvisible", "--class", "mcec-overlay"],
                           env=wayland.env(), capture_output=True, text=True, timeout=30)
    ids = found.stdout.split()
    if not ids:
        return None
    shell = subprocess.run(["xdotool", "getwindowgeometry", "--shell", ids[0]],
                           env=wayland.env(), capture_output=True, text=True, timeout=30).stdout
    geo = dict(line.split("=", 1) for line in shell.split())
    return {"x": int(geo["X"]), "y": int(geo["Y"]), "width": int(geo["WIDTH"]), "height": int(geo["HEIGHT"])}


async def test_on_the_wlroots_backend_mcecs_xwayland_windows_are_blanked_where_they_are(
    tmp_path: Path, wayland: WaylandDesk, windows
) -> None:
    """The foreign-toplevel list has no geometry, but mcec's own windows are X11 windows on
    the compositor's XWayland, whose X server says where they are: a capture blanks the
    overlay's rectangle, not the whole output."""
    windows(wayland.env(), "Wayfarer")
    async with sdk_stdio(copy_with(tmp_path), env_extra=wayland.session_env()) as (session, _):
        env, _ = await call(session, "click", {"at": {"x": 1, "y": 1}})
        assert "`sway`" in env["error"]["detail"], f"not the wlroots backend: {env}"
        full = (await ok(session, "displays"))["virtualBounds"]
        deadline = time.monotonic() + 20.0
        while True:
            # The overlay shows while an agent works; each capture is work.
            shot = await ok(session, "capture")
            rect = overlay_rect(wayland)
            if rect and shot.get("leftOut"):
                break
            assert time.monotonic() < deadline, f"the overlay never showed: {shot}"
            await anyio.sleep(0.1)
        assert shot["leftOut"]["how"] == "blanked", shot
        assert rect in shot["leftOut"]["areas"], (rect, shot["leftOut"])
        assert full not in shot["leftOut"]["areas"], shot["leftOut"]


# --------------------------------------------------------------------------- positive control


@pytest.mark.parametrize("extra", ["", UNSAFE], ids=["defaults", "unsafe-key-set"])
async def test_plain_xvfb_still_arms(tmp_path: Path, xvfb: Screen, windows, extra: str) -> None:
    """The same calls on a plain X server: the stop arms and every actuation runs; the unsafe
    key changes nothing there."""
    copy = copy_with(tmp_path, extra)
    win = windows(xvfb.env(), "Wayfarer")
    async with sdk_stdio(copy, env_extra=xvfb.env()) as (session, _):
        for tool, args in ACTUATIONS:
            await ok(session, tool, args)
        assert win.wait_for(lambda line: line.startswith("press")).startswith("press 1 20 20")
        await observation_works(session, "Wayfarer")
        stop = (await ok(session, "session-status"))["emergencyStop"]
        assert stop == {"armed": True, "actuationAllowed": True, "status": "emergency stop: armed"}, stop
    log = copy.log()
    assert "emergency stop: armed" in log
    assert "Wayland" not in log
    assert not any("actuation-without-stop" in line for line in audit_lines(log))
