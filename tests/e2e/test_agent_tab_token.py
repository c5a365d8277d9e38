"""The Agent tab hides a provisioned session's bearer token, end to end: a real `mcec` host on
the inner display of an Xvfb + Xephyr desk provisions a copy (Provision new…, clicked with the
operator's outer mouse). The token is then in the copy's mcec.settings but neither in the
window's pixels (read back with Tesseract) nor in mcec.log; the tab lists the copy as
`not started`, not `stale`, and its age moves with no Refresh clicked. An injected click (XTEST on the inner display) on the reveal's
Reveal is refused and audited and the token stays hidden; the operator's own click shows it
(Tesseract then reads it: the control that the reading works), and it never reaches mcec.log."""

from __future__ import annotations

import re
import subprocess
import time
from difflib import SequenceMatcher
import tomllib
from pathlib import Path

import pytest
from mcec_e2e import Copy, audit_with, manual_copy, stop_process
from sessions_support import OPT_IN, session_dirs
from test_agent_tab import ARTIFACTS, PROVISION_NEW, SETTINGS, at, open_agent_tab, start_host
from xdesk import Desk, wait_until

# Offsets from the settings window's top-left corner (egui's default dark theme at scale 1).
CODEX_CLI = (488, 330)
REVEAL_TOKEN = (290, 353)
REVEAL_TITLE = "mcec: show the session token"
# `Reveal` in the reveal's confirmation prompt.
REVEAL = (36, 92)
SETTINGS_SIZE = (640, 560)
# Codex's note, two lines when the token shows in it: x, y, width, height.
NOTE_LINES = (0, 380, 640, 34)
# The first session row's Age cell: x, y, width, height. It lies between the session id and the
# Size column, whose places follow the font's widths (Ubuntu Light for every column since stop 40).
AGE_CELL = (96, 181, 46, 22)


def ocr(shot: Path, area: tuple[int, int, int, int], name: str, *args: str) -> str:
    """What Tesseract reads in `area` (x, y, width, height) of a screenshot, with every space
    and line break removed (the entries wrap the token at the window's edge)."""
    big = ARTIFACTS / f"{name}-ocr.png"
    x, y, w, h = area
    crop = ["-crop", f"{w}x{h}+{x}+{y}", "-colorspace", "Gray", "-negate", "-resize", "300%"]
    subprocess.run(["convert", str(shot), *crop, str(big)], check=True, timeout=30)
    done = subprocess.run(["tesseract", str(big), "stdout", *args], capture_output=True, text=True, check=True, timeout=120)
    return re.sub(r"\s+", "", done.stdout)


def ocr_settings(desk: Desk, origin: tuple[int, int], name: str) -> str:
    """What Tesseract reads in the whole settings window."""
    shot = desk.screenshot(ARTIFACTS / f"{name}.png")
    return ocr(shot, (*origin, *SETTINGS_SIZE), name)


def token_run(origin: tuple[int, int], name: str, token: str) -> int:
    """The longest run of the token's characters Tesseract reads in Codex's note (of the
    screenshot `ocr_settings` took as `name`): a glyph or two of a long hex string may be
    misread, so the test asks for long runs rather than the whole."""
    area = (origin[0] + NOTE_LINES[0], origin[1] + NOTE_LINES[1], *NOTE_LINES[2:])
    read = ocr(ARTIFACTS / f"{name}.png", area, f"{name}-note", "--psm", "6").lower()
    return SequenceMatcher(None, token, read, autojunk=False).find_longest_match().size


def ocr_settings_and_age(desk: Desk, origin: tuple[int, int], name: str) -> tuple[str, int]:
    """`ocr_settings`, and the age in seconds the first session row shows (nothing covers it).
    Tesseract misreads the small cell now and then ('Ws|' for '4s'): the age changes every
    second, so a misread is looked at again in a later screenshot, a few times at most."""
    misread = []
    for _ in range(4):
        text = ocr_settings(desk, origin, name)
        shot = ARTIFACTS / f"{name}.png"
        age = ocr(shot, (origin[0] + AGE_CELL[0], origin[1] + AGE_CELL[1], *AGE_CELL[2:]), f"{name}-age", "--psm", "7")
        # Tesseract reads a lone 0 as a capital O now and then.
        # The cell's edge can come out as a stray bracket or bar beside the digits.
        read = re.search(r"(\d+)s", age.replace("O", "0").replace("o", "0"))
        if read:
            return text, int(read.group(1))
        misread.append(age)
        time.sleep(0.4)
    raise AssertionError(f"the first row's age reads {misread!r}")


def choose_codex(desk: Desk, origin: tuple[int, int]) -> None:
    """Pick Codex CLI among the clients (with the operator's mouse) once the handoff is drawn:
    its name then sits on the selection's blue."""
    point = at(origin, (CODEX_CLI[0] - 20, CODEX_CLI[1] - 6))

    def chosen() -> bool:
        desk.physical("mousemove", *at(origin, CODEX_CLI), "click", "1", "sleep", "0.3")
        r, g, b = desk.pixel(desk.screenshot(ARTIFACTS / "token-client-choice.png"), *map(int, point))
        return b > r + 60

    assert wait_until(chosen, timeout=20), "Codex CLI could not be chosen"


def reveal_button(desk: Desk) -> list[str]:
    """Where the reveal's Reveal is, once the prompt is open, drawn, and has been on screen a
    moment (a click counts only after `SHOW_SETTLE`, and a second after a program last moved
    the pointer: `STEER_WINDOW`)."""
    if not wait_until(lambda: desk.visible_window(REVEAL_TITLE), timeout=30):
        raise AssertionError(f"the reveal did not open: {desk.screenshot(ARTIFACTS / 'token-no-reveal.png')}")
    origin = desk.window_origin(REVEAL_TITLE)
    assert origin is not None
    point = at(origin, REVEAL)
    shot = ARTIFACTS / "token-reveal-prompt.png"
    assert wait_until(lambda: desk.pixel(desk.screenshot(shot), *map(int, point)) != (0, 0, 0)), "not drawn"
    desk.physical("sleep", "1.3")
    return point


def physical_reveal(desk: Desk, host: Copy, origin: tuple[int, int]) -> None:
    """The operator shows the token: Reveal token…, then Reveal, both with their own mouse."""
    revealed = len(audit_with(host, "token-revealed"))
    desk.physical("mousemove", *at(origin, REVEAL_TOKEN), "click", "1")
    desk.physical("mousemove", *reveal_button(desk), "click", "1")
    assert wait_until(lambda: len(audit_with(host, "token-revealed")) == revealed + 1, timeout=10), host.log()
    assert wait_until(lambda: not desk.visible_window(REVEAL_TITLE), timeout=10), "the reveal stayed open"
    # The operator clicks an empty spot of the window once first, as a hand does after
    # another window had the keyboard focus.
    desk.physical("mousemove", *at(origin, (500, 400)), "click", "1", "sleep", "0.5")


@pytest.fixture
def host(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "h", settings=SETTINGS + OPT_IN)


def test_the_token_shows_only_after_a_physical_click_on_reveal(host: Copy, desk: Desk) -> None:
    proc = start_host(host, desk)
    try:
        origin = open_agent_tab(desk)
        desk.physical("mousemove", *at(origin, PROVISION_NEW), "click", "1")
        assert wait_until(lambda: len(audit_with(host, "session-provisioned", "by=operator-ui")) == 1, timeout=30), (
            host.log()
        )
        (directory,) = session_dirs(host)
        token = tomllib.loads((directory / "mcec.settings").read_text())["McpAuthToken"]
        assert re.fullmatch(r"[0-9a-f]{64}", token), token
        # Codex's entries put the token in a note at the top of the handoff.
        choose_codex(desk, origin)
        hidden, first_age = ocr_settings_and_age(desk, origin, "token-hidden")
        assert "notstarted" in hidden and "stale" not in hidden, hidden
        assert "BEARER" in hidden, f"the note is not where it was looked for: {hidden}"
        assert token[:8] not in hidden and token[-12:] not in hidden, hidden
        assert token_run(origin, "token-hidden", token) <= 6, "more of the token shows than its last 4"

        # An injected click on Reveal reveals nothing.
        desk.physical("mousemove", *at(origin, REVEAL_TOKEN), "click", "1")
        point = reveal_button(desk)
        desk.injected("mousemove", *point, "click", "1")
        assert wait_until(lambda: bool(audit_with(host, "token-reveal-refused")), timeout=10), host.log()
        assert "reason=synthetic" in audit_with(host, "token-reveal-refused")[0]
        assert not audit_with(host, "token-revealed"), host.log()
        desk.physical("sleep", "0.5")
        still = ocr_settings(desk, origin, "token-after-injected-click")
        assert token[:8] not in still and token[-12:] not in still, still

        # The operator's own click shows it: Tesseract now reads it.
        desk.physical("sleep", "1.3", "mousemove", *point, "click", "1")
        assert wait_until(lambda: bool(audit_with(host, "token-revealed")), timeout=10), host.log()
        assert wait_until(lambda: not desk.visible_window(REVEAL_TITLE), timeout=10), "the reveal stayed open"
        desk.physical("sleep", "0.5")
        shown, later_age = ocr_settings_and_age(desk, origin, "token-revealed")
        assert token_run(origin, "token-revealed", token) >= 16, shown
        # Nobody clicked Refresh: the tab listed the copy again by itself.
        assert later_age > first_age, (first_age, later_age)
    finally:
        stop_process(proc)
    log = host.log()
    assert token not in log and token[:16] not in log and token[-16:] not in log, "the token reached mcec.log"
