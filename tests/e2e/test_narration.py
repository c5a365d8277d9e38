"""The operator's overlay narrates an agent's calls in plain words: after `type` it says how
many characters were typed and never the text, after `key` which chord was pressed, after
`focus` which window. Read off the screen as the operator sees it (ImageMagick's
`import -window root`, then Tesseract), on a plain Xvfb, through the official MCP Python SDK;
the picture of the overlay is kept in target/test-artifacts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mcec_e2e import REPO, Copy, manual_copy, sdk_envelope, sdk_stdio
from test_no_mcec_in_picture import operator_view
from xdesk import ProbeWindow, Screen, wait_until

ARTIFACTS = REPO / "target" / "test-artifacts"
#: A word Tesseract reads reliably, so its absence from what it read means something.
SECRET = "Quokka"
TEXT = f"echo {SECRET} Marmalade\n"

pytestmark = pytest.mark.anyio


@pytest.fixture
def win(screen: Screen):
    w = ProbeWindow(screen.env(), "--title", "Notes", "--class", "NarrationTarget")
    yield w
    w.close()


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("focus", "type", "key"))


def overlay_words(display: str) -> str:
    """What the overlay (640 px wide, centred at the top) says, read by Tesseract from the
    operator's view of the screen; the view and the strip read are kept as artefacts."""
    shot = ARTIFACTS / "overlay-narration.png"
    operator_view(display, shot)
    strip = ARTIFACTS / "overlay-narration-strip.png"
    crop = ["-crop", "640x160+320+0", "-colorspace", "Gray", "-negate", "-resize", "300%"]
    subprocess.run(["convert", str(shot), *crop, str(strip)], check=True, timeout=30)
    done = subprocess.run(["tesseract", str(strip), "stdout"], capture_output=True, text=True, check=True, timeout=60)
    return " ".join(done.stdout.split())


async def test_the_overlay_says_what_the_agent_did_in_words_and_never_the_typed_text(
    copy: Copy, screen: Screen, win: ProbeWindow
) -> None:
    async with sdk_stdio(copy, env_extra={"DISPLAY": screen.display}) as (s, _):
        for tool, args in (
            ("focus", {"className": "NarrationTarget"}),
            ("type", {"text": TEXT}),
            ("key", {"keys": "ctrl+s"}),
        ):
            envelope = sdk_envelope(await s.call_tool(tool, args))
            assert envelope["ok"], (tool, envelope)
        typed = f"typed {len(TEXT)} characters"
        said = ""

        def narrated() -> bool:
            nonlocal said
            said = overlay_words(screen.display)
            return typed in said and "pressed Ctrl+S" in said

        assert wait_until(narrated, 20), f"the overlay said {said!r}, not {typed!r} and 'pressed Ctrl+S'"
        # Tesseract may read a line's first letter as a capital.
        read = said.lower()
        assert "focused narrationtarget" in read, said
        assert not any(word.lower() in read for word in ("echo", SECRET, "Marmalade")), said
        assert '{"text"' not in said and "type {" not in read, said
