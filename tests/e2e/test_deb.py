"""The Debian package: built by scripts/build-deb from the binary under test (no rebuild),
installed with dpkg into a scratch root, and the installed-copy flow run from what it put
there: the bootstrap-only surface, `mcec provision`, and a per-connection session copy through
`mcec mcp --session`. Its man page and completions are the ones the binary generates."""

from __future__ import annotations

import configparser
import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from mcec_e2e import BIN, REPO, Copy, place_binary, run_cli, sdk_stdio, session_copy
from sessions_support import OPERATOR_SETTINGS, session_dirs

pytestmark = pytest.mark.anyio

BOOTSTRAP_TOOLS = {"provision-session", "end-session"}
PAYLOAD = {
    "usr/bin/mcec",
    "usr/share/applications/mcec.desktop",
    "usr/share/mcec/autostart/mcec.desktop",
    "usr/share/man/man1/mcec.1.gz",
    "usr/share/bash-completion/completions/mcec",
    "usr/share/zsh/vendor-completions/_mcec",
    "usr/share/fish/vendor_completions.d/mcec.fish",
    "usr/share/doc/mcec/copyright",
}


@pytest.fixture(scope="module")
def installed_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package built and installed (dpkg --root) into a scratch root."""
    if shutil.which("dpkg-deb") is None:
        pytest.fail("dpkg-deb is missing (Debian's dpkg package)")
    work = tmp_path_factory.mktemp("deb")
    built = subprocess.run(
        [str(REPO / "scripts" / "build-deb"), "--bin", str(BIN), "--out", str(work / "out")],
        capture_output=True,
        text=True,
        check=True,
    )
    deb = Path(built.stdout.strip())
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    files = {line.split()[-1].removeprefix("./") for line in listing.splitlines() if not line.startswith("d")}
    assert files == PAYLOAD, files ^ PAYLOAD
    root = work / "root"
    for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log"):
        (root / d).mkdir(parents=True)
    (root / "var/lib/dpkg/status").touch()
    # The scratch root's package database knows no libc6: only that dependency is forced.
    subprocess.run(
        ["dpkg", f"--root={root}", "--force-depends", "--force-script-chrootless", "-i", str(deb)],
        capture_output=True,
        check=True,
    )
    status = subprocess.run(["dpkg", f"--root={root}", "-s", "mcec"], capture_output=True, text=True, check=True)
    assert "Status: install ok installed" in status.stdout
    return root


def installed(root: Path, home: Path) -> Copy:
    """The packaged binary as an installed copy (its prefix named as one)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "home").mkdir(exist_ok=True)
    config_dir = home / "xdg-config" / "mcec"
    config_dir.mkdir(parents=True)
    return Copy(
        root=home,
        exe=root / "usr/bin/mcec",
        config_dir=config_dir,
        extra_env={"MCEC_EXTRA_INSTALL_PREFIXES": str(root / "usr")},
    )


def test_the_desktop_entries_start_the_host_and_autostart_is_opt_in(installed_root: Path) -> None:
    for rel in ("usr/share/applications/mcec.desktop", "usr/share/mcec/autostart/mcec.desktop"):
        entry = configparser.ConfigParser(interpolation=None)
        entry.read(installed_root / rel)
        assert entry["Desktop Entry"]["Type"] == "Application"
        assert entry["Desktop Entry"]["Exec"] == "mcec", rel
    assert not (installed_root / "etc/xdg/autostart").exists(), "autostart must be the operator's choice"


def test_man_page_and_completions_come_from_the_cli(installed_root: Path, tmp_path: Path) -> None:
    roff = gzip.decompress((installed_root / "usr/share/man/man1/mcec.1.gz").read_bytes()).decode()
    man = roff.replace("\\-", "-")
    assert ".TH mcec 1" in man, man[:200]
    for word in ("--session", "completions", "config", "provision", "sessions"):
        assert word in man, word
    bash = installed_root / "usr/share/bash-completion/completions/mcec"
    subprocess.run(["bash", "-n", str(bash)], check=True)
    assert "--session" in bash.read_text()
    exe = place_binary(tmp_path / "mcec")
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=True).stdout
    assert version.split() == ["mcec", version.split()[1]] and version.split()[1][0].isdigit(), version


async def test_the_installed_flow_runs_from_the_package(installed_root: Path, tmp_path: Path) -> None:
    op = installed(installed_root, tmp_path / "op")
    async with sdk_stdio(op) as (session, init):
        assert {t.name for t in (await session.list_tools()).tools} == BOOTSTRAP_TOOLS
        assert "installed copy" in (init.instructions or "")
    op.write_settings(OPERATOR_SETTINGS)
    code, out, err = run_cli(op, ["provision", "--json", "--no-mcp-server"])
    assert code == 0, err
    handoff = json.loads(out)
    async with sdk_stdio(session_copy(op, handoff)) as (session, _):
        assert "capture" in {t.name for t in (await session.list_tools()).tools}
    async with sdk_stdio(op, mcp_args=("--session",)) as (session, _):
        assert "capture" in {t.name for t in (await session.list_tools()).tools}
        assert len(session_dirs(op)) == 2
    assert [d.name for d in session_dirs(op)] == [handoff["sessionId"]], "the connection's copy is gone"
