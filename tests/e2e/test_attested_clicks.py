"""A verdict only the operator may give (re-arm, a consent prompt's Allow, the provisioning
opt-in) counts only for the physical event that pressed the control, end to end: a real `mcec`
on the inner display of an Xvfb + Xephyr desk, driven by the official MCP Python SDK.

The forgeries: a click or key sent straight to the window with `XSendEvent`
(`mcec-sendevent`, what `xdotool click --window` does), alone, 0.2 s after the operator's own
key press elsewhere, after the operator's own click elsewhere, and stamped with the time of
the operator's own press; and an XTEST (injected) click on the control. None re-arms, grants
or ticks, and the audit says why. The positive control in each test: the operator's own click
on the same control does. And the agent-only route: an agent with nothing but mcec's own
`click`/`type`/`key` types a forging loop into a terminal before the stop; the operator's
chord, keys and clicks after it never re-arm (a click the loop's pointer moves spoil is
refused as steered)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Callable

import anyio
import pytest

from mcec_e2e import REPO, Copy, audit_with, code_of, manual_copy, run_cli, sdk_stdio, start_process, stop_process, wait_for_code
from test_agent_tab import CHECKBOX, CONFIRM, CONFIRM_TITLE, HOST_TITLE, SETTINGS_TITLE, at, open_agent_tab
from xdesk import Desk, wait_until

SENDEVENT = Path(os.environ.get("MCEC_SENDEVENT_BIN", str(REPO / "target" / "debug" / "mcec-sendevent")))
ARTIFACTS = REPO / "target" / "test-artifacts"
CHORD = "ctrl+alt+shift+s"
REARM_TITLE = "mcec: emergency stop"
REARM_OFFSET = (41, 130)
CONSENT_TITLE = "mcec: an agent asks for more access"
ALLOW_OFFSET = (36, 356)
#: On the inner desktop, away from every mcec window: where the operator clicks "elsewhere".
ELSEWHERE = ("1000", "740")
#: `mcec_rules::activation::SHOW_SETTLE` (0.3 s) and a margin: the operator's own click on a
#: window that just appeared waits this long, as a hand does (a wait before acting, not an
#: assertion about speed).
SETTLE_S = 0.6
#: `mcec_rules::activation::STEER_WINDOW` (1 s) and a margin: after a program moved the pointer
#: (an injected click), the operator's own click waits this long to count.
STEER_S = 1.3
DROPPED = "synthetic-input-dropped"

pytestmark = pytest.mark.anyio



def control(desk: Desk, title: str, offset: tuple[int, int], shot: str) -> list[str]:
    """Where a prompt's button is once the prompt is on screen and drawn."""
    assert wait_until(lambda: desk.visible_window(title), timeout=30), f"{title!r} did not open"
    origin = desk.window_origin(title)
    assert origin is not None
    point = at(origin, offset)
    path = ARTIFACTS / shot
    assert wait_until(lambda: desk.pixel(desk.screenshot(path), *map(int, point)) != (0, 0, 0)), "not drawn"
    return point


def sendevent(desk: Desk, *args: str, background: bool = False) -> subprocess.Popen | None:
    if not SENDEVENT.is_file():
        pytest.fail(f"{SENDEVENT} is missing; build it with `cargo build -p mcec-desktop-x11 --bin mcec-sendevent`")
    argv = [str(SENDEVENT), *args]
    if background:
        return subprocess.Popen(argv, env=desk.inner_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = subprocess.run(argv, env=desk.inner_env(), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return None


def forgeries(desk: Desk, title: str, origin_offset: tuple[int, int]) -> list[tuple[str, Callable[[], None]]]:
    """The four synthetic clicks on the control at `origin_offset` in the window `title`, each
    after what the operator's hands did first: (what, send it)."""
    x, y = map(str, origin_offset)

    def alone() -> None:
        sendevent(desk, "click", title, x, y)

    def after_key() -> None:
        desk.physical("key", "x")
        time.sleep(0.2)
        sendevent(desk, "click", title, x, y)

    def after_click() -> None:
        desk.physical("mousemove", *ELSEWHERE, "click", "1")
        sendevent(desk, "click", title, x, y)

    def with_the_operators_time() -> None:
        waiting = sendevent(desk, "--time-of-raw", "click", title, x, y, background=True)
        assert waiting is not None and waiting.stdout is not None
        assert "waiting" in waiting.stdout.readline()
        desk.physical("mousemove", *ELSEWHERE, "click", "1")
        _, err = waiting.communicate(timeout=30)
        assert waiting.returncode == 0, err

    return [
        ("a synthetic click alone", alone),
        ("a synthetic click 0.2 s after the operator's key press", after_key),
        ("a synthetic click after the operator's click elsewhere", after_click),
        ("a synthetic click stamped with the time of the operator's own click", with_the_operators_time),
    ]


def dropped_count(copy: Copy) -> int:
    return len(audit_with(copy, DROPPED))


async def test_rearm_counts_only_the_physical_click_on_re_arm(tmp_path: Path, desk: Desk) -> None:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("displays",))
    async with sdk_stdio(copy, env_extra={"DISPLAY": desk.inner}) as (s, _init):
        assert await code_of(s, "displays") is None
        desk.physical("key", CHORD)
        assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped"
        button = control(desk, REARM_TITLE, REARM_OFFSET, "attested-rearm-prompt.png")
        for what, forge in forgeries(desk, REARM_TITLE, REARM_OFFSET):
            before, refused = dropped_count(copy), len(audit_with(copy, "rearm-refused"))
            forge()
            # Decided: dropped (and audited), or (the old build) re-armed or refused.
            assert wait_until(
                lambda: dropped_count(copy) > before
                or audit_with(copy, "re-armed by the operator")
                or len(audit_with(copy, "rearm-refused")) > refused,
                timeout=10,
            ), f"{what}: nothing happened\n{copy.log()}"
            assert not audit_with(copy, "re-armed by the operator"), f"{what} re-armed:\n{copy.log()}"
            assert await code_of(s, "displays") == "emergency-stopped", what
            assert dropped_count(copy) > before, f"{what} reached the prompt:\n{copy.log()}"
        assert f'sent by a program (XSendEvent) to "{REARM_TITLE}" was ignored' in audit_with(copy, DROPPED)[0]

        # An XTEST click on Re-arm presses the button, and is refused: the events were injected.
        desk.injected("mousemove", *button, "click", "1")
        assert wait_until(lambda: bool(audit_with(copy, "rearm-refused")), timeout=10), copy.log()
        refused = audit_with(copy, "rearm-refused")[0]
        assert "injected" in refused and "button 1 press at time" in refused, refused
        assert await code_of(s, "displays") == "emergency-stopped"

        # The operator's own click on Re-arm re-arms, and the audit names the judged events.
        time.sleep(STEER_S)
        desk.physical("mousemove", *button, "click", "1")
        assert await wait_for_code(s, None) is None, copy.log()
    rearmed = audit_with(copy, "re-armed by the operator")
    assert len(rearmed) == 1 and "physical device" in rearmed[0] and "counted" in rearmed[0], rearmed


async def test_consent_allow_counts_only_the_physical_click(tmp_path: Path, desk: Desk) -> None:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("capture",))
    env = {"DISPLAY": desk.inner, "MCEC_TEST_CONSENT_TIMEOUT_MS": "60000"}
    async with sdk_stdio(copy, env_extra=env) as (s, _init):
        answer: dict = {}

        async def ask() -> None:
            result = await s.call_tool("request-command-access", {"commands": ["click"], "reason": "click OK"})
            answer["env"] = json.loads(result.content[-1].text)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            button = await anyio.to_thread.run_sync(
                lambda: control(desk, CONSENT_TITLE, ALLOW_OFFSET, "attested-consent-prompt.png")
            )
            for what, forge in forgeries(desk, CONSENT_TITLE, ALLOW_OFFSET):
                before, refused = dropped_count(copy), len(audit_with(copy, "consent-refused"))
                await anyio.to_thread.run_sync(forge)
                decided = await anyio.to_thread.run_sync(
                    lambda: wait_until(
                        lambda: dropped_count(copy) > before
                        or "env" in answer
                        or len(audit_with(copy, "consent-refused")) > refused,
                        timeout=10,
                    )
                )
                assert decided, f"{what}: nothing happened\n{copy.log()}"
                assert "env" not in answer, f"{what} answered the prompt: {answer}"
                assert dropped_count(copy) > before, f"{what} reached the prompt:\n{copy.log()}"
            assert f'to "{CONSENT_TITLE}" was ignored' in audit_with(copy, DROPPED)[0]

            desk.injected("mousemove", *button, "click", "1")
            await anyio.to_thread.run_sync(lambda: wait_until(lambda: bool(audit_with(copy, "consent-refused")), 10))
            refused = audit_with(copy, "consent-refused")
            assert refused and "injected" in refused[0], copy.log()
            assert "env" not in answer

            await anyio.sleep(STEER_S)
            desk.physical("mousemove", *button, "click", "1")
        assert answer["env"]["ok"] and answer["env"]["result"]["granted"] == ["click"], answer
    assert audit_with(copy, "consent-allowed", "physical device"), copy.log()


def test_the_opt_in_counts_only_the_physical_click_on_confirm(tmp_path: Path, desk: Desk) -> None:
    settings = "AgentCommandsEnabled = true\n"
    copy = manual_copy(tmp_path / "c", settings=settings)
    proc, _ = start_process(copy, [], env_extra={"DISPLAY": desk.inner})
    try:
        origin = open_agent_tab(desk)
        # The settings window's toolkit takes keys a program sends it (Tab to the checkbox,
        # Space ticks it): after the operator's own click elsewhere, that only opens the
        # confirmation prompt.
        desk.physical("mousemove", *ELSEWHERE, "click", "1")
        for key in ("Tab", "Tab", "space"):
            sendevent(desk, "key", SETTINGS_TITLE, key)
        desk.physical("sleep", "1")
        assert copy.settings_path.read_text() == settings, "synthetic keys changed the opt-in"
        assert not audit_with(copy, "provisioning-opt-in;"), copy.log()

        # The checkbox (any click, this one the operator's) opens the confirmation.
        desk.physical("mousemove", *at(origin, CHECKBOX), "click", "1")
        button = control(desk, CONFIRM_TITLE, CONFIRM, "attested-opt-in-prompt.png")
        for what, forge in forgeries(desk, CONFIRM_TITLE, CONFIRM):
            before = dropped_count(copy)
            forge()
            assert wait_until(
                lambda: dropped_count(copy) > before or audit_with(copy, "provisioning-opt-in"), timeout=10
            ), f"{what}: nothing happened\n{copy.log()}"
            assert not audit_with(copy, "provisioning-opt-in;"), f"{what} ticked the opt-in:\n{copy.log()}"
            assert dropped_count(copy) > before, f"{what} reached the prompt:\n{copy.log()}"
        assert copy.settings_path.read_text() == settings

        desk.injected("mousemove", *button, "click", "1")
        assert wait_until(lambda: bool(audit_with(copy, "provisioning-opt-in-refused")), timeout=10), copy.log()
        refused = audit_with(copy, "provisioning-opt-in-refused")[0]
        assert "reason=synthetic" in refused and "injected" in refused, refused
        assert copy.settings_path.read_text() == settings

        time.sleep(STEER_S)
        desk.physical("mousemove", *button, "click", "1")
        assert wait_until(lambda: bool(audit_with(copy, "provisioning-opt-in;")), timeout=10), copy.log()
        assert "physical device" in audit_with(copy, "provisioning-opt-in;")[0]
        assert copy.settings_path.read_text() == settings + "AllowSessionProvisioning = true\n"
        assert wait_until(lambda: not desk.visible_window(CONFIRM_TITLE)), "the confirmation stayed open"
        rc, _, err = run_cli(copy, ["provision", "--json", "--no-mcp-server"])
        assert rc == 0, err
    finally:
        stop_process(proc)


def test_the_host_menu_re_arms_through_the_attested_prompt(tmp_path: Path, desk: Desk) -> None:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n")
    proc, _ = start_process(copy, [], env_extra={"DISPLAY": desk.inner})
    try:
        assert wait_until(lambda: desk.visible_window(HOST_TITLE), timeout=30), "the host window did not open"
        desk.physical("key", CHORD)
        assert wait_until(lambda: bool(audit_with(copy, "emergency-stop; engaged")), timeout=10), copy.log()
        button = control(desk, REARM_TITLE, REARM_OFFSET, "attested-host-prompt.png")
        before = dropped_count(copy)
        sendevent(desk, "click", REARM_TITLE, *map(str, REARM_OFFSET))
        assert wait_until(lambda: dropped_count(copy) > before, timeout=10), copy.log()
        time.sleep(SETTLE_S)
        desk.physical("mousemove", *button, "click", "1")
        assert wait_until(lambda: bool(audit_with(copy, "re-armed by the operator")), timeout=10), copy.log()
    finally:
        stop_process(proc)


LOOP = (
    "while :; do for w in $(xdotool search --name '{title}'); do "
    "xdotool mousemove --window $w {x} {y} click --window $w 1; done; sleep 0.2; done"
)


async def test_an_agent_typed_forging_loop_never_re_arms(tmp_path: Path, desk: Desk) -> None:
    copy = manual_copy(
        tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("displays", "click", "type", "key")
    )
    term = subprocess.Popen(
        ["xterm", "-geometry", "100x10+0+0", "-title", "agent terminal"],
        env=desk.inner_env(HOME=str(tmp_path)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_until(lambda: desk.visible_window("agent terminal"), timeout=30), "xterm did not open"
        async with sdk_stdio(copy, env_extra={"DISPLAY": desk.inner}) as (s, _init):
            # The agent, with mcec's own tools only: click into the terminal, type the loop.
            assert await code_of(s, "click", {"at": {"x": 100, "y": 60}}) is None
            loop = LOOP.format(title=REARM_TITLE, x=REARM_OFFSET[0], y=REARM_OFFSET[1])
            assert await code_of(s, "type", {"text": loop}) is None
            assert await code_of(s, "key", {"keys": "Return"}) is None
            # The operator stops, then types and clicks a few times elsewhere.
            desk.physical("key", CHORD)
            assert await wait_for_code(s, "emergency-stopped") == "emergency-stopped"
            button = control(desk, REARM_TITLE, REARM_OFFSET, "attested-agent-loop.png")
            assert wait_until(lambda: dropped_count(copy) >= 3, timeout=30), f"the loop never clicked:\n{copy.log()}"
            for _ in range(3):
                desk.physical("key", "x")
                desk.physical("mousemove", *ELSEWHERE, "click", "1")
                time.sleep(0.3)
            seen = dropped_count(copy)
            assert wait_until(lambda: dropped_count(copy) >= seen + 3, timeout=30), copy.log()
            assert not audit_with(copy, "re-armed by the operator"), copy.log()
            assert await code_of(s, "displays") == "emergency-stopped"
            # The loop moves the pointer onto Re-arm five times a second, so a click of the
            # operator's that lands there (on purpose or not) is spoilt, and the audit says so.
            desk.physical("mousemove", *button, "click", "1")
            assert wait_until(lambda: bool(audit_with(copy, "rearm-refused", "pointer-steered")), timeout=10), (
                copy.log()
            )
            assert await code_of(s, "displays") == "emergency-stopped"
            # The operator closes the terminal; then their own click on Re-arm re-arms.
            term.kill()
            term.wait(timeout=10)
            time.sleep(STEER_S)
            desk.physical("mousemove", *button, "click", "1")
            assert await wait_for_code(s, None) is None, copy.log()
    finally:
        term.kill()
        term.wait(timeout=10)
