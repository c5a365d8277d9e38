"""The host's tray icon under Wine (crates/operator/src/tray/notify_area.rs): plain `mcec.exe`
puts an icon in the notification area with `Shell_NotifyIconW`, and its menu stops the host.

Wine's Xvfb here has no X tray manager, so Wine's explorer shows notification-area icons in a
window of its own, "Wine System Tray", one 20x20 cell per icon from its top-left, and sends
the owner the icon's callback messages as Explorer does; xdotool's clicks there are the
operator's hand. The test sees the icon registered (the host's info line, and the green disc
drawn in that window) and added again on a `TaskbarCreated` broadcast, opens its menu with a
right-click, chooses Stop and sees the host stopped: the icon turns red, the host window says
STOPPED and a tool call through the SDK is refused with emergency-stopped. Re-arm… then only
opens the attested re-arm prompt (the stop stays latched), and when the host exits the icon
is deleted.

What only real Windows shows: Explorer's own notification area (its overflow, the tooltip,
placement on the taskbar), a real Explorer restart (Wine's explorer never broadcasts
`TaskbarCreated`; the test broadcasts it itself, with the icon still in place), and Open
console restoring a minimised host window (without a window manager, Wine cannot minimise
one; tests/e2e/test_tray.py shows Open console bringing the host window back on X11, through
the same `tray::choose`).

    scripts/windows-build && .venv/bin/python -m pytest -q tests/windows/test_tray_wine.py
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from wine_desk import WineDesk
from test_host_wine import HOST_ORIGIN, closed, refusal_drawn
from test_mcec_wine import run, wine_copy
from test_operator_wine import ARTIFACTS, PROMPT_TITLE, code_of, pixel, screenshot, wait_for_code, window_named
from mcec_e2e import free_port, host_settings, sdk_http, start_host  # noqa: E402
from xdesk import PROBE_PATIENCE_S, wait_until  # noqa: E402

TOKEN = "wine-tray-token-0123456789abcdef"
TRAY_TITLE = "Wine System Tray"
#: The icon's cell in Wine's tray window (explorer's icon_cx/cy), the icon drawn 16x16 in its middle.
CELL = 20
#: The look's colours (tray/mod.rs `Look::rgb`).
GREEN = (0x43, 0xA0, 0x47)
RED = (0xE5, 0x39, 0x35)
#: Wine's popup menu opens with its top-left at the pointer; from there, each item's row
#: (Stop, Open console, Re-arm…), right of the labels, where the menu's background shows.
ITEM_Y = (11, 28, 45)
ITEM_X = 100

pytestmark = pytest.mark.usefixtures("no_stop_record")


def close_to(got: tuple[int, int, int], want: tuple[int, int, int]) -> bool:
    return all(abs(g - w) <= 24 for g, w in zip(got, want))


class TrayIcon:
    """The icon in Wine's tray window, as the operator sees and clicks it."""

    def __init__(self, desk: WineDesk) -> None:
        self.desk = desk
        assert wait_until(lambda: window_named(desk, TRAY_TITLE), PROBE_PATIENCE_S), "no Wine System Tray window"
        wid = desk.xdotool("search", "--name", f"^{TRAY_TITLE}$").split()[0]
        geometry = desk.xdotool("getwindowgeometry", "--shell", wid)
        at = dict(line.split("=", 1) for line in geometry.split())
        # The middle of the first cell.
        self.x, self.y = int(at["X"]) + CELL // 2, int(at["Y"]) + CELL // 2

    def colour(self) -> tuple[int, int, int]:
        """The disc above the middle (where the stopped look's white bar is not)."""
        return pixel(screenshot(self.desk, ARTIFACTS / "windows-tray.png"), self.x, self.y - 4)

    def shows(self, rgb: tuple[int, int, int]) -> bool:
        return wait_until(lambda: close_to(self.colour(), rgb), PROBE_PATIENCE_S)

    def choose(self, copy, item: int, opened: int) -> None:
        """Right-click the icon, wait for its menu (the `opened`th) to be drawn, click `item`."""
        self.desk.xdotool("mousemove", str(self.x), str(self.y), "click", "3")
        assert wait_until(lambda: copy.log().count("the tray's menu is open") == opened, PROBE_PATIENCE_S), copy.log()
        point = (self.x + ITEM_X, self.y + ITEM_Y[item])
        # The menu's light background, where the desk was black.
        assert wait_until(lambda: sum(pixel(screenshot(self.desk, ARTIFACTS / "windows-tray-menu.png"), *point)) > 300,
                          PROBE_PATIENCE_S), "the tray's menu was never drawn"
        self.desk.xdotool("mousemove", *map(str, point), "click", "1")


def test_tray_icon_menu_stops_the_host_and_rearm_only_opens_the_prompt(desk: WineDesk, tmp_path: Path) -> None:
    port = free_port()
    copy = wine_copy(desk, tmp_path, host_settings(port, TOKEN))
    copy.enable_commands("displays")
    host = start_host(copy, port, TOKEN)
    try:
        assert wait_until(lambda: "tray icon shown (notification area)" in copy.log(), PROBE_PATIENCE_S), copy.log()
        icon = TrayIcon(desk)
        assert icon.shows(GREEN), f"the armed icon is not green: {icon.colour()}"
        # `TaskbarCreated` (broadcast here by another program, as a restarted Explorer does)
        # reaches the icon's hidden top-level window, which adds the icon again.
        assert desk.wine("mcec-post-click", "broadcast", "TaskbarCreated").startswith("BROADCAST")
        assert wait_until(lambda: "tray icon shown again" in copy.log(), PROBE_PATIENCE_S), copy.log()
        assert icon.shows(GREEN), f"the icon added again is not green: {icon.colour()}"

        async def main():
            async with sdk_http(host.url, host.auth_headers()) as (session, _):
                assert await code_of(session, "displays") is None, "armed: the call runs"
                await anyio.to_thread.run_sync(lambda: icon.choose(copy, 0, opened=1))
                assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped", copy.log()
                assert "Stop was chosen in the tray's menu" in copy.log()
                assert await anyio.to_thread.run_sync(lambda: icon.shows(RED)), f"not red: {icon.colour()}"
                stopped_line = (HOST_ORIGIN[0] + 8, HOST_ORIGIN[1] + 45)
                assert await anyio.to_thread.run_sync(lambda: wait_until(
                    lambda: refusal_drawn(screenshot(desk, ARTIFACTS / "windows-tray-stopped.png"), *stopped_line),
                    PROBE_PATIENCE_S)), "the host never said STOPPED"

                # The stop opened the re-arm prompt; leave it, then Re-arm… opens it again and
                # re-arms nothing by itself.
                assert window_named(desk, PROMPT_TITLE), "no re-arm prompt after the stop"
                desk.focus(PROMPT_TITLE)
                desk.xdotool("key", "Escape")
                assert await anyio.to_thread.run_sync(lambda: closed(desk, PROMPT_TITLE)), "the prompt stayed"
                await anyio.to_thread.run_sync(lambda: icon.choose(copy, 2, opened=2))
                assert await anyio.to_thread.run_sync(
                    lambda: wait_until(lambda: window_named(desk, PROMPT_TITLE), PROBE_PATIENCE_S)
                ), "Re-arm… did not open the re-arm prompt"
                assert await code_of(session, "displays") == "emergency-stopped", "Re-arm… re-armed by itself"

        run(main)
    finally:
        host.stop()
    assert "tray icon removed" in copy.log(), copy.log()
    assert not [l for l in copy.log().splitlines() if "re-armed" in l], copy.log()
