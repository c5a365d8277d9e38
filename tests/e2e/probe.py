"""`mcec-testwin` as a test fixture: a window on some display that draws a known pattern and
prints every input event it receives, read line by line (shared by the desktop and the stop
tests)."""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Protocol

from mcec_e2e import HANG_GUARD_S, REPO

TESTWIN = Path(os.environ.get("MCEC_TESTWIN_BIN", str(REPO / "target" / "debug" / "mcec-testwin")))


class HasEnv(Protocol):
    def env(self) -> dict[str, str]: ...


class ProbeWindow:
    """One `mcec-testwin` process and the event lines it prints; killed by PID on close."""

    def __init__(self, screen: HasEnv, *args: str) -> None:
        self.proc = subprocess.Popen(
            [str(TESTWIN), *args], env=screen.env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.id = int(self.wait_for(lambda line: line.startswith("ready")).split()[1])

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\n"))

    def wait_for(self, want: Callable[[str], bool]) -> str:
        deadline = time.monotonic() + HANG_GUARD_S
        seen = []
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if want(line):
                return line
            seen.append(line)
        raise AssertionError(f"the test window never printed the line wanted; it printed {seen[-20:]}")

    def drain(self, quiet: float = 0.3) -> list[str]:
        """Every line printed until none came for `quiet` seconds."""
        lines = []
        while True:
            try:
                lines.append(self._lines.get(timeout=quiet))
            except queue.Empty:
                return lines

    def typed(self, count: int) -> str:
        """The next `count` characters the window received as key presses."""
        out = ""
        while len(out) < count:
            hexa = self.wait_for(lambda line: line.startswith("key ")).rsplit(" ", 1)[1]
            if hexa != "-":
                out += chr(int(hexa, 16))
        return out

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
