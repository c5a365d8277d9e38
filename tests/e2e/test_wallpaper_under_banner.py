"""Where mcec's banner lies over the bare desktop, the agent's capture shows the desktop's
background there, pixel for pixel, not a black box: a root colour set with `xsetroot -solid`
(X has no request to read it back; mcec has the server paint it, see root_background.rs) and
a wallpaper pixmap named in `_XROOTPMAP_ID` or `ESETROOT_PMAP_ID` (set by `mcec-wallpaper`, as
hsetroot and Esetroot do). End to end through the official MCP Python SDK on Xvfb, with the
real banner of an acting agent."""

from __future__ import annotations

import os
import subprocess
from typing import Callable

import pytest

from mcec_e2e import Copy, sdk_stdio
from test_desktop import decode_png
from test_no_mcec_in_picture import ARTIFACTS, H, W, banner_showing, call, copy, operator_view, px  # noqa: F401
from test_picture import image_block
from xdesk import TESTWIN, Screen, wait_until

WALLPAPER = TESTWIN.with_name("mcec-wallpaper")
#: A plain red desktop, as the issue measured it.
RED = (0xC0, 0x39, 0x2B)

pytestmark = pytest.mark.anyio


def stripe(_x: int, y: int) -> tuple[int, int, int]:
    """Row `y` of the wallpaper `mcec-wallpaper` sets."""
    return y * 5 % 256, 0x80, 255 - y % 256


SETTERS: dict[str, tuple[list[str], Callable[[int, int], tuple[int, int, int]]]] = {
    "xsetroot-solid": (["xsetroot", "-solid", "#%02x%02x%02x" % RED], lambda _x, _y: RED),
    "xrootpmap": ([str(WALLPAPER), "_XROOTPMAP_ID"], stripe),
    "esetroot": ([str(WALLPAPER), "ESETROOT_PMAP_ID"], stripe),
}


@pytest.mark.parametrize("how", SETTERS)
async def test_the_agent_sees_the_wallpaper_under_the_banner(copy: Copy, how: str) -> None:
    argv, wallpaper = SETTERS[how]
    if not WALLPAPER.is_file():
        raise RuntimeError(f"{WALLPAPER} is missing; run `cargo build -p mcec-desktop-x11 --bins`")
    with Screen() as screen:
        env = {"DISPLAY": screen.display, "PATH": os.environ.get("PATH", "")}
        subprocess.run(argv, env=env, check=True, timeout=30)
        async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
            assert (await call(s, "displays", {}))[0]["ok"]  # an agent call: the banner comes up
            shot = ARTIFACTS / f"wallpaper-{how}-operator-view.png"
            assert wait_until(lambda: banner_showing(operator_view(screen.display, shot)), timeout=20), (
                "positive control: the operator must see the banner over the wallpaper"
            )
            seen = operator_view(screen.display, shot)

            envelope, result = await call(s, "capture", {"full": True})
            assert envelope["ok"], envelope
            data, _ = image_block(result)
            (ARTIFACTS / f"wallpaper-{how}-agent-view.png").write_bytes(data)
            w, h, rows = decode_png(data)
            assert (w, h) == (W, H)
            left_out = envelope["result"]["leftOut"]
            assert left_out["how"] == "recomposed", left_out
            under = [
                (x, y)
                for a in left_out["areas"]
                for y in range(a["y"], a["y"] + a["height"])
                for x in range(a["x"], a["x"] + a["width"])
            ]
            assert len(under) >= 640 * 44, left_out
            assert sum(px(seen, x, y) != wallpaper(x, y) for x, y in under) > 10_000, (
                "positive control: the operator's view has the banner there, not the wallpaper"
            )
            wrong = [(x, y) for x, y in under if px(rows, x, y) != wallpaper(x, y)]
            assert wrong == [], f"{len(wrong)} pixels under the banner are not the wallpaper, e.g. {wrong[:3]}"
            assert px(rows, 5, 5) == wallpaper(5, 5), "away from the banner the screen is as it is"

