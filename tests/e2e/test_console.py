"""The host window's console (issue 25): as the display's guard, plain `mcec` lists every
agent served on the display by its client's name, and its Activity pane says what each did in
plain words. Two `mcec mcp` agents named differently in `initialize` each make a call; the
host window, read by Tesseract, names both and says the call's narration.

Real X (Xvfb + Xephyr), real processes, the official MCP Python SDK; the screenshot is kept."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from mcec_e2e import code_of, host_settings, manual_copy, sdk_http, sdk_stdio, start_host
from test_agent_tab import HOST_TITLE
from test_guard import ARTIFACTS, PATIENCE, agents, guards, joined
from test_stop_command import window_text
from xdesk import Desk, wait_until

pytestmark = pytest.mark.anyio

NAMES = ("alphabot", "bravobot")


async def test_the_console_names_both_agents_and_says_what_they_did(
    tmp_path: Path, desk: Desk, port: int, token: str
) -> None:
    copies = agents(tmp_path, 2)
    host_copy = manual_copy(tmp_path / "host", settings=host_settings(port, token), commands=("displays",))
    host_copy.extra_env["DISPLAY"] = desk.inner
    async with AsyncExitStack() as stack:
        host = start_host(host_copy, port, token)
        stack.callback(host.stop)
        await stack.enter_async_context(sdk_http(host.url, host.auth_headers()))
        assert wait_until(lambda: bool(guards([host_copy])), PATIENCE), host_copy.log()
        sessions = []
        for copy, name in zip(copies, NAMES, strict=True):
            session, _ = await stack.enter_async_context(
                sdk_stdio(copy, env_extra={"DISPLAY": desk.inner}, client_name=name)
            )
            sessions.append(session)
        assert wait_until(lambda: joined([host_copy]) == 2, PATIENCE), host_copy.log()
        for session in sessions:
            assert await code_of(session, "displays") is None
        assert wait_until(lambda: desk.visible_window(HOST_TITLE), PATIENCE), "the host window did not open"
        origin = desk.window_origin(HOST_TITLE)
        assert origin is not None
        shot = ARTIFACTS / "console-two-agents.png"

        def says_all() -> bool:
            text = window_text(desk, shot, origin).lower()
            # The Agents pane's last action and the Activity pane's timed lines (the banner,
            # which may cover part of the window, says neither `last:` nor `utc`).
            return all(name in text for name in NAMES) and "last: listed the displays" in text and "utc" in text

        assert wait_until(says_all, PATIENCE), window_text(desk, shot, origin)
        text = window_text(desk, shot, origin).lower()
        assert "agents" in text and "activity" in text, text
