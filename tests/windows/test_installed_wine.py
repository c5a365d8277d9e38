"""An installed copy of mcec.exe under Wine: the executable under the prefix's
`C:\\Program Files\\mcec\\`, started by that Windows path as a Start-menu shortcut would.

Such a copy never serves the agent surface (contract, "Installed copy"): `mcec.exe mcp` lists
and serves only `provision-session` and `end-session` (every other tool answers
`bootstrap-only`), whatever its settings say, and its host refuses to start the HTTP front door,
pointing at provisioning. Its settings are read from `%APPDATA%\\mcec\\`, never from beside the
executable. Each test has its control: the same executable with the same settings as a manual
copy (outside `Program Files`) does serve.

    scripts/windows-build && .venv/bin/python -m pytest -q tests/windows/test_installed_wine.py
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from wine_desk import WINE, WineDesk, exe
from test_mcec_wine import WINE_GUARD_S, call, run, wine_copy
from mcec_e2e import (  # noqa: E402 (wine_desk puts tests/e2e on the path)
    Copy,
    audit_with,
    free_port,
    host_settings,
    sdk_envelope,
    sdk_stdio,
    start_host,
    start_process,
    stop_process,
)

INSTALL_DIR = r"C:\Program Files\mcec"
BOOTSTRAP_TOOLS = ["end-session", "provision-session"]
EVERYTHING = "AgentCommandsEnabled = true\n"
COMMANDS = ("capture", "click", "displays")


def roaming(desk: WineDesk) -> Path:
    """`%APPDATA%` of the prefix's user, on the Linux side."""
    found = [p for p in (desk.prefix / "drive_c" / "users").glob("*/AppData/Roaming") if p.parent.parent.name != "Public"]
    assert len(found) == 1, found
    return found[0]


def installed_copy(desk: WineDesk, root: Path, settings: str) -> Copy:
    """mcec.exe in `C:\\Program Files\\mcec\\`, run by that path; its settings (and the same
    settings beside the executable, which must not count) turn everything on."""
    program_files = desk.prefix / "drive_c" / "Program Files"
    assert program_files.is_dir(), "wineboot makes C:\\Program Files"
    install = program_files / "mcec"
    if install.exists():
        shutil.rmtree(install)
    install.mkdir()
    shutil.copy2(exe("mcec"), install / "mcec.exe")
    (install / "mcec.settings").write_text(settings)
    root.mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    launcher = root / "mcec"
    launcher.write_text(f"#!/bin/sh\nexec {WINE} '{INSTALL_DIR}\\mcec.exe' \"$@\"\n")
    launcher.chmod(0o755)
    config = roaming(desk) / "mcec"
    if config.exists():
        shutil.rmtree(config)
    copy = Copy(root=root, exe=launcher, config_dir=config, extra_env=desk.env())
    copy.write_settings(settings)
    copy.enable_commands(*COMMANDS)
    return copy


def test_an_installed_copy_serves_only_the_bootstrap_tools(desk: WineDesk, tmp_path: Path) -> None:
    installed = installed_copy(desk, tmp_path / "installed", EVERYTHING)
    manual = wine_copy(desk, tmp_path / "manual", EVERYTHING, COMMANDS)

    async def main():
        # Control: the same executable and settings outside Program Files serve the desktop.
        async with sdk_stdio(manual) as (session, _):
            assert (await call(session, "session-status"))["ok"] is True
            assert (await call(session, "displays"))["ok"] is True

        async with sdk_stdio(installed) as (session, init):
            assert init.server_info.name == "mcec"
            assert "bootstrap-only" in (init.instructions or ""), init.instructions
            names = sorted(t.name for t in (await session.list_tools()).tools)
            assert names == BOOTSTRAP_TOOLS, names
            for name, args in [("session-status", {}), ("displays", {}), ("capture", {}),
                               ("click", {"x": 1, "y": 1}), ("no-such-tool", {})]:
                result = await session.call_tool(name, args)
                env = sdk_envelope(result)
                assert result.is_error and env["error"]["code"] == "bootstrap-only", (name, env)
                assert "provision-session" in env["error"]["detail"], env
            # The bootstrap tools answer with their own gates (the opt-in is off), never bootstrap-only.
            for name, args in [("provision-session", {}), ("end-session", {"sessionId": "0" * 12, "token": "x" * 43})]:
                env = await call(session, name, **args)
                assert env.get("error", {}).get("code") != "bootstrap-only", (name, env)

    run(main)
    assert len(audit_with(installed, "bootstrap-only")) == 5, installed.log()
    assert "installed copy: true" in installed.log(), installed.log()
    # The installed copy logs to %APPDATA%\mcec, never beside the executable.
    assert not (desk.prefix / "drive_c" / "Program Files" / "mcec" / "mcec.log").exists()


def test_an_installed_copy_refuses_the_http_front_door(desk: WineDesk, tmp_path: Path) -> None:
    port = free_port()
    installed = installed_copy(desk, tmp_path / "installed", host_settings(port))
    proc, stderr_path = start_process(installed, [])
    try:
        code = proc.wait(timeout=WINE_GUARD_S)
    except subprocess.TimeoutExpired:
        stop_process(proc)
        raise AssertionError(f"the installed host kept running:\n{stderr_path.read_text(errors='replace')}") from None
    stderr = stderr_path.read_text(errors="replace")
    assert code != 0, stderr
    assert "installed copy" in stderr and "never serves agents over HTTP" in stderr, stderr
    assert "provision" in stderr.lower() and INSTALL_DIR in stderr, stderr
    assert "panicked" not in stderr, stderr
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()

    # Control: the same settings in a manual copy start the front door.
    manual = wine_copy(desk, tmp_path / "manual", host_settings(port))
    host = start_host(manual, port)
    try:
        assert host.proc.poll() is None
    finally:
        host.stop()
