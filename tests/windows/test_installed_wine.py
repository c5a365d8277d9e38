"""mcec's Windows installer under Wine, and the installed copy it makes.

`wine msiexec /i` installs the MSI that `scripts/windows-build --package --debug` makes from
the debug build (the same build the other Wine tests run) into the prefix's
`C:\\Program Files\\mcec\\`; the tests start that `mcec.exe` by its Windows path, as the
Start-menu shortcut does, and end with `wine msiexec /x`.

Such a copy never serves the agent surface (contract, "Installed copy"): `mcec.exe mcp` lists
and serves only `provision-session` and `end-session` (every other tool answers
`bootstrap-only`), whatever its settings say, and its host refuses to start the HTTP front door,
pointing at provisioning. Its settings are read from `%APPDATA%\\mcec\\`, never from beside the
executable. Each refusal has its control: the same executable with the same settings as a manual
copy (outside `Program Files`) does serve; and a session the installed copy provisions (under
`%LOCALAPPDATA%\\mcec\\sessions`) serves everything with its token. The installer adds a
Start-menu shortcut and an Add/Remove Programs entry and removes both, and its files, on
uninstall; the user's session copies and settings stay.

    scripts/windows-build --package --debug && .venv/bin/python -m pytest -q tests/windows/test_installed_wine.py
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest

from wine_desk import BIN_DIR, ROOT, WINE, WineDesk, exe
from test_mcec_wine import OPT_IN, SESSION_FILES, WINE_GUARD_S, call, linux_path, run, wine_copy
from mcec_e2e import (  # noqa: E402 (wine_desk puts tests/e2e on the path)
    Copy,
    audit_with,
    free_port,
    host_settings,
    raw_http,
    rpc,
    sdk_envelope,
    sdk_http,
    sdk_stdio,
    start_host,
    start_process,
    stop_process,
)

INSTALL_DIR = r"C:\Program Files\mcec"
BOOTSTRAP_TOOLS = ["end-session", "provision-session"]
#: Said only by an installed copy's `initialize` (every copy's instructions explain the code).
INSTALLED_NOTE = "installed copy of mcec, which is bootstrap-only"
EVERYTHING = "AgentCommandsEnabled = true\n"
COMMANDS = ("capture", "click", "displays")
#: What the MSI installs into INSTALL_DIR, and the zip holds under `mcec-<version>/`.
PACKAGED_FILES = {"mcec.exe", "LICENSE.txt"}
UNINSTALL_KEY = r"HKLM\Software\Microsoft\Windows\CurrentVersion\Uninstall"
#: The shortcut component's key path (packaging/windows/mcec.wxs).
SHORTCUT_KEY = r"HKLM\Software\mcec"


def cargo_version() -> str:
    return tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]["version"]


def package(suffix: str) -> Path:
    """The debug build's `.msi` or `.zip`, made from the mcec.exe the other tests run."""
    path = BIN_DIR / "package" / f"mcec-{cargo_version()}-x86_64.{suffix}"
    if not path.is_file() or path.stat().st_mtime < exe("mcec").stat().st_mtime:
        raise RuntimeError(f"{path} is missing or older than mcec.exe: run scripts/windows-build --package --debug")
    return path


def windows_path(path: Path) -> str:
    """A Linux path as Wine's Z: drive shows it."""
    return "Z:" + str(path).replace("/", "\\")


def reg_query(desk: WineDesk, key: str, *args: str) -> str | None:
    """`reg query` in the prefix: its output, or None when the key does not exist (any other
    failure raises, so an absence is never read from a broken query)."""
    out = subprocess.run([WINE, "reg", "query", key, *args], env=desk.env(), capture_output=True, text=True,
                         timeout=WINE_GUARD_S)
    if out.returncode == 0:
        return out.stdout
    if "unable to find" in (out.stdout + out.stderr).lower():
        return None
    raise RuntimeError(f"reg query {key} exited {out.returncode}: {out.stdout} {out.stderr}")


def uninstall_entries(desk: WineDesk) -> dict[str, dict[str, str]]:
    """Add/Remove Programs entries whose DisplayName is mcec: {subkey: {value: data}}."""
    listing = reg_query(desk, UNINSTALL_KEY, "/s")
    assert listing is not None, f"{UNINSTALL_KEY} is missing from the prefix"
    entries: dict[str, dict[str, str]] = {}
    for block in listing.split("\n\n"):
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines or not lines[0].startswith("HKEY_"):
            continue
        values = {}
        for line in lines[1:]:
            parts = line.strip().split(None, 2)
            if len(parts) >= 2 and parts[1].startswith("REG_"):
                values[parts[0]] = parts[2] if len(parts) == 3 else ""
        if values.get("DisplayName") == "mcec":
            entries[lines[0].rsplit("\\", 1)[1]] = values
    return entries


def start_menu_shortcuts(desk: WineDesk) -> list[Path]:
    """`mcec.lnk` in any Start menu of the prefix: the machine's, or (where Wine 8 puts a
    per-machine install's shortcut) its user's."""
    drive_c = desk.prefix / "drive_c"
    menus = [drive_c / "ProgramData" / "Microsoft" / "Windows" / "Start Menu",
             *(drive_c / "users").glob("*/AppData/Roaming/Microsoft/Windows/Start Menu")]
    return [lnk for menu in menus for lnk in menu.rglob("*.lnk") if lnk.name.lower() == "mcec.lnk"]


class Msi:
    """The debug MSI and its state in the module's prefix: each test installs it if it is not
    (the last one uninstalls it), so any test also runs alone."""

    def __init__(self, desk: WineDesk, log_dir: Path) -> None:
        self.desk, self.path, self.log_dir = desk, package("msi"), log_dir
        self.installed = False

    def msiexec(self, action: str) -> None:
        log = self.log_dir / f"msiexec{action.replace('/', '-')}.log"
        out = subprocess.run([WINE, "msiexec", action, windows_path(self.path), "/qn", "/l*v", windows_path(log)],
                             env=self.desk.env(), capture_output=True, text=True, timeout=WINE_GUARD_S)
        detail = log.read_text(errors="replace")[-4000:] if log.exists() else out.stderr
        assert out.returncode == 0, f"msiexec {action} exited {out.returncode}:\n{out.stderr}\n{detail}"

    def install(self) -> None:
        if not self.installed:
            self.msiexec("/i")
            self.installed = True

    def uninstall(self) -> None:
        self.msiexec("/x")
        self.installed = False


@pytest.fixture(scope="module")
def msi(desk: WineDesk, tmp_path_factory: pytest.TempPathFactory) -> Msi:
    return Msi(desk, tmp_path_factory.mktemp("msiexec"))


def roaming(desk: WineDesk) -> Path:
    """`%APPDATA%` of the prefix's user, on the Linux side."""
    found = [p for p in (desk.prefix / "drive_c" / "users").glob("*/AppData/Roaming") if p.parent.parent.name != "Public"]
    assert len(found) == 1, found
    return found[0]


def install_dir(desk: WineDesk) -> Path:
    return desk.prefix / "drive_c" / "Program Files" / "mcec"


def wine_launcher(path: Path, windows_exe: str) -> Path:
    """A script at `path` that runs `windows_exe` (a Windows path) under Wine with its arguments."""
    path.write_text(f"#!/bin/sh\nexec {WINE} '{windows_exe}' \"$@\"\n")
    path.chmod(0o755)
    return path


def installed_copy(desk: WineDesk, msi: Msi, root: Path, settings: str) -> Copy:
    """The MSI's mcec.exe in `C:\\Program Files\\mcec\\`, run by that path; its settings in
    `%APPDATA%\\mcec` (and the same settings beside the executable, which must not count)."""
    msi.install()
    (install_dir(desk) / "mcec.settings").write_text(settings)
    root.mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    config = roaming(desk) / "mcec"
    if config.exists():
        shutil.rmtree(config)
    copy = Copy(root=root, exe=wine_launcher(root / "mcec", INSTALL_DIR + r"\mcec.exe"), config_dir=config,
                extra_env=desk.env())
    copy.write_settings(settings)
    copy.enable_commands(*COMMANDS)
    return copy


def test_an_installed_copy_serves_only_the_bootstrap_tools(desk: WineDesk, msi: Msi, tmp_path: Path) -> None:
    installed = installed_copy(desk, msi, tmp_path / "installed", EVERYTHING)
    manual = wine_copy(desk, tmp_path / "manual", EVERYTHING, COMMANDS)

    async def main():
        # Control: the same executable and settings outside Program Files serve the desktop.
        async with sdk_stdio(manual) as (session, _):
            assert (await call(session, "session-status"))["ok"] is True
            assert (await call(session, "displays"))["ok"] is True

        async with sdk_stdio(installed) as (session, init):
            assert init.server_info.name == "mcec"
            assert INSTALLED_NOTE in (init.instructions or ""), init.instructions
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
    assert not (install_dir(desk) / "mcec.log").exists()


def test_an_installed_copy_refuses_the_http_front_door(desk: WineDesk, msi: Msi, tmp_path: Path) -> None:
    port = free_port()
    installed = installed_copy(desk, msi, tmp_path / "installed", host_settings(port))
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


async def provision(session, desk: WineDesk) -> tuple[dict, Path]:
    """A session provisioned through `session` (an installed copy's): its handoff and directory."""
    provisioned = await call(session, "provision-session", commands=list(COMMANDS))
    assert provisioned["ok"] is True, provisioned
    handoff = provisioned["result"]
    assert re.search(r"\\AppData\\Local\\mcec\\sessions\\[0-9a-f]{12}$", handoff["directory"]), handoff
    directory = linux_path(desk, handoff["directory"])
    assert {p.name for p in directory.iterdir()} == SESSION_FILES
    return handoff, directory


def test_the_installed_copy_provisions_a_session_that_serves_everything(desk: WineDesk, msi: Msi, tmp_path: Path) -> None:
    installed = installed_copy(desk, msi, tmp_path / "installed", OPT_IN)
    root = tmp_path / "session"
    (root / "home").mkdir(parents=True)

    async def main():
        async with sdk_stdio(installed) as (session, _):
            handoff, directory = await provision(session, desk)
            assert (directory / "mcec.exe").read_bytes() == (install_dir(desk) / "mcec.exe").read_bytes()
            assert handoff["mcpServerEnabled"] is True and handoff["authorization"] == f"Bearer {handoff['token']}"
            sess = Copy(root=root, exe=wine_launcher(root / "mcec", handoff["exePath"]), config_dir=directory,
                        extra_env=desk.env())
            host = start_host(sess, handoff["port"], handoff["token"])
            try:
                # Its front door wants its token: none, or another, is refused.
                body = json.dumps(rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                     "clientInfo": {"name": "t", "version": "0"}})).encode()
                for headers in ({}, {"Authorization": "Bearer " + "0" * len(handoff["token"])}):
                    assert raw_http(handoff["port"], body=body, headers=headers).status == 401, headers
                async with sdk_http(handoff["mcpEndpoint"], {"Authorization": handoff["authorization"]}) as (inner, init):
                    assert INSTALLED_NOTE not in (init.instructions or ""), init.instructions
                    names = {t.name for t in (await inner.list_tools()).tools}
                    assert {"session-status", *COMMANDS} <= names and not names <= set(BOOTSTRAP_TOOLS), names
                    assert (await call(inner, "session-status"))["ok"] is True
                    assert (await call(inner, "displays"))["ok"] is True
            finally:
                host.stop()
            ended = await call(session, "end-session", sessionId=handoff["sessionId"], token=handoff["token"])
            assert ended["ok"] is True and ended["result"]["removed"] is True, ended
            assert not directory.exists()

    run(main)


def test_the_msi_adds_a_shortcut_and_an_uninstall_entry_and_removes_all_it_installed(
    desk: WineDesk, msi: Msi, tmp_path: Path
) -> None:
    version = cargo_version()
    installed = installed_copy(desk, msi, tmp_path / "installed", OPT_IN)
    install = install_dir(desk)
    # Planted by installed_copy (settings beside the exe must not count): not the installer's.
    (install / "mcec.settings").unlink()
    assert {p.name for p in install.iterdir()} == PACKAGED_FILES
    # The zip, for a manual copy, holds the very same files.
    with zipfile.ZipFile(package("zip")) as z:
        files = sorted(n for n in z.namelist() if not n.endswith("/"))
        assert files == sorted(f"mcec-{version}/{name}" for name in PACKAGED_FILES), z.namelist()
        for name in PACKAGED_FILES:
            assert z.read(f"mcec-{version}/{name}") == (install / name).read_bytes(), name

    entries = uninstall_entries(desk)
    assert len(entries) == 1, entries
    [(product_code, entry)] = entries.items()
    assert re.fullmatch(r"\{[0-9A-F]{8}(-[0-9A-F]{4}){3}-[0-9A-F]{12}\}", product_code), product_code
    assert entry["DisplayVersion"] == version and entry["Publisher"] == "the mcec authors", entry
    assert entry["UninstallString"].lower() == f"msiexec.exe /x{product_code}".lower(), entry
    assert entry["NoModify"] == "0x1", entry
    shortcuts = start_menu_shortcuts(desk)
    assert len(shortcuts) == 1, f"one Start-menu shortcut: {shortcuts}"
    target = shortcuts[0].read_bytes()
    assert any(f"{INSTALL_DIR}\\mcec.exe".encode(enc) in target for enc in ("utf-16-le", "latin-1")), target
    assert reg_query(desk, SHORTCUT_KEY) is not None

    # A session the user provisioned from the installed copy is theirs, as are their settings.
    kept: list = []

    async def main():
        async with sdk_stdio(installed) as (session, _):
            kept.extend(await provision(session, desk))

    run(main)
    handoff, directory = kept

    msi.uninstall()
    assert not install.exists(), list(install.iterdir())
    assert start_menu_shortcuts(desk) == []
    assert uninstall_entries(desk) == {}
    assert reg_query(desk, UNINSTALL_KEY + "\\" + product_code) is None
    assert reg_query(desk, SHORTCUT_KEY) is None
    # Windows Installer removes only what it installed: the session copy and %APPDATA%\mcec stay
    # (the reaper removes the session after 12 hours at the next mcec's start, or end-session).
    assert {p.name for p in directory.iterdir()} == SESSION_FILES, handoff
    assert installed.settings_path.read_text() == OPT_IN
