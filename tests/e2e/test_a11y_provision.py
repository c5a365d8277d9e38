"""Reading the clipboard in a provisioned copy: `[clipboard.read]` is written into the session's
`mcec.commands` only when the agent's `commands` list names `clipboard.read`, never by default
(while `clipboard` itself, like the other desktop tools, is on by default). Build first:
`cargo build -p mcec`."""

from __future__ import annotations

import tomllib

from mcec_e2e import Copy, run_cli
from sessions_support import session_dirs


def commands_of(op: Copy, args: list[str]) -> dict:
    before = set(session_dirs(op))
    code, _out, err = run_cli(op, ["provision", "--no-mcp-server", *args])
    assert code == 0, err
    [sdir] = set(session_dirs(op)) - before
    return tomllib.loads((sdir / "mcec.commands").read_text())


def test_clipboard_read_only_when_the_agent_asks(operator: Copy) -> None:
    default = commands_of(operator, [])
    assert default["clipboard"]["Enabled"] is True and "read" not in default["clipboard"], default["clipboard"]
    asked = commands_of(operator, ["--commands", "clipboard,clipboard.read"])
    assert asked["clipboard"] == {"Enabled": True, "read": {"Enabled": True}}, asked
    not_asked = commands_of(operator, ["--commands", "clipboard"])
    assert not_asked["clipboard"] == {"Enabled": True}, not_asked
