"""The accessibility harness: an AT-SPI2 accessibility bus (at-spi2-core's bus launcher on
the D-Bus session `scripts/test` runs pytest under) and the project's GTK 3 test application
(`a11y_app.py`, run with the system Python), on a display the test chose, every process
stopped by PID."""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable

APP = Path(__file__).resolve().parent / "a11y_app.py"
BUS_LAUNCHER = Path("/usr/libexec/at-spi-bus-launcher")
SYSTEM_PYTHON = "/usr/bin/python3"
#: Upper bound for the app or the bus to do what is awaited (a hang guard, not a speed assertion).
PATIENCE_S = 30.0


def session_bus() -> str:
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if not address:
        raise RuntimeError("no D-Bus session: run pytest under `dbus-run-session` (scripts/test does)")
    return address


def bus_env(display: str, **extra: str) -> dict[str, str]:
    return {
        "DISPLAY": display,
        "DBUS_SESSION_BUS_ADDRESS": session_bus(),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        **extra,
    }


class AccessibilityBus:
    """at-spi-bus-launcher on the session bus; `org.a11y.Bus` answers once it is up."""

    def __init__(self, display: str) -> None:
        if not BUS_LAUNCHER.is_file():
            raise RuntimeError(f"{BUS_LAUNCHER} is missing; install at-spi2-core (scripts/test does)")
        self.proc = subprocess.Popen(
            [str(BUS_LAUNCHER), "--launch-immediately"],
            env=bus_env(display),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + PATIENCE_S
        while time.monotonic() < deadline:
            done = subprocess.run(
                ["dbus-send", "--session", "--print-reply", "--dest=org.a11y.Bus", "/org/a11y/bus",
                 "org.a11y.Bus.GetAddress"],
                env=bus_env(display), capture_output=True, text=True, timeout=30,
            )
            if done.returncode == 0 and "unix:" in done.stdout:
                return
            time.sleep(0.1)
        self.close()
        raise RuntimeError("the accessibility bus never came up")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


class App:
    """One process whose stdout lines are collected (the GTK test app, or a stock app)."""

    def __init__(self, argv: list[str], env: dict[str, str], ready: str | None = "ready") -> None:
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.lines: list[str] = []
        self._new: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        if ready is not None:
            self.wait_line(lambda line: line == ready)

    @classmethod
    def test_app(cls, display: str) -> "App":
        return cls([SYSTEM_PYTHON, str(APP)], bus_env(display))

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            self._new.put(line.rstrip("\n"))

    def mark(self) -> int:
        """A position in the lines; `since` gives what came after it."""
        return len(self.lines)

    def since(self, mark: int) -> list[str]:
        return self.lines[mark:]

    def wait_line(self, want: Callable[[str], bool], after: int = 0) -> str:
        deadline = time.monotonic() + PATIENCE_S
        while time.monotonic() < deadline:
            for line in self.lines[after:]:
                if want(line):
                    return line
            try:
                self._new.get(timeout=0.1)
            except queue.Empty:
                pass
        raise AssertionError(f"the app never printed the line wanted; it printed {self.lines[-20:]}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
