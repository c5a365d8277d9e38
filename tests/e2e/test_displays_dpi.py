"""`displays` reports each monitor's DPI on X11: what programs draw at (`Xft.dpi`, the desktop's
one setting, else 96) and the panel's density from the size in millimetres RandR gives each
monitor. A real `mcec mcp` on an Xvfb of its own, through the official MCP Python SDK; the
monitors are RandR monitors of known size made with `xrandr --setmonitor`, the setting is put
with `xrdb`, as a desktop does.

Build first: `cargo build -p mcec`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mcec_e2e import manual_copy, sdk_envelope, sdk_stdio
from xdesk import Screen

pytestmark = pytest.mark.anyio

# Two monitors side by side on the 1280x800 screen: 640x800 pixels each, 169x211 mm on the
# left (about 96 DPI along the diagonal) and 85x106 mm on the right (about 192 DPI).
LEFT = ("dpi-left", "640/169x800/211+0+0", 96)
RIGHT = ("dpi-right", "640/85x800/106+640+0", 192)


def x(screen: Screen, *args: str, stdin: str | None = None) -> None:
    subprocess.run(list(args), env=screen.env(), input=stdin, text=True, check=True, capture_output=True, timeout=30)


async def displays(tmp_path: Path, screen: Screen) -> list[dict]:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("displays",))
    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (session, _):
        env = sdk_envelope(await session.call_tool("displays", {}))
        assert env["ok"], env
        return env["result"]["displays"]


def by_name(found: list[dict]) -> dict[str, dict]:
    return {d["name"]: d for d in found}


async def test_each_monitor_has_its_panel_density_and_programs_draw_at_96(tmp_path: Path, screen: Screen) -> None:
    for name, geometry, _ in (LEFT, RIGHT):
        x(screen, "xrandr", "--setmonitor", name, geometry, "none")
    found = by_name(await displays(tmp_path, screen))
    for name, _, physical in (LEFT, RIGHT):
        d = found[name]
        assert (d["dpi"], d["scale"], d["dpiSource"]) == (96, 1.0, "assumed"), d
        assert d["physicalDpi"] == physical, d


async def test_xft_dpi_is_what_every_monitor_draws_at(tmp_path: Path, screen: Screen) -> None:
    x(screen, "xrandr", "--setmonitor", LEFT[0], LEFT[1], "none")
    x(screen, "xrdb", "-merge", stdin="Xft.antialias: 1\nXft.dpi: 144\n")
    found = await displays(tmp_path, screen)
    assert found, found
    for d in found:
        assert (d["dpi"], d["scale"], d["dpiSource"]) == (144, 1.5, "xft"), d
    # The panel's density is still its own, beside the setting.
    assert by_name(found)[LEFT[0]]["physicalDpi"] == LEFT[2]


async def test_a_size_that_is_not_one_gives_no_panel_density(tmp_path: Path, screen: Screen) -> None:
    """A 16x9 "mm" EDID (an aspect ratio) is left out rather than reported as 1,000 DPI; the
    control in the first test shows a real size is reported."""
    x(screen, "xrandr", "--setmonitor", "dpi-aspect", "640/16x800/9+0+0", "none")
    d = by_name(await displays(tmp_path, screen))["dpi-aspect"]
    assert "physicalDpi" not in d and d["dpi"] == 96, d
