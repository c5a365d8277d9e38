"""A click that reaches an operator window of mcec.exe without a hand never re-arms, grants or
ticks (issue 23, the Windows half).

The operator windows are Win32 windows painted on the CPU (crates/operator/src/soft/win32.rs).
A program can click them without any input device: `PostMessageW`/`SendMessageW` of
`WM_LBUTTONDOWN`/`UP` or `BM_CLICK` (no low-level hook sees those at all), or `SendInput`
(the hook sees it flagged injected). mcec judges the event that pressed the control: the
window names it by the message's time and button, the hook's ring says whether a physical
device made that very event. So for the re-arm prompt, the consent prompt and the Agent tab
opt-in's confirmation, each of these is refused and audited:

* posted messages alone, with the pointer elsewhere and with the pointer on the control;
* posted messages 0.2 s after the operator's physical key press elsewhere;
* messages sent with `SendMessageW`, and `BM_CLICK`;
* a `SendInput` click.

The positive control in each test: the operator's own click (xdotool on Wine's Xvfb, which a
Windows hook sees as a device's) on the same control counts.

    scripts/windows-build && .venv/bin/python -m pytest -q tests/windows/test_message_clicks_wine.py
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from wine_desk import WineDesk
from test_mcec_wine import run, wine_copy
from test_operator_wine import (
    CHORD,
    PROMPT_TITLE,
    TARGET_TITLE,
    Target,
    code_of,
    rearm_button,
    wait_for_code,
    window_named,
)
from test_host_wine import (
    CHECKBOX,
    CONFIRM,
    CONSENT_TITLE,
    HOST_ORIGIN,
    HOST_TITLE,
    MENU_FIRST_ITEM,
    OPT_IN_TITLE,
    SETTINGS_ORIGIN,
    SETTINGS_TITLE,
    TOKEN,
    Request,
    at,
    consent_open,
    drawn,
    injected_click,
    open_menu,
    provision_code,
)
from mcec_e2e import audit_with, free_port, host_settings, sdk_http, sdk_stdio, start_host  # noqa: E402
from xdesk import PROBE_PATIENCE_S, wait_until  # noqa: E402

#: The audit event of a message-only click dropped before any widget saw it (as on X11 for a
#: `XSendEvent` one).
DROPPED = "synthetic-input-dropped"
#: Somewhere on the target window, away from every operator window.
ELSEWHERE = ["40", "700"]
#: A hang guard for the consent prompt, long enough for every attack below.
CONSENT_ENV = {"MCEC_TEST_CONSENT_TIMEOUT_MS": "120000"}


pytestmark = pytest.mark.usefixtures("no_stop_record")


def post(desk: WineDesk, how: str, title: str, point: list[str]) -> None:
    """Another program hands `title` a click at desktop `point` as window messages."""
    args = [how, title] if how == "bm-click" else [how, title, *point]
    out = desk.wine("mcec-post-click", *args)
    assert out.startswith("POSTED"), out


def attacks(desk: WineDesk, title: str, point: list[str]):
    """Every way in, as (name, action). Each is answered by one audit line: a drop or a refusal."""

    def posted_pointer_elsewhere():
        desk.xdotool("mousemove", *ELSEWHERE)
        post(desk, "post", title, point)

    def posted_pointer_on_the_control():
        desk.xdotool("mousemove", *point)
        post(desk, "post", title, point)

    def posted_after_a_physical_key():
        desk.xdotool("mousemove", *point)
        desk.focus(TARGET_TITLE)
        desk.xdotool("key", "a")
        time.sleep(0.2)
        post(desk, "post", title, point)

    def posted_after_a_physical_click_elsewhere():
        desk.xdotool("mousemove", *ELSEWHERE, "click", "1")
        post(desk, "post", title, point)

    def sent():
        desk.xdotool("mousemove", *point)
        post(desk, "send", title, point)

    def bm_click():
        post(desk, "bm-click", title, point)

    def send_input():
        injected_click(desk, point)

    return [
        ("posted, pointer elsewhere", posted_pointer_elsewhere),
        ("posted, pointer on the control", posted_pointer_on_the_control),
        ("posted 0.2 s after a physical key", posted_after_a_physical_key),
        ("posted after a physical click elsewhere", posted_after_a_physical_click_elsewhere),
        ("SendMessageW", sent),
        ("BM_CLICK", bm_click),
        ("SendInput", send_input),
    ]


def answered(copy, refusal: str) -> int:
    return len(audit_with(copy, refusal)) + len(audit_with(copy, DROPPED))


def run_attacks(desk: WineDesk, copy, title: str, point: list[str], refusal: str, counted: str) -> None:
    """Each attack, one after the other, each seen answered (dropped or refused) in the audit,
    and none counted (`counted`: the audit words of the decision honoured)."""
    for name, attack in attacks(desk, title, point):
        before = answered(copy, refusal)
        attack()
        assert wait_until(lambda: answered(copy, refusal) > before or audit_with(copy, counted), PROBE_PATIENCE_S), (
            f"{name}: nothing was audited\n{copy.log()}"
        )
        assert not audit_with(copy, counted), f"{name} counted as the operator's click:\n{copy.log()}"


def test_rearm_prompt_counts_only_the_physical_click(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", ("displays",))
    target = Target(desk, 0, 560, 1024, 200)

    async def main():
        async with sdk_stdio(copy) as (session, _):
            desk.xdotool("key", CHORD)
            assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
            assert wait_until(lambda: window_named(desk, PROMPT_TITLE), PROBE_PATIENCE_S), "no re-arm prompt"
            button = rearm_button()
            assert drawn(desk, button, "windows-message-rearm.png"), "the prompt was never drawn"
            await anyio.to_thread.run_sync(lambda: run_attacks(desk, copy, PROMPT_TITLE, button, "rearm-refused", "re-armed"))
            assert await code_of(session, "displays") == "emergency-stopped", copy.log()
            assert window_named(desk, PROMPT_TITLE), "the prompt stays after refused clicks"
            # The operator's own click on the same button re-arms.
            desk.xdotool("mousemove", *button, "click", "1")
            assert await wait_for_code(session, None) is None, copy.log()

    try:
        run(main)
    finally:
        target.close()
    assert_audited(copy, "rearm-refused")
    assert len(audit_with(copy, "re-armed")) == 1, copy.log()


def test_consent_prompt_grants_only_on_the_physical_click(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", ("capture", "displays"))
    target = Target(desk, 0, 620, 1024, 140)

    async def main():
        async with sdk_stdio(copy, env_extra=CONSENT_ENV) as (session, _):
            request = Request(session, ["click"])
            async with anyio.create_task_group() as tg:
                tg.start_soon(request.run)
                allow = await consent_open(desk)
                await anyio.to_thread.run_sync(
                    lambda: run_attacks(desk, copy, CONSENT_TITLE, allow, "consent-refused", "consent; granted")
                )
                assert request.answer is None and window_named(desk, CONSENT_TITLE), "a message click answered"
                # The operator's own click on Allow grants.
                desk.xdotool("mousemove", *allow, "click", "1")
            assert request.answer is not None and request.answer["ok"], request.answer
            assert request.answer["result"]["granted"] == ["click"]

    try:
        run(main)
    finally:
        target.close()
    assert_audited(copy, "consent-refused")
    assert len(audit_with(copy, "consent; granted")) == 1, copy.log()


def assert_audited(copy, refusal: str) -> None:
    """Every attack left a line saying which event was judged and why it did not count. A
    posted click is dropped when Wine has not moved the pointer onto the control yet, refused
    (`not-physical`) when it has: either way it is answered."""
    dropped, refused = audit_with(copy, DROPPED), audit_with(copy, refusal)
    log = copy.log()
    assert len(dropped) + len(refused) >= 7, log
    assert any("SendMessage" in l for l in dropped) and any("BM_CLICK" in l for l in dropped), dropped
    # Posted at the pointer 0.2 s after a physical key: no hook event at its time.
    assert any("not-physical" in l and "no raw event" in l for l in refused), refused
    # SendInput: the hook saw an injected event at its time.
    assert any("synthetic" in l and "injected raw event" in l for l in refused), refused


def test_opt_in_confirmation_ticks_only_on_the_physical_click(desk: WineDesk, tmp_path: Path) -> None:
    port = free_port()
    copy = wine_copy(desk, tmp_path, host_settings(port, TOKEN))
    host = start_host(copy, port, TOKEN)
    target = Target(desk, 0, 600, 1024, 160)
    try:
        assert wait_until(lambda: window_named(desk, HOST_TITLE), PROBE_PATIENCE_S), "no host window"
        open_menu(desk)
        desk.xdotool("mousemove", *at(HOST_ORIGIN, MENU_FIRST_ITEM), "click", "1")
        assert wait_until(lambda: window_named(desk, SETTINGS_TITLE), PROBE_PATIENCE_S), "no settings window"
        checkbox = at(SETTINGS_ORIGIN, CHECKBOX)
        assert drawn(desk, checkbox, "windows-message-agent-tab.png"), "the Agent tab was never drawn"
        # The checkbox, clicked by anyone, only opens the confirmation.
        desk.xdotool("mousemove", *checkbox, "click", "1")
        assert wait_until(lambda: window_named(desk, OPT_IN_TITLE), PROBE_PATIENCE_S), "no confirmation prompt"
        assert drawn(desk, CONFIRM, "windows-message-opt-in.png"), "the confirmation was never drawn"

        async def main():
            async with sdk_http(host.url, host.auth_headers()) as (session, _):
                assert await provision_code(session) == "provisioning-not-authorized"
                await anyio.to_thread.run_sync(
                    lambda: run_attacks(
                        desk, copy, OPT_IN_TITLE, CONFIRM, "provisioning-opt-in-refused", "provisioning-opt-in;"
                    )
                )
                assert await provision_code(session) == "provisioning-not-authorized"
                # The operator's own click on Confirm turns provisioning on.
                desk.xdotool("mousemove", *CONFIRM, "click", "1")
                assert await anyio.to_thread.run_sync(
                    lambda: wait_until(lambda: bool(audit_with(copy, "provisioning-opt-in;")), PROBE_PATIENCE_S)
                ), copy.log()
                assert await provision_code(session) is None, "provisioning stayed off after the physical Confirm"

        run(main)
    finally:
        target.close()
        host.stop()
    assert_audited(copy, "provisioning-opt-in-refused")
    assert "AllowSessionProvisioning = true" in copy.settings_path.read_text()
