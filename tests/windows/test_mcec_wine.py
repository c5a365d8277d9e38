"""mcec.exe under Wine, driven from Linux by the official MCP Python SDK.

Each test runs a *manual copy*: mcec.exe in a fresh directory (Wine sees it on its Z: drive)
with its own `mcec.settings`, started as `wine64 mcec.exe ...` by a two-line launcher beside
it, so the e2e harness (tests/e2e/mcec_e2e.py) drives it as it drives the Linux binary. The
Windows program finds its own places through the known folders of the test's Wine prefix:
sessions under `%LOCALAPPDATA%\\mcec\\sessions`, i.e. `<prefix>/drive_c/users/<user>/AppData/
Local/mcec/sessions` on the Linux side.

    scripts/windows-build && .venv/bin/python -m pytest -q tests/windows/test_mcec_wine.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path, PureWindowsPath

import anyio

from wine_desk import WINE, WineDesk, exe
from mcec_e2e import (  # noqa: E402 (wine_desk puts tests/e2e on the path)
    HANG_GUARD_S,
    Copy,
    RawStdio,
    envelope_of,
    free_port,
    host_settings,
    iter_json_lines,
    raw_http,
    rpc,
    sdk_envelope,
    sdk_http,
    sdk_stdio,
    start_host,
)

OPT_IN = "AgentCommandsEnabled = true\nAllowSessionProvisioning = true\n"
#: A provision locks the directory it builds through `.mcec.lock` (Windows cannot lock a
#: directory handle), so the finished session has that file from the start.
SESSION_FILES = {"mcec.exe", "mcec.settings", "mcec.commands", ".mcec-session", ".mcec.lock"}
#: Wine's first start of a program in a fresh prefix is slow on a loaded machine.
WINE_GUARD_S = HANG_GUARD_S * 4


def wine_copy(desk: WineDesk, root: Path, settings: str | None = None, commands: tuple[str, ...] = ()) -> Copy:
    """mcec.exe in `root/copy/`, its settings beside it, and `root/copy/mcec` to start it."""
    copy_dir = root / "copy"
    copy_dir.mkdir(parents=True)
    (root / "home").mkdir()
    shutil.copy2(exe("mcec"), copy_dir / "mcec.exe")
    launcher = copy_dir / "mcec"
    launcher.write_text(f'#!/bin/sh\nexec {WINE} "$(dirname "$0")/mcec.exe" "$@"\n')
    launcher.chmod(0o755)
    copy = Copy(root=root, exe=launcher, config_dir=copy_dir, extra_env=desk.env())
    if settings is not None:
        copy.write_settings(settings)
    if commands:
        copy.enable_commands(*commands)
    return copy


def linux_path(desk: WineDesk, windows_path: str) -> Path:
    """The Linux path of a path mcec.exe printed (`C:` is the prefix's drive_c, `Z:` is /)."""
    text = windows_path.removeprefix("\\\\?\\")
    p = PureWindowsPath(text)
    drive = p.drive.upper()
    base = {"C:": desk.prefix / "drive_c", "Z:": Path("/")}[drive]
    found = base
    for part in p.parts[1:]:
        # Wine's drive_c is case-insensitive; the Linux side is not.
        match = [c for c in found.iterdir() if c.name.lower() == part.lower()] if found.is_dir() else []
        found = match[0] if match else found / part
    return found


def run(main) -> None:
    async def guarded():
        with anyio.fail_after(WINE_GUARD_S):
            await main()

    anyio.run(guarded)


async def call(session, name: str, **args) -> dict:
    return sdk_envelope(await session.call_tool(name, args))


def session_copy(desk: WineDesk, handoff: dict, root: Path) -> Copy:
    """The session copy of a handoff, run as `wine64 <session>/mcec.exe`; its stderr files go
    to `root`, never into the session directory."""
    exe_path = linux_path(desk, handoff["exePath"])
    return Copy(root=root, exe=exe_path, config_dir=exe_path.parent, extra_env=desk.env())


# --------------------------------------------------------------------------- front door


def test_stdio_front_door_through_the_sdk(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", ("capture", "click", "windows"))

    async def main():
        async with sdk_stdio(copy) as (session, init):
            assert init.server_info.name == "mcec", init
            names = {t.name for t in (await session.list_tools()).tools}
            assert {"session-status", "capture", "click", "windows"} <= names, names
            status = await call(session, "session-status")
            assert status["ok"] is True, status
            # Bad input is answered with the envelope, and the server goes on serving.
            bad = await session.call_tool("click", {"button": 42})
            env = sdk_envelope(bad)
            assert bad.is_error and env["error"]["code"] == "bad-arguments", env
            assert (await call(session, "session-status"))["ok"] is True

    run(main)


def test_stdout_carries_only_json_rpc(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n")
    server = RawStdio(copy)
    try:
        init = server.initialize()
        assert init["result"]["serverInfo"]["name"] == "mcec", init
        server.send_bytes(b"this is not json\n")
        env, is_error = envelope_of(server.call("session-status", {}, id=7))
        assert env["ok"] is True and not is_error, env
        assert server.wait_exit() == 0, server.stderr()
    finally:
        server.kill()
    messages = list(iter_json_lines(server.stdout_lines))
    assert len(messages) == len(server.stdout_lines) >= 3, server.stdout_lines
    assert all(isinstance(m, dict) and m.get("jsonrpc") == "2.0" for m in messages), messages
    # Positive control for the check above: the logs went somewhere, just not to stdout.
    assert "mcec" in server.stderr()


# --------------------------------------------------------------------------- HTTP host


def test_http_host_on_loopback_refuses_a_request_without_the_bearer(desk: WineDesk, tmp_path: Path) -> None:
    port, token = free_port(), "wine-host-token-0123456789abcdef"
    copy = wine_copy(desk, tmp_path, host_settings(port, token))
    host = start_host(copy, port, token)
    try:
        body = json.dumps(rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "t", "version": "0"}})).encode()
        for headers in ({}, {"Authorization": "Bearer not-the-token"}):
            refused = raw_http(port, body=body, headers=headers)
            assert refused.status == 401, (headers, refused)
        assert token.encode() not in refused.body

        async def main():
            async with sdk_http(host.url, host.auth_headers()) as (session, init):
                assert init.server_info.name == "mcec"
                assert (await call(session, "session-status"))["ok"] is True

        run(main)
        listening = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True).stdout
        local = [line.split()[3] for line in listening.splitlines()]
        assert local and all(a.startswith("127.0.0.1:") for a in local), listening
    finally:
        code = host.stop()
    assert token not in host.stderr() and token not in copy.log()
    assert code == 0, f"Ctrl+C ends the host cleanly: exit {code}\n{host.stderr()}"


# --------------------------------------------------------------------------- sessions


def test_a_provisioned_session_runs_from_its_own_directory_and_ends(desk: WineDesk, tmp_path: Path) -> None:
    operator = wine_copy(desk, tmp_path, OPT_IN)

    async def main():
        async with sdk_stdio(operator) as (session, _):
            provisioned = await call(session, "provision-session")
            assert provisioned["ok"] is True, provisioned
            handoff = provisioned["result"]
            directory = linux_path(desk, handoff["directory"])
            assert re.search(r"\\AppData\\Local\\mcec\\sessions\\[0-9a-f]{12}$", handoff["directory"]), handoff
            assert {p.name for p in directory.iterdir()} == SESSION_FILES
            assert handoff["token"] in (directory / "mcec.settings").read_text()

            sess = session_copy(desk, handoff, tmp_path)
            async with sdk_stdio(sess, wrapper=[WINE]) as (inner, _):
                status = await call(inner, "session-status")
                assert status["ok"] is True, status
                refused = await call(session, "end-session", sessionId=handoff["sessionId"], token=handoff["token"])
                assert refused["error"]["code"] == "session-running", refused
                assert directory.is_dir()
            wrong = await call(session, "end-session", sessionId=handoff["sessionId"], token="x" * 43)
            assert wrong["error"]["code"] == "session-token-invalid", wrong
            ended = await call(session, "end-session", sessionId=handoff["sessionId"], token=handoff["token"])
            assert ended["ok"] is True and ended["result"]["removed"] is True, ended
            assert not directory.exists()

    run(main)


def test_removal_never_follows_a_link_out_of_the_session(desk: WineDesk, tmp_path: Path) -> None:
    """Wine 8 cannot make a junction (`mklink /J` fails there), and it shows a Unix symlink to a
    directory as a plain directory: its own `cmd /c rmdir /s` empties the target. So the link
    planted here is a Unix one, the harder case. Removal must leave the target alone."""
    operator = wine_copy(desk, tmp_path / "op", OPT_IN)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary").write_text("alive")

    async def main():
        async with sdk_stdio(operator) as (session, _):
            handoff = (await call(session, "provision-session"))["result"]
            directory = linux_path(desk, handoff["directory"])
            os.symlink(outside, directory / "link")
            # Positive control: the link leads to the canary.
            assert (directory / "link" / "canary").read_text() == "alive"
            ended = await call(session, "end-session", sessionId=handoff["sessionId"], token=handoff["token"])
            assert ended["ok"] is True, ended
            assert not directory.exists()

    run(main)
    assert (outside / "canary").read_text() == "alive"
    assert sorted(os.listdir(outside)) == ["canary"]


# --------------------------------------------------------------------------- desktop


def test_windows_and_capture_through_the_sdk(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", ("displays", "windows", "capture"))

    async def main():
        async with sdk_stdio(copy) as (session, _):
            displays = await call(session, "displays")
            assert displays["ok"] is True, displays
            listed = await call(session, "windows")
            assert listed["ok"] is True, listed
            shot = await session.call_tool("capture", {})
            assert not shot.is_error, shot
            images = [c for c in shot.content if getattr(c, "type", None) == "image"]
            assert len(images) == 1 and images[0].data, shot

    run(main)


#: What Wine 8 answers `IDXGIOutput1::DuplicateOutput` with (its dxgi has a stub): E_NOTIMPL.
#: D3D11CreateDevice itself works there (wined3d on Mesa's llvmpipe, feature level 11_0).
WINE_DUPLICATION_REFUSAL = ("0x80004001", "DuplicateOutput")


def test_capture_falls_back_to_gdi_where_wine_has_no_desktop_duplication(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", ("capture",))

    async def main():
        async with sdk_stdio(copy) as (session, _):
            for args in ({"region": {"x": 0, "y": 0, "width": 64, "height": 48}}, {}):
                shot = await call(session, "capture", **args)
                assert shot["ok"] is True, shot
                assert shot["result"]["via"] == "gdi", shot

    run(main)
    decided = re.findall(
        r"capture: DXGI desktop duplication unavailable \((0x[0-9a-f]{8}) at ([\w:]+)\), using GDI", copy.log()
    )
    # Decided once for the process, not at each of the two captures.
    assert decided == [WINE_DUPLICATION_REFUSAL], copy.log()
