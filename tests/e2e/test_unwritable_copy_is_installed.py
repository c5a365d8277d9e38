"""A copy in a directory its user cannot write counts as installed: it serves only the
bootstrap tools, whatever the settings beside it say.

Root ignores directory permissions, so when the suite runs as root (CI does) the copy runs as
the unprivileged `nobody` (through `setpriv`) in a directory owned by root; run as anyone else,
it runs as that user in a directory made read-only. The same copy, in the same directory, run
by a user who can write it (root, or the owner before the chmod), is the positive control: it
serves the whole surface its settings enable."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import anyio
import pytest

from mcec_e2e import HANG_GUARD_S, Copy, manual_copy, sdk_stdio

BOOTSTRAP = ["end-session", "provision-session"]

pytestmark = pytest.mark.anyio


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can traverse (pytest's own tmp dirs are private to root)."""
    top = Path(tempfile.mkdtemp(prefix="mcec-unwritable-"))
    top.chmod(0o755)
    try:
        yield top
    finally:
        for path in [top, *top.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(top)


async def tool_names(copy: Copy, wrapper: list[str] | None = None) -> list[str]:
    with anyio.fail_after(HANG_GUARD_S * 2):
        async with sdk_stdio(copy, wrapper=wrapper) as (session, _init):
            return sorted(t.name for t in (await session.list_tools()).tools)


async def test_a_copy_its_user_cannot_write_serves_only_the_bootstrap_tools(shared_dir: Path) -> None:
    copy = manual_copy(shared_dir / "c", settings="AgentCommandsEnabled = true\n", commands=("displays",))
    for path in [shared_dir / "c", *(shared_dir / "c").rglob("*")]:
        path.chmod(0o755 if path.is_dir() or path == copy.exe else 0o644)

    # The positive control: whoever can write the directory gets a manual copy.
    writable = await tool_names(copy)
    assert "displays" in writable and "session-status" in writable, writable

    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        # Its own home and state, so nothing but the directory's permissions differ.
        for name in ("home", "xdg-config", "xdg-state", "xdg-cache"):
            (copy.root / name).mkdir(exist_ok=True)
            os.chown(copy.root / name, nobody.pw_uid, nobody.pw_gid)
        wrapper = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups", "--"]
    else:
        copy.exe.parent.chmod(0o555)
        wrapper = None
        assert not os.access(copy.exe.parent, os.W_OK)
    assert await tool_names(copy, wrapper) == BOOTSTRAP
