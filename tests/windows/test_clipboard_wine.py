"""The Win32 clipboard of mcec.exe under Wine: the `clipboard` tool through the official MCP
Python SDK, and the Agent tab's Copy buttons clicked by the operator's hand.

Wine bridges the Win32 clipboard to the X CLIPBOARD selection of the X server it draws on, so
`xclip` on that Xvfb is another program at the same clipboard: what mcec.exe sets is read there,
and what xclip sets is read by mcec.exe. That is how these tests tell the real clipboard from a
store inside mcec. `mcec-clipboard-holder.exe` is a Windows program that holds the clipboard
open, or fills it with a format that is not text.

    scripts/windows-build && .venv/bin/python -m pytest -q tests/windows/test_clipboard_wine.py
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest

from test_host_wine import (
    HOST_ORIGIN,
    HOST_TITLE,
    MENU_FIRST_ITEM,
    SETTINGS_ORIGIN,
    SETTINGS_TITLE,
    at,
    crop,
    drawn,
    open_menu,
)
from test_mcec_wine import call, run, wine_copy
from test_operator_wine import ARTIFACTS, CHORD, Target, screenshot, wait_for_code, window_named
from wine_desk import WINE, WineDesk, exe
from mcec_e2e import audit_with, free_port, host_settings, sdk_stdio, start_host  # noqa: E402
from xdesk import PROBE_PATIENCE_S, wait_until  # noqa: E402

COMMANDS = ("displays", "clipboard", "clipboard.read")
TEXT = "hé€ ✓ 漢字\nzweite Zeile ✓"
#: The Agent tab's buttons, from the settings window's client top-left (the X11 layout:
#: tests/e2e/test_agent_tab.py, test_agent_tab_clients.py).
PROVISION_NEW = (355, 145)
COPY_STDIO = (63, 353)
MARKER = "nothing copied yet"
TOKEN = "wine-clip-token-0123456789abcdef"


pytestmark = pytest.mark.usefixtures("no_stop_record")


def x_clipboard(desk: WineDesk) -> str:
    """The X CLIPBOARD selection of Wine's Xvfb, as any X program reads it."""
    done = subprocess.run(["xclip", "-o", "-selection", "clipboard"], env=desk.env(), capture_output=True,
                          text=True, timeout=30)
    return done.stdout


def x_set(desk: WineDesk, text: str) -> None:
    """An X program takes the CLIPBOARD with `text` (xclip serves it until someone else takes it)."""
    subprocess.run(["xclip", "-i", "-selection", "clipboard"], input=text, env=desk.env(), text=True, check=True,
                   timeout=30)
    assert wait_until(lambda: x_clipboard(desk) == text, PROBE_PATIENCE_S), "xclip did not take the clipboard"


async def until_read(session, want: str) -> dict:
    """`get` until Wine has imported the X selection into the Win32 clipboard (it follows the
    X server's selection events on a thread of its own); the last answer."""
    got: dict = {}
    for _ in range(200):
        got = await call(session, "clipboard", action="get")
        if got["ok"] and got["result"]["text"] == want:
            break
        await anyio.sleep(0.05)
    return got


class Holder:
    """mcec-clipboard-holder.exe hold: another Windows program with the clipboard open."""

    def __init__(self, desk: WineDesk) -> None:
        self._proc = subprocess.Popen([WINE, str(exe("mcec-clipboard-holder")), "hold"], env=desk.env(),
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True)
        assert self._proc.stdout is not None
        first = self._proc.stdout.readline().strip()
        if first != "HELD":
            self.release()
            raise RuntimeError(f"the holder did not open the clipboard: {first!r}")

    def release(self) -> str:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.close()
        rest = self._proc.stdout.read()
        self._proc.wait(timeout=PROBE_PATIENCE_S)
        return rest


def test_set_and_get_are_the_real_clipboard(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)
    x_set(desk, "before mcec")

    async def main():
        async with sdk_stdio(copy) as (session, _):
            done = await call(session, "clipboard", action="set", text=TEXT)
            assert done["ok"], done
            assert done["result"] == {"selection": "clipboard", "length": len(TEXT)}, done
            # An X program pastes what mcec.exe set: Wine took the X selection for the Win32 clipboard.
            assert await anyio.to_thread.run_sync(
                lambda: wait_until(lambda: x_clipboard(desk) == TEXT, PROBE_PATIENCE_S)
            ), x_clipboard(desk)
            got = await call(session, "clipboard", action="get")
            assert got["ok"] and got["result"] == {"selection": "clipboard", "text": TEXT, "owned": True,
                                                    "length": len(TEXT)}, got
            # And mcec.exe reads what an X program set.
            from_x = "from xclip ✓ 漢字\nline two"
            await anyio.to_thread.run_sync(lambda: x_set(desk, from_x))
            got = await until_read(session, from_x)
            assert got["ok"] and got["result"]["text"] == from_x and got["result"]["owned"] is True, got

    run(main)
    log = copy.log()
    assert f"action=set selection=clipboard length={len(TEXT)}" in log, log
    assert "action=get selection=clipboard" in log, log
    assert "漢字" not in log, "the audit must never carry clipboard text"


def test_bad_input_non_text_and_a_held_clipboard(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)

    async def refused(session, code: str, **args) -> str:
        env = await call(session, "clipboard", **args)
        assert not env["ok"] and env["error"]["code"] == code, (args.get("action"), env)
        return env["error"]["detail"]

    async def main():
        async with sdk_stdio(copy) as (session, _):
            # Positive control: a good `set` is on the clipboard.
            assert (await call(session, "clipboard", action="set", text="kept ✓"))["ok"]
            # The same refusals as on X11 (tests/e2e/test_a11y.py), and the clipboard is untouched.
            await refused(session, "bad-arguments", action="set", text="x" * 10_000_000)
            await refused(session, "bad-arguments", action="set", text="a\u0000b")
            await refused(session, "bad-arguments", action="set")
            await refused(session, "bad-arguments", action="get", text="only for set")
            assert "PRIMARY" in await refused(session, "unavailable", action="set", text="p", selection="primary")
            assert "PRIMARY" in await refused(session, "unavailable", action="get", selection="primary")
            got = await call(session, "clipboard", action="get")
            assert got["ok"] and got["result"]["text"] == "kept ✓" and got["result"]["owned"] is True, got

            # Another program holds the clipboard open: both actions time out naming it.
            holder = await anyio.to_thread.run_sync(lambda: Holder(desk))
            try:
                detail = await refused(session, "timeout", action="set", text="while held")
                assert "mcec-clipboard-holder" in detail and "mcec clipboard holder" in detail, detail
                assert "nothing was set" in detail, detail
                assert "nothing was read" in await refused(session, "timeout", action="get")
            finally:
                assert "RELEASED" in await anyio.to_thread.run_sync(holder.release)
            got = await call(session, "clipboard", action="get")
            assert got["ok"] and got["result"]["text"] == "kept ✓", got
            assert (await call(session, "clipboard", action="set", text="after the holder"))["ok"]

            # Only a format that is not text: no text, as X11 answers a selection without text.
            assert "SET bytes" in await anyio.to_thread.run_sync(lambda: desk.wine("mcec-clipboard-holder", "bytes"))
            got = await call(session, "clipboard", action="get")
            assert got["ok"] and got["result"] == {"selection": "clipboard", "text": "", "owned": False,
                                                    "length": 0}, got
            # mcec closed the clipboard on that early answer too: an X program's text comes through.
            await anyio.to_thread.run_sync(lambda: x_set(desk, "after the bytes"))
            got = await until_read(session, "after the bytes")
            assert got["ok"] and got["result"]["text"] == "after the bytes", got

    run(main)

    # `[clipboard.read]` is its own switch, as on X11: set works, get is refused.
    no_read = wine_copy(desk, tmp_path / "n", "AgentCommandsEnabled = true\n", ("clipboard",))

    async def without_read():
        async with sdk_stdio(no_read) as (session, _):
            assert (await call(session, "clipboard", action="set", text="visible to others"))["ok"]
            assert "[clipboard.read]" in await refused(session, "command-disabled", action="get")

    run(without_read)
    assert wait_until(lambda: x_clipboard(desk) == "visible to others", PROBE_PATIENCE_S), x_clipboard(desk)


def test_the_stop_refuses_a_set_and_leaves_the_clipboard(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)
    target = Target(desk, 0, 560, 1024, 200)

    async def main():
        async with sdk_stdio(copy) as (session, _):
            assert (await call(session, "clipboard", action="set", text="before the stop"))["ok"]
            desk.focus("mcec stop target")
            desk.xdotool("key", CHORD)
            assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
            env = await call(session, "clipboard", action="set", text="after the stop")
            assert not env["ok"] and env["error"]["code"] == "emergency-stopped", env

    try:
        run(main)
    finally:
        target.close()
    assert wait_until(lambda: x_clipboard(desk) == "before the stop", PROBE_PATIENCE_S), x_clipboard(desk)


def test_the_agent_tab_copy_puts_the_entry_on_the_clipboard(desk: WineDesk, tmp_path: Path) -> None:
    port = free_port()
    copy = wine_copy(desk, tmp_path, host_settings(port, TOKEN, "AllowSessionProvisioning = true\n"))
    host = start_host(copy, port, TOKEN)
    try:
        assert wait_until(lambda: window_named(desk, HOST_TITLE), PROBE_PATIENCE_S), "no host window"
        assert drawn(desk, at(HOST_ORIGIN, (24, 12)), "windows-clip-host.png"), "host window never drawn"
        open_menu(desk)
        desk.xdotool("mousemove", *at(HOST_ORIGIN, MENU_FIRST_ITEM), "click", "1")
        assert wait_until(lambda: window_named(desk, SETTINGS_TITLE), PROBE_PATIENCE_S), "no settings window"
        assert drawn(desk, at(SETTINGS_ORIGIN, PROVISION_NEW), "windows-clip-agent-tab.png"), "no Agent tab"
        button = at(SETTINGS_ORIGIN, COPY_STDIO)
        shot = ARTIFACTS / "windows-clip-copy-button.png"
        empty = crop(screenshot(desk, shot), int(button[0]) - 40, int(button[1]) - 10, 80, 20)
        desk.xdotool("mousemove", *at(SETTINGS_ORIGIN, PROVISION_NEW), "click", "1")
        assert wait_until(lambda: bool(audit_with(copy, "session-provisioned", "by=operator-ui")),
                          PROBE_PATIENCE_S), copy.log()
        # The handoff and its Copy buttons are painted after the audit line: click once they are.
        assert wait_until(lambda: crop(screenshot(desk, shot), int(button[0]) - 40, int(button[1]) - 10, 80, 20)
                          != empty, PROBE_PATIENCE_S), "the Copy button was never drawn"
        x_set(desk, MARKER)
        desk.xdotool("mousemove", *button, "click", "1")
        assert wait_until(lambda: bool(audit_with(copy, "handoff-copied")), PROBE_PATIENCE_S), copy.log()
        assert wait_until(lambda: x_clipboard(desk) != MARKER, PROBE_PATIENCE_S), "nothing reached the clipboard"
        text = x_clipboard(desk)
    finally:
        host.stop()
    assert "client=JSON; part=stdio" in audit_with(copy, "handoff-copied")[0]
    (sessions,) = list((desk.prefix / "drive_c" / "users").glob("*/AppData/Local/mcec/sessions"))
    session_ids = {d.name for d in sessions.iterdir() if not d.name.startswith(".")}
    (entry,) = json.loads(text)["mcpServers"].values()
    assert entry["args"] == ["mcp"], entry
    assert entry["command"].lower().endswith("mcec.exe"), entry
    assert any(sid in entry["command"] for sid in session_ids), (entry, session_ids)
