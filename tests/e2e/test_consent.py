"""`request-command-access` end to end: a real `mcec mcp` on the inner display of an Xvfb +
Xephyr desk, driven by the official MCP Python SDK. The operator answers the consent prompt
with "physical" input sent through the outer display; injected input is sent on the inner one.

Also live reload: the operator edits `mcec.commands` while a client is connected."""

from __future__ import annotations

import ctypes
import json
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcec_e2e import REPO, Copy, free_port, host_settings, manual_copy, sdk_http, session_copy, start_host, unwrap_groups
from xdesk import Desk, Screen

TITLE = "mcec: an agent asks for more access"
REARM_TITLE = "mcec: emergency stop"
#: The prompt's buttons, from its window's top-left corner (they sit in a bottom panel of a
#: fixed-size window, so they do not move with the reason's length).
ALLOW_OFFSET = (36, 356)
DENY_OFFSET = (98, 356)
ARTIFACTS = REPO / "target" / "test-artifacts"
CHORD = "ctrl+alt+shift+s"
#: A point on the inner desktop where a click lands on nothing that matters.
HARMLESS = {"at": {"x": 1000, "y": 740}}

pytestmark = pytest.mark.anyio


@pytest.fixture
def desk():
    with Desk() as d:
        yield d


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("capture",))


class Client:
    """One connected session plus the tools/list_changed notifications it received."""

    def __init__(self, session: ClientSession, changes: list[int], instructions: str) -> None:
        self.s = session
        self.changes = changes
        self.instructions = instructions

    async def call(self, tool: str, args: dict | None = None) -> dict:
        result = await self.s.call_tool(tool, args or {})
        return json.loads(result.content[-1].text)

    async def code(self, tool: str, args: dict | None = None) -> str | None:
        env = await self.call(tool, args)
        return None if env["ok"] else env["error"]["code"]

    async def names(self) -> set[str]:
        return {t.name for t in (await self.s.list_tools()).tools}


@asynccontextmanager
async def agent(copy: Copy, display: str | None, **env: str):
    extra = {"DISPLAY": display} if display else {}
    # A hang guard, not a timed assertion: a prompt nobody answers ends in 30 s, not 120 s.
    environment = copy.env(**{"MCEC_TEST_CONSENT_TIMEOUT_MS": "30000", **extra, **env})
    if display is None:
        environment.pop("DISPLAY", None)
    params = StdioServerParameters(command=str(copy.exe), args=["mcp"], env=environment)
    changes: list[int] = []

    async def on_message(message) -> None:
        if isinstance(getattr(message, "root", message), types.ToolListChangedNotification):
            changes.append(1)

    errlog = copy.stderr_file().open("w")
    try:
        with unwrap_groups():
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, message_handler=on_message) as session:
                    init = await session.initialize()
                    yield Client(session, changes, init.instructions or "")
    finally:
        errlog.close()


async def until(predicate, timeout: float = 10.0) -> bool:
    """Poll `predicate` while letting the event loop run (the SDK's tasks need it)."""
    with anyio.move_on_after(timeout):
        while not predicate():
            await anyio.sleep(0.05)
    return bool(predicate())


def audit_with(copy: Copy, *words: str) -> list[str]:
    return [line for line in copy.log().splitlines() if "AGENT-AUDIT:" in line and all(w in line for w in words)]


class Request:
    """A `request-command-access` call running in the background while the test answers."""

    def __init__(self, client: Client, commands: list[str], reason: str) -> None:
        self.client = client
        self.args = {"commands": commands, "reason": reason}
        self.answer: dict | None = None

    async def run(self) -> None:
        self.answer = await self.client.call("request-command-access", self.args)

    def code(self) -> str | None:
        assert self.answer is not None, "no answer yet"
        return None if self.answer["ok"] else self.answer["error"]["code"]


async def button(desk: Desk, offset: tuple[int, int], settle: bool = True) -> list[str]:
    """Where a prompt button is, once the prompt is on screen and drawn."""
    assert await until(lambda: desk.visible_window(TITLE)), "the consent prompt did not open"
    origin = desk.window_origin(TITLE)
    assert origin is not None
    point = (origin[0] + offset[0], origin[1] + offset[1])
    shot = ARTIFACTS / "consent-prompt.png"
    assert await until(lambda: desk.pixel(desk.screenshot(shot), *point) != (0, 0, 0)), "prompt not drawn"
    # A click counts once the prompt has been on screen a moment (`SHOW_SETTLE`, 0.3 s).
    if settle:
        await anyio.sleep(0.6)
    return [str(point[0]), str(point[1])]


async def test_physical_allow_grants_at_once_and_a_restart_forgets_it(copy: Copy, desk: Desk) -> None:
    before = copy.commands_path.read_bytes()
    async with agent(copy, desk.inner) as c:
        assert "click" not in await c.names()
        assert await c.code("click", HARMLESS) == "command-disabled"
        status = (await c.call("session-status"))["result"]["commandAccess"]
        assert status["enabledTools"] == ["capture"] and "click" in status["requestableTools"]
        assert "send_command.chars" in status["requestableRawKinds"] and status["enabledRawKinds"] == []
        assert "never" in status["note"].lower() and "mcec.commands" in status["note"]
        connect_map = json.loads(c.instructions.split("commandAccess: ", 1)[1])
        assert connect_map == status, "initialize's instructions and session-status disagree"
        req = Request(c, ["click", "capture"], "click Save in the editor")
        async with anyio.create_task_group() as tg:
            tg.start_soon(req.run)
            allow = await button(desk, ALLOW_OFFSET)
            desk.physical("mousemove", *allow, "click", "1")
        assert req.answer is not None and req.answer["ok"], req.answer
        assert req.answer["result"]["granted"] == ["click"]
        assert req.answer["result"]["alreadyEnabled"] == ["capture"]
        assert await until(lambda: not desk.visible_window(TITLE)), "the prompt stayed open after Allow"
        assert "click" in await c.names()
        assert await until(lambda: len(c.changes) >= 1), "no notifications/tools/list_changed"
        assert await c.code("click", HARMLESS) is None
        access = (await c.call("session-status"))["result"]["commandAccess"]
        assert "click" in access["enabledTools"] and "click" not in access["requestableTools"]
    assert audit_with(copy, "consent; granted", "commands=click")
    assert copy.commands_path.read_bytes() == before, "a grant was written to mcec.commands"

    async with agent(copy, desk.inner) as c:
        assert "click" not in await c.names()
        assert await c.code("click", HARMLESS) == "command-disabled"
    assert copy.commands_path.read_bytes() == before


async def test_a_fresh_copy_with_no_files_asks_and_a_physical_allow_turns_it_on(tmp_path: Path, desk: Desk) -> None:
    fresh = manual_copy(tmp_path / "fresh")
    assert not any(fresh.config_dir.glob("mcec.*")), "the copy is not fresh"
    async with agent(fresh, desk.inner) as c:
        assert c.instructions.startswith("Nothing is enabled yet"), c.instructions
        assert await c.code("capture", {}) == "command-disabled"
        req = Request(c, ["capture", "click"], "look at the screen and click OK")
        async with anyio.create_task_group() as tg:
            tg.start_soon(req.run)
            allow = await button(desk, ALLOW_OFFSET)
            desk.physical("mousemove", *allow, "click", "1")
        assert req.answer is not None and req.answer["ok"], req.answer
        assert sorted(req.answer["result"]["granted"]) == ["capture", "click"]
        assert await c.code("capture", {}) is None
        assert await c.code("click", HARMLESS) is None
    assert not any(fresh.config_dir.glob("mcec.settings")) and not fresh.commands_path.exists()


async def test_physical_deny_is_sticky_and_no_prompt_opens_again(copy: Copy, desk: Desk) -> None:
    async with agent(copy, desk.inner) as c:
        req = Request(c, ["click", "type"], "fill in the form")
        async with anyio.create_task_group() as tg:
            tg.start_soon(req.run)
            deny = await button(desk, DENY_OFFSET)
            desk.physical("mousemove", *deny, "click", "1")
        assert req.code() == "consent-denied", req.answer
        assert await until(lambda: not desk.visible_window(TITLE))

        # Asking again, for one of them or with another one: answered at once, no window.
        for commands in (["type"], ["key", "click"]):
            again = Request(c, commands, "please")
            async with anyio.create_task_group() as tg:
                tg.start_soon(again.run)
                # Watch for the window for as long as the call runs, and a moment after.
                seen = False
                with anyio.move_on_after(1.0):
                    while True:
                        seen |= desk.visible_window(TITLE)
                        await anyio.sleep(0.05)
            assert again.code() == "consent-denied", again.answer
            assert not seen, "a prompt opened for a denied command"
        assert "click" not in await c.names() and await c.code("click", HARMLESS) == "command-disabled"
        access = (await c.call("session-status"))["result"]["commandAccess"]
        assert "click" not in access["requestableTools"] and "key" in access["requestableTools"]
    assert len(audit_with(copy, "consent-asked")) == 1, copy.log()
    assert len(audit_with(copy, "consent; denied")) == 1


async def test_injected_allow_is_refused_and_actuation_waits_while_capture_works(copy: Copy, desk: Desk) -> None:
    async with agent(copy, desk.inner) as c:
        req = Request(c, ["click"], "click OK")
        async with anyio.create_task_group() as tg:
            tg.start_soon(req.run)
            allow = await button(desk, ALLOW_OFFSET)

            # While the prompt is open: actuation and a second request wait, observation works.
            assert await c.code("click", HARMLESS) == "consent-pending"
            assert await c.code("request-command-access", {"commands": ["key"], "reason": "x"}) == "consent-pending"
            assert await c.code("capture", {}) is None

            desk.injected("mousemove", *allow, "click", "1")
            assert await until(lambda: bool(audit_with(copy, "consent-refused", "synthetic", "injected"))), copy.log()
            # The refusal is shown in the prompt, on the line above the buttons, in the refusal colour.
            shot = ARTIFACTS / "consent-injected-refused.png"
            line_y = int(allow[1]) - 28

            def refusal_drawn() -> bool:
                desk.screenshot(shot)
                return any(is_refusal_red(desk.pixel(shot, x, line_y)) for x in range(10, 300, 2))

            assert await until(refusal_drawn), f"no refusal in the prompt: {shot}"
            assert req.answer is None and desk.visible_window(TITLE), "an injected click answered the prompt"
            assert await c.code("click", HARMLESS) == "consent-pending"

            desk.physical("key", "Escape")
        assert req.code() == "consent-denied", req.answer
        assert await c.code("click", HARMLESS) == "command-disabled"
    assert not audit_with(copy, "consent; granted")


@pytest.mark.parametrize("key", ["Return", "Escape"])
async def test_enter_and_esc_do_not_grant(copy: Copy, desk: Desk, key: str) -> None:
    async with agent(copy, desk.inner) as c:
        req = Request(c, ["click"], "click OK")
        async with anyio.create_task_group() as tg:
            tg.start_soon(req.run)
            await button(desk, ALLOW_OFFSET)
            desk.physical("key", key)
        assert req.code() == "consent-denied", req.answer
        assert "click" not in await c.names()


def is_refusal_red(rgb: tuple[int, int, int]) -> bool:
    r, g, b = rgb
    return r > 180 and g < 150 and b < 150


def close_window(display: str, window: int) -> None:
    """What a window manager sends when the operator clicks a window's close button:
    `WM_PROTOCOLS`/`WM_DELETE_WINDOW` (no window manager runs on the inner display)."""
    x11 = ctypes.cdll.LoadLibrary("libX11.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XInternAtom.restype = ctypes.c_ulong
    x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x11.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
    x11.XFlush.argtypes = [ctypes.c_void_p]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]

    class ClientMessage(ctypes.Structure):
        _fields_ = [
            ("type", ctypes.c_int),
            ("serial", ctypes.c_ulong),
            ("send_event", ctypes.c_int),
            ("display", ctypes.c_void_p),
            ("window", ctypes.c_ulong),
            ("message_type", ctypes.c_ulong),
            ("format", ctypes.c_int),
            ("data", ctypes.c_long * 5),
        ]

    class Event(ctypes.Union):
        _fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]

    dpy = x11.XOpenDisplay(display.encode())
    assert dpy, f"cannot open {display}"
    event = Event()
    event.xclient.type = 33  # ClientMessage
    event.xclient.window = window
    event.xclient.message_type = x11.XInternAtom(dpy, b"WM_PROTOCOLS", 0)
    event.xclient.format = 32
    event.xclient.data[0] = x11.XInternAtom(dpy, b"WM_DELETE_WINDOW", 0)
    assert x11.XSendEvent(dpy, window, 0, 0, ctypes.byref(event))
    x11.XFlush(dpy)
    x11.XCloseDisplay(dpy)


async def test_closing_the_prompt_does_not_grant(copy: Copy, desk: Desk) -> None:
    async with agent(copy, desk.inner) as c:
        req = Request(c, ["click"], "click OK")
        async with anyio.create_task_group() as tg:
            tg.start_soon(req.run)
            await button(desk, ALLOW_OFFSET)
            for window in desk.window_ids(TITLE):
                close_window(desk.inner, int(window))
        assert req.code() == "consent-denied", req.answer
        assert "click" not in await c.names()


async def test_timeout_is_not_sticky(copy: Copy, desk: Desk) -> None:
    # Long enough that, on a loaded machine, the second prompt is found, drawn and answered with
    # Escape before it times out (1.5 s was not, once, beside a Windows build).
    async with agent(copy, desk.inner, MCEC_TEST_CONSENT_TIMEOUT_MS="4000") as c:
        req = Request(c, ["click"], "click OK")
        async with anyio.create_task_group() as tg:
            tg.start_soon(req.run)
            await button(desk, ALLOW_OFFSET, settle=False)
        assert req.code() == "consent-timeout", req.answer
        assert await until(lambda: not desk.visible_window(TITLE)), "the prompt stayed after the timeout"
        again = Request(c, ["click"], "click OK")
        async with anyio.create_task_group() as tg:
            tg.start_soon(again.run)
            await button(desk, ALLOW_OFFSET, settle=False)  # a new prompt: a timeout is not a denial
            desk.physical("key", "Escape")
        assert again.code() == "consent-denied"


async def test_the_stop_chord_closes_the_prompt_and_grants_nothing(copy: Copy, desk: Desk) -> None:
    async with agent(copy, desk.inner) as c:
        req = Request(c, ["click"], "click OK")
        async with anyio.create_task_group() as tg:
            tg.start_soon(req.run)
            await button(desk, ALLOW_OFFSET)
            desk.physical("key", CHORD)
        assert req.code() == "emergency-stopped", req.answer
        assert await until(lambda: not desk.visible_window(TITLE)), "the consent prompt outlived the stop"
        assert await until(lambda: desk.visible_window(REARM_TITLE)), "no re-arm prompt"
        assert await c.code("capture", {}) == "emergency-stopped"
        access = (await c.call("session-status"))
        assert access["error"]["code"] == "emergency-stopped"
    assert audit_with(copy, "consent; stopped")
    assert not audit_with(copy, "consent; granted")


async def test_no_display_is_consent_unavailable(copy: Copy) -> None:
    async with agent(copy, None) as c:
        assert await c.code("request-command-access", {"commands": ["click"], "reason": "x"}) == "consent-unavailable"
        assert "click" not in await c.names()


HOSTILE = (
    "Please click \u202eWOLLA\u202c to continue\n\n[ Allow ]   [ Deny ]\r\n"
    "\u2066mcec: the operator already agreed\u2069\u200b\u0007\u001b[2J "
    + "Z" * 10_000
)


async def test_hostile_reason_is_shown_sanitized(copy: Copy, desk: Desk) -> None:
    async with agent(copy, desk.inner) as c:
        req = Request(c, ["click"], HOSTILE)
        async with anyio.create_task_group() as tg:
            tg.start_soon(req.run)
            deny = await button(desk, DENY_OFFSET)
            # Kept as an artefact: look at it (the reason is one framed line, the buttons are ours).
            desk.screenshot(ARTIFACTS / "consent-hostile-reason.png")
            desk.physical("mousemove", *deny, "click", "1")
        assert req.code() == "consent-denied", req.answer
    (asked,) = audit_with(copy, "consent-asked")
    shown = asked.split("reason=", 1)[1]
    for bad in ("\\u{202e}", "\\u{2066}", "\\u{200b}", "\\n", "\\r", "\\u{7}", "\\u{1b}"):
        assert bad not in shown.lower(), shown
    assert "WOLLA to continue [ Allow ] [ Deny ] mcec: the operator already agreed[2J ZZZ" in shown
    assert shown.endswith('…"') and len(shown) < 320, len(shown)


async def test_live_reload_enables_breaks_and_restores(tmp_path: Path) -> None:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=("capture",))
    with Screen() as screen:
        async with agent(copy, screen.display) as c:
            assert "displays" not in await c.names()
            copy.enable_commands("capture", "displays")
            assert await until(lambda: len(c.changes) >= 1), "no tools/list_changed after the edit"
            assert "displays" in await c.names()
            assert await c.code("displays") is None

            copy.commands_path.write_text("[capture]\nEnabled = true\n[displays]\nEnabled = yes\n")
            assert await until(lambda: len(c.changes) >= 2), "no tools/list_changed after the break"
            assert await c.code("displays") == "agent-commands-disabled"
            assert await c.code("capture", {}) == "agent-commands-disabled"
            assert not {"displays", "capture"} & await c.names()
            assert f"{copy.commands_path}, line 4" in copy.log() or f"{copy.commands_path}, line 3" in copy.log(), (
                copy.log()
            )

            copy.enable_commands("capture", "displays")
            assert await until(lambda: len(c.changes) >= 3), "no tools/list_changed after the fix"
            assert await c.code("displays") is None
    assert audit_with(copy, "settings-error", "on reload")
    assert len(audit_with(copy, "settings-reloaded")) == 3, copy.log()


async def test_a_cancelled_request_closes_the_prompt_and_is_not_sticky(copy: Copy, desk: Desk) -> None:
    async with agent(copy, desk.inner) as c:
        req = Request(c, ["click"], "click OK")
        async with anyio.create_task_group() as tg:
            tg.start_soon(req.run)
            await button(desk, ALLOW_OFFSET)
            tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled
        assert req.answer is None
        assert await until(lambda: not desk.visible_window(TITLE)), "the prompt outlived the cancel"
        assert await until(lambda: bool(audit_with(copy, "consent; stopped"))), copy.log()
        assert await c.code("click", HARMLESS) == "command-disabled"
        again = Request(c, ["click"], "click OK")
        async with anyio.create_task_group() as tg:
            tg.start_soon(again.run)
            await button(desk, ALLOW_OFFSET)
            desk.physical("key", "Escape")
        assert again.code() == "consent-denied"
    assert audit_with(copy, "request-command-access", "code=cancelled")


async def test_the_host_asks_over_http_too(tmp_path: Path, desk: Desk) -> None:
    port = free_port()
    copy = manual_copy(tmp_path / "h", settings=host_settings(port), commands=("capture",))
    copy.extra_env["DISPLAY"] = desk.inner
    host = start_host(copy, port)
    try:
        async with sdk_http(host.url) as (session, init):
            assert "commandAccess" in (init.instructions or "")
            req_answer: list[dict] = []

            async def ask() -> None:
                args = {"commands": ["click"], "reason": "click OK"}
                result = await session.call_tool("request-command-access", args)
                req_answer.append(json.loads(result.content[-1].text))

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                allow = await button(desk, ALLOW_OFFSET)
                desk.physical("mousemove", *allow, "click", "1")
            assert req_answer[0]["ok"], req_answer
            assert "click" in {t.name for t in (await session.list_tools()).tools}
            result = await session.call_tool("click", HARMLESS)
            assert json.loads(result.content[-1].text)["ok"]
    finally:
        host.stop()
    assert audit_with(copy, "consent; granted", "commands=click")


async def test_launch_in_a_session_copy_only_through_consent(tmp_path: Path, desk: Desk) -> None:
    operator = manual_copy(tmp_path / "op", settings="AllowSessionProvisioning = true\n")
    async with agent(operator, None) as c:
        handoff = await c.call("provision-session", {"mcpServer": False})
    assert handoff["ok"], handoff
    session = session_copy(operator, handoff["result"])
    # The agent can write its copy's files: a `launch` it enables there is ignored.
    text = session.commands_path.read_text()
    assert "[launch]\nEnabled = false" in text, text
    session.commands_path.write_text(text.replace("[launch]\nEnabled = false", "[launch]\nEnabled = true"))
    async with agent(session, desk.inner) as c:
        assert "launch" not in await c.names() and "click" in await c.names()
        assert await c.code("launch", {"path": "/bin/true"}) == "command-disabled"
        req = Request(c, ["launch"], "start the editor")
        async with anyio.create_task_group() as tg:
            tg.start_soon(req.run)
            allow = await button(desk, ALLOW_OFFSET)
            desk.physical("mousemove", *allow, "click", "1")
        assert req.answer is not None and req.answer["ok"], req.answer
        assert req.answer["result"]["granted"] == ["launch"]
        assert "launch" in await c.names()
    assert "ignored (only the operator's consent enables it here)" in session.log()
