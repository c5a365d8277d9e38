"""The host's tray icon, end to end: a private session bus (`dbus-daemon --session`), a tray
that registers items (`sni_watcher.py`, an `org.kde.StatusNotifierWatcher`), and a real `mcec`
host serving HTTP on the inner display of an Xvfb + Xephyr desk. The host's StatusNotifierItem
registers; its `Status` and `IconPixmap` say armed (a green disc); `Stop` chosen in its menu
(through `com.canonical.dbusmenu`'s `Event`, as a tray does on a click) stops the host: the
stop is recorded for the display, an agent's call is refused `emergency-stopped`, and the icon
turns red with `NeedsAttention`. `Open console` maps the host window again after it was
taken off the screen. `Re-arm…` then only opens the attested re-arm prompt: the host
stays stopped. With no watcher on the bus there is no tray, one info line says so, and the host
serves as before."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcec_e2e import (
    Copy,
    audit_with,
    code_of,
    host_settings,
    manual_copy,
    private_bus_argv,
    sdk_http,
    start_host,
    wait_for_code,
)
from test_stop_command import BUTTON_REASON
from test_stop_durable import PROMPT_TITLE, record_of
from xdesk import Desk, wait_until

pytestmark = pytest.mark.anyio

WATCHER = Path(__file__).with_name("sni_watcher.py")
ITEM_PATH = "/StatusNotifierItem"
MENU_PATH = "/MenuBar"
ICON_SIZE = 32
ARMED_GREEN = (0xFF, 0x43, 0xA0, 0x47)
STOPPED_RED = (0xFF, 0xE5, 0x39, 0x35)


class Bus:
    """A private session bus, and what runs on it; every process is ended by PID."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []
        self.sockets = tempfile.TemporaryDirectory(prefix="mcec-bus-")
        daemon = self.spawn(private_bus_argv(Path(self.sockets.name)), {})
        line = daemon.stdout.readline().strip()
        assert line.startswith("unix:"), f"dbus-daemon printed {line!r}"
        self.address = line

    def spawn(self, argv: list[str], env: dict[str, str]) -> subprocess.Popen:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env})
        self.procs.append(proc)
        return proc

    def env(self) -> dict[str, str]:
        return {"DBUS_SESSION_BUS_ADDRESS": self.address}

    def gdbus(self, *args: str) -> str:
        done = subprocess.run(["gdbus", *args], env={"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", **self.env()},
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"gdbus {' '.join(args)}: {done.stderr}"
        return done.stdout

    def close(self) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self.sockets.cleanup()


@pytest.fixture
def bus() -> Iterator[Bus]:
    for tool in ("dbus-daemon", "gdbus"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            raise RuntimeError(f"{tool} is missing; run scripts/test (it installs dbus-daemon and libglib2.0-bin)")
    b = Bus()
    try:
        yield b
    finally:
        b.close()


def start_watcher(bus: Bus) -> subprocess.Popen:
    watcher = bus.spawn(["/usr/bin/python3", str(WATCHER)], bus.env())
    assert watcher.stdout.readline().strip() == "ready", "the watcher did not take its name"
    return watcher


def prop(bus: Bus, service: str, name: str) -> str:
    return bus.gdbus("call", "--session", "--dest", service, "--object-path", ITEM_PATH, "--method",
                     "org.freedesktop.DBus.Properties.Get", "org.kde.StatusNotifierItem", name)


def status(bus: Bus, service: str) -> str:
    found = re.search(r"<'(\w+)'>", prop(bus, service, "Status"))
    assert found
    return found.group(1)


def icon_pixel(bus: Bus, service: str, x: int, y: int) -> tuple[int, ...]:
    """One pixel (A, R, G, B) of the item's first IconPixmap."""
    text = prop(bus, service, "IconPixmap")
    found = re.search(r"\((\d+), (\d+), \[byte (.*?)\]\)", text)
    assert found, text
    assert (int(found.group(1)), int(found.group(2))) == (ICON_SIZE, ICON_SIZE), text
    data = [int(b, 16) for b in found.group(3).split(", ")]
    at = (y * ICON_SIZE + x) * 4
    return tuple(data[at : at + 4])


def menu_id(bus: Bus, service: str, label: str) -> int:
    """The dbusmenu id of the menu item labelled `label`, and that it is enabled."""
    layout = bus.gdbus("call", "--session", "--dest", service, "--object-path", MENU_PATH, "--method",
                       "com.canonical.dbusmenu.GetLayout", "0", "int32 -1", "@as []")
    found = re.search(r"\((\d+), \{([^}]*)'label': <'" + re.escape(label) + r"'>([^}]*)\}", layout)
    assert found, layout
    assert "'enabled': <false>" not in found.group(2) + found.group(3), f"{label} is disabled: {layout}"
    return int(found.group(1))


def click_menu(bus: Bus, service: str, label: str) -> None:
    item = menu_id(bus, service, label)
    bus.gdbus("call", "--session", "--dest", service, "--object-path", MENU_PATH, "--method",
              "com.canonical.dbusmenu.Event", str(item), "clicked", "<int32 0>", "0")


def host_copy(tmp_path: Path, desk: Desk, bus: Bus, port: int, token: str) -> Copy:
    copy = manual_copy(tmp_path / "h", settings=host_settings(port, token), commands=("displays",))
    copy.extra_env.update({"DISPLAY": desk.inner, **bus.env()})
    return copy


async def test_the_trays_stop_stops_the_host_and_re_arm_only_opens_the_prompt(
    tmp_path: Path, desk: Desk, bus: Bus, port: int, token: str
) -> None:
    watcher = start_watcher(bus)
    copy = host_copy(tmp_path, desk, bus, port, token)
    record = record_of(desk)
    host = start_host(copy, port, token)
    try:
        line = watcher.stdout.readline().strip()
        assert line.startswith("registered "), line
        service = line.split()[2]
        assert service.startswith("org.kde.StatusNotifierItem-"), line
        assert wait_until(lambda: "tray icon shown" in copy.log(), 10), copy.log()
        assert status(bus, service) == "Active"
        assert icon_pixel(bus, service, 16, 6) == ARMED_GREEN
        async with sdk_http(host.url, host.auth_headers()) as (s, _):
            assert await code_of(s, "displays") is None, "the positive control: the host answers"
            click_menu(bus, service, "Stop")
            assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped", copy.log()
            assert wait_until(lambda: bool(audit_with(copy, f"emergency-stop; engaged; reason={BUTTON_REASON}")), 10)
            assert wait_until(record.exists, 10), "the stop was not recorded"
            assert "Stop was chosen in the tray's menu" in copy.log()
            assert wait_until(lambda: status(bus, service) == "NeedsAttention", 10), status(bus, service)
            assert icon_pixel(bus, service, 16, 6) == STOPPED_RED

            # Open console brings the host window up: taken off the screen (unmapped, as a
            # window manager's minimise does), it is mapped again.
            [host_window] = desk.visible_windows("^mcec$")
            desk.injected("windowunmap", "--sync", host_window)
            assert not desk.visible_window("^mcec$"), "the host window stayed on screen"
            click_menu(bus, service, "Open console")
            assert wait_until(lambda: desk.visible_window("^mcec$"), 10), "Open console did not bring it up"
            # Re-arm… opens the attested prompt and re-arms nothing by itself.
            if desk.visible_window(PROMPT_TITLE):  # the stop opened it; the operator closes it
                desk.physical("key", "Escape")
                assert wait_until(lambda: not desk.visible_window(PROMPT_TITLE), 10), "the prompt stayed"
            click_menu(bus, service, "Re-arm…")
            assert wait_until(lambda: desk.visible_window(PROMPT_TITLE), 10), "Re-arm… did not open the prompt"
            assert await code_of(s, "displays") == "emergency-stopped"
            assert status(bus, service) == "NeedsAttention"
            assert not audit_with(copy, "emergency-stop", "re-armed"), copy.log()
    finally:
        host.stop()
        record.unlink(missing_ok=True)  # no mcec runs on the display any more


async def test_with_no_tray_the_host_says_so_and_serves(
    tmp_path: Path, desk: Desk, bus: Bus, port: int, token: str
) -> None:
    copy = host_copy(tmp_path, desk, bus, port, token)
    host = start_host(copy, port, token)
    try:
        assert wait_until(lambda: "no tray icon" in copy.log(), 30), copy.log()
        line = next(line for line in copy.log().splitlines() if "no tray icon" in line)
        assert " INFO " in line, line
        async with sdk_http(host.url, host.auth_headers()) as (s, _):
            assert await code_of(s, "displays") is None
    finally:
        host.stop()
