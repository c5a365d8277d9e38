"""Wine on an Xvfb of its own, for mcec's Windows programs (built by scripts/windows-build).

The Xvfb that Wine draws on is the operator's desk: keys sent there with xdotool reach Wine
from the X server, and a Windows low-level hook sees them without `LLKHF_INJECTED`, as a
keyboard's. Keys a Windows program sends with `SendInput` carry the flag. Xvfb has no window
manager, so a Wine window gets keys only after `xdotool windowfocus --sync`.

`WineDesk` owns the Xvfb (picked with -displayfd, stopped by PID) and a fresh Wine prefix
(scripts/wine-prefix: wineboot plus the ProcessPrng shim); its wineserver is ended with
`wineserver -k` for that prefix only. wineboot takes 7 to 20 s, so it runs once per test run,
into a template prefix, and each desk gets a copy of it (about 2 s): a fresh prefix all the
same, nothing of one module's prefix reaches the next. `Probe` runs mcec-stop-probe.exe and
collects its lines.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from xdesk import PROBE_PATIENCE_S, start_server, stop_server, wait_until  # noqa: E402

WINE = "/usr/lib/wine/wine64"
WINESERVER = "/usr/lib/wine/wineserver"
BIN_DIR = Path(
    os.environ.get(
        "MCEC_WINDOWS_BIN_DIR",
        str(ROOT / "target" / "windows" / "x86_64-pc-windows-gnu" / "debug"),
    )
)
PROBE_TITLE = "mcec stop probe"


def exe(name: str) -> Path:
    path = BIN_DIR / f"{name}.exe"
    if not path.is_file():
        raise RuntimeError(f"{path} is missing: run scripts/windows-build")
    return path


_template: Path | None = None


def booted_prefix(env: dict[str, str]) -> Path:
    """A prefix booted once per test run (scripts/wine-prefix), to be copied, never used."""
    global _template
    if _template is None:
        parent = Path(tempfile.mkdtemp(prefix="mcec-wine-template-"))
        atexit.register(shutil.rmtree, parent, True)
        template = parent / "prefix"
        subprocess.run(
            [str(ROOT / "scripts" / "wine-prefix"), str(template)],
            env={**env, "WINEPREFIX": str(template)},
            check=True,
            capture_output=True,
            timeout=120,
        )
        _template = template
    return _template


class WineDesk:
    """Xvfb + a fresh Wine prefix. Use as a context manager.

    With `display`, Wine draws on that X server instead (its owner starts and stops it), so a
    bench can put Wine beside other clients of one desk."""

    def __init__(self, display: str | None = None) -> None:
        self._xvfb: subprocess.Popen | None = None
        if display is None:
            self._xvfb, self.display = start_server(
                ["Xvfb", "-screen", "0", "1024x768x24", "-nolisten", "tcp", "-noreset"],
                {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            )
        else:
            self.display = display
        self._dir = tempfile.TemporaryDirectory(prefix="mcec-wine-")
        self.prefix = Path(self._dir.name) / "prefix"
        try:
            subprocess.run(["cp", "-a", str(booted_prefix(self.env())), str(self.prefix)], check=True, timeout=120)
            subprocess.run(
                [str(ROOT / "scripts" / "wine-prefix"), str(self.prefix)],
                env=self.env(),
                check=True,
                capture_output=True,
                timeout=120,
            )
        except BaseException:
            self.close()
            raise

    def forget_stop_record(self) -> None:
        """Delete a stop recorded in the prefix by an earlier test (it would latch the next
        mcec.exe at start)."""
        for record_dir in (self.prefix / "drive_c" / "users").glob("*/AppData/Local/mcec/stop"):
            shutil.rmtree(record_dir)

    def __enter__(self) -> "WineDesk":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/root"),
            "DISPLAY": self.display,
            "WINEPREFIX": str(self.prefix),
            "WINEDEBUG": "-all",
            # winemenubuilder off: a shortcut made in the prefix (the MSI's Start-menu entry)
            # must not become a menu entry in the real $HOME.
            "WINEDLLOVERRIDES": "mscoree,mshtml=;winemenubuilder.exe=d",
        }

    def close(self) -> None:
        subprocess.run([WINESERVER, "-k"], env=self.env(), capture_output=True, timeout=30)
        if self._xvfb is not None:
            stop_server(self._xvfb)
        self._dir.cleanup()

    def xdotool(self, *args: str) -> str:
        """The operator's hand: xdotool on the X server Wine draws on."""
        out = subprocess.run(["xdotool", *args], env=self.env(), capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            raise RuntimeError(f"xdotool {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def wine(self, name: str, *args: str) -> str:
        """Runs one of the project's Windows programs to completion; returns its stdout."""
        out = subprocess.run([WINE, str(exe(name)), *args], env=self.env(), capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"{name} {' '.join(args)} exited {out.returncode}: {out.stdout} {out.stderr}")
        return out.stdout

    def focus(self, title: str) -> str:
        """Gives a Wine window X focus (no window manager here) and returns its X id."""
        ids: list[str] = []

        def found() -> bool:
            nonlocal ids
            out = subprocess.run(["xdotool", "search", "--name", title], env=self.env(), capture_output=True, text=True)
            ids = out.stdout.split()
            return bool(ids)

        if not wait_until(found, timeout=PROBE_PATIENCE_S):
            raise RuntimeError(f"no window named {title!r}")
        self.xdotool("windowfocus", "--sync", ids[0])
        return ids[0]


class Probe:
    """mcec-stop-probe.exe under Wine: its hook monitor's lines, collected as they come."""

    def __init__(self, desk: WineDesk, *args: str) -> None:
        self.desk = desk
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._proc = subprocess.Popen(
            [WINE, str(exe("mcec-stop-probe")), *args],
            env=desk.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        ready = self.wait_for(lambda l: l.startswith(("READY", "HOOK-FAILED", "WINDOW-FAILED")))
        if not ready.startswith("READY"):
            self.close()
            raise RuntimeError(f"probe did not start: {ready}")
        desk.focus(PROBE_TITLE)

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self.lines.append("EXITED")
            self._cond.notify_all()

    def wait_for(self, pred, count: int = 1) -> str:
        """Waits (hang guard only) until `count` lines match; returns the last one matched."""
        deadline = time.monotonic() + PROBE_PATIENCE_S
        with self._cond:
            while True:
                hits = [l for l in self.lines if pred(l)]
                if len(hits) >= count:
                    return hits[count - 1]
                left = deadline - time.monotonic()
                if left <= 0 or "EXITED" in self.lines:
                    raise AssertionError(f"probe never printed the awaited line; it printed: {self.lines}")
                self._cond.wait(left)

    def snapshot(self, prefix: str) -> list[str]:
        with self._cond:
            return [l for l in self.lines if l.startswith(prefix)]

    def close(self) -> list[str]:
        """Closes stdin (the probe prints STATS and exits) and returns every line."""
        if self._proc.stdin and not self._proc.stdin.closed:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=PROBE_PATIENCE_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)
        with self._cond:
            return list(self.lines)

    def __enter__(self) -> "Probe":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def fields(line: str) -> dict[str, str]:
    """`EVENT key vk=0x53 down=1 ...` -> {"vk": "0x53", "down": "1", ...}."""
    return dict(part.split("=", 1) for part in line.split() if "=" in part)


def key_events(lines: list[str]) -> list[dict[str, str]]:
    return [fields(l) for l in lines if l.startswith("EVENT key ")]
