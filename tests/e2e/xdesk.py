"""A headless desk with a real "physical" keyboard and mouse, for end-to-end tests.

The outer server (Xvfb) is the operator's desk; the inner server (Xephyr) runs as a window on
it, and mcec talks to the inner one. Input injected with XTEST on the *outer* server reaches
the Xephyr window and is replayed by Xephyr's own keyboard and mouse devices, so on the inner
server it is physical. Input injected on the *inner* server comes from its XTEST devices, so it
is injected. Both servers pick free display numbers themselves (`-displayfd`), so parallel
runs never collide; both are killed by PID.
"""

from __future__ import annotations

import os
import pwd
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable

INNER_SIZE = (1024, 768)
TESTWIN = Path(os.environ.get("MCEC_TESTWIN_BIN", str(Path(__file__).resolve().parents[2] / "target" / "debug" / "mcec-testwin")))
#: Upper bound for a test window to print what is awaited (a hang guard, not a speed assertion).
PROBE_PATIENCE_S = 30.0


def forget_stop_record(display: str) -> None:
    """Delete mcec's durable stop record for a display this harness just created or closed
    (the operator's by-hand action from the README), and the display's guard files, which a
    guard stopped by signal leaves in the home: display numbers are reused, and a stop left by
    an earlier test on the same number must not make this one start stopped."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    number = display.lstrip(":")
    (home / ".local/state/mcec/stop" / f"display-{number}").unlink(missing_ok=True)
    guard = home / ".local/state/mcec/guard"
    for leftover in [*guard.glob(f"display-{number}-*"), *guard.glob(f"display-{number}.*")]:
        leftover.unlink(missing_ok=True)


def stop_server(proc: subprocess.Popen) -> None:
    """End an X server by PID the way it cleans up after itself (SIGTERM: it removes its lock
    file and socket); SIGKILL only if it has not gone within a few seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait(timeout=10)


def start_server(argv: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [*argv, "-displayfd", str(write_fd)],
        pass_fds=(write_fd,),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        number = pipe.readline().strip()
    if not number:
        proc.kill()
        raise RuntimeError(f"{argv[0]} did not report a display number")
    display = f":{number}"
    deadline = time.monotonic() + 10
    while subprocess.run(["xdpyinfo", "-display", display], capture_output=True).returncode != 0:
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError(f"{argv[0]} on {display} never answered")
        time.sleep(0.05)
    forget_stop_record(display)
    return proc, display


class Desk:
    """Outer Xvfb + inner Xephyr. Use as a context manager."""

    def __init__(self) -> None:
        for tool in ("Xvfb", "Xephyr", "xdotool", "xdpyinfo", "xset"):
            if shutil.which(tool) is None:
                raise RuntimeError(f"{tool} is missing; run scripts/test (it installs the X test packages)")
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        self._outer, self.outer = start_server(
            ["Xvfb", "-screen", "0", "1280x1024x24", "-nolisten", "tcp", "-noreset"], base
        )
        subprocess.run(["xset", "-display", self.outer, "r", "off"], check=True)  # no host auto-repeat
        w, h = INNER_SIZE
        self._inner, self.inner = start_server(
            ["Xephyr", "-screen", f"{w}x{h}", "-ac", "-noreset", "-nolisten", "tcp", "-no-host-grab"],
            {**base, "DISPLAY": self.outer},
        )
        window = self.physical("search", "--sync", "--class", "Xephyr").split()[0]
        self.physical("windowfocus", "--sync", window)
        self.physical("windowmove", "--sync", window, "0", "0")

    def __enter__(self) -> "Desk":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for proc in (self._inner, self._outer):
            stop_server(proc)
        for display in (self.inner, self.outer):
            forget_stop_record(display)

    def kill_inner(self) -> None:
        """The session's display goes away mid-session (the inner Xephyr is killed by PID)."""
        self._inner.kill()
        self._inner.wait(timeout=10)

    def inner_env(self, **extra: str) -> dict[str, str]:
        """A minimal environment for a tool run against the inner display."""
        return {"DISPLAY": self.inner, "PATH": os.environ.get("PATH", ""), **extra}

    def _xdotool(self, display: str, args: tuple[str, ...], ok: tuple[int, ...] = (0,)) -> str:
        """Run xdotool and return its stdout; any exit code outside `ok` fails the test."""
        done = subprocess.run(
            ["xdotool", *args],
            env={"DISPLAY": display, "PATH": os.environ.get("PATH", "")},
            capture_output=True,
            text=True,
            timeout=30,
        )
        if done.returncode not in ok:
            raise RuntimeError(f"xdotool {' '.join(args)} on {display} exited {done.returncode}: {done.stderr.strip()}")
        return done.stdout

    def physical(self, *args: str) -> str:
        """xdotool on the outer server: what the operator's own hands do, as the inner server sees it."""
        return self._xdotool(self.outer, args)

    def injected(self, *args: str) -> str:
        """xdotool on the inner server: software-injected input."""
        return self._xdotool(self.inner, args)

    def _search(self, name: str) -> list[str]:
        # `xdotool search` exits 1 when nothing matches; that is an answer, not a failure.
        return self._xdotool(self.inner, ("search", "--onlyvisible", "--name", name), ok=(0, 1)).split()

    def window_ids(self, name: str) -> list[str]:
        """Inner windows whose name matches, mapped or not."""
        return self._xdotool(self.inner, ("search", "--name", name), ok=(0, 1)).split()

    def visible_window(self, name: str) -> bool:
        return bool(self._search(name))

    def visible_windows(self, name: str) -> list[str]:
        """Ids of the mapped inner windows whose name matches."""
        return self._search(name)

    def window_origin(self, name: str) -> tuple[int, int] | None:
        """Top-left corner of the first visible inner window whose name matches."""
        ids = self._search(name)
        if not ids:
            return None
        out = self._xdotool(self.inner, ("getwindowgeometry", "--shell", ids[0]))
        fields = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        return int(fields["X"]), int(fields["Y"])

    def right_hand_modifiers(self) -> None:
        """Make the outer server's modifier map name only the right-hand keys. xdotool presses
        the first key of a modifier's map along with any modifier key it is asked for (so
        `keydown Control_R` also presses Control_L); after this it presses only what it is told."""
        subprocess.run(
            ["xmodmap", "-e", "clear control", "-e", "add control = Control_R", "-e", "clear mod1",
             "-e", "add mod1 = Alt_R", "-e", "clear shift", "-e", "add shift = Shift_R"],
            env={"DISPLAY": self.outer, "PATH": os.environ.get("PATH", "")},
            check=True,
            capture_output=True,
            timeout=30,
        )

    def keys_down(self, device: str) -> list[int]:
        """Keycodes a slave device of the inner server reports as down."""
        out = subprocess.run(
            ["xinput", "query-state", device],
            env={"DISPLAY": self.inner, "PATH": os.environ.get("PATH", "")},
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout
        return [int(line.split("[")[1].split("]")[0]) for line in out.splitlines() if "=down" in line]

    def buttons_down(self, device: str) -> list[int]:
        """Mouse buttons a device of the inner server reports as down (`xinput query-state`)."""
        out = subprocess.run(
            ["xinput", "query-state", device],
            env=self.inner_env(),
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout
        return [
            int(line.split("[")[1].split("]")[0])
            for line in out.splitlines()
            if line.strip().startswith("button[") and "=down" in line
        ]

    def screenshot(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["import", "-window", "root", str(path)],
            env={"DISPLAY": self.inner, "PATH": os.environ.get("PATH", "")},
            check=True,
            timeout=30,
        )
        return path

    def pixel(self, path: Path, x: int, y: int) -> tuple[int, int, int]:
        """The RGB of one pixel of a screenshot (via ImageMagick, no Python imaging needed)."""
        out = subprocess.run(
            ["convert", str(path), "-crop", f"1x1+{x}+{y}", "-depth", "8", "txt:-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        rgb = out.splitlines()[-1].split("(")[1].split(")")[0].split(",")[:3]
        return tuple(int(float(v)) for v in rgb)  # type: ignore[return-value]


def wait_until(predicate, timeout: float = 5.0, step: float = 0.05) -> bool:
    """Poll `predicate` until it is true or `timeout` passes (a wait, never a timed assertion)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


class Screen:
    """One plain Xvfb (1280x800x24) for desktop tests that need no "physical" input. Picks a
    free display number itself (`-displayfd`) and is killed by PID. Use as a context manager."""

    SIZE = (1280, 800)
    KEYBOARD = "Virtual core XTEST keyboard"
    POINTER = "Virtual core XTEST pointer"

    def __init__(self) -> None:
        for tool in ("Xvfb", "xdpyinfo", "xinput"):
            if shutil.which(tool) is None:
                raise RuntimeError(f"{tool} is missing; run scripts/test (it installs the X test packages)")
        w, h = self.SIZE
        self._proc, self.display = start_server(
            ["Xvfb", "-screen", "0", f"{w}x{h}x24", "-nolisten", "tcp", "-noreset"],
            {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )

    def __enter__(self) -> "Screen":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        stop_server(self._proc)
        forget_stop_record(self.display)

    def env(self, **extra: str) -> dict[str, str]:
        return {"DISPLAY": self.display, "PATH": os.environ.get("PATH", ""), **extra}

    def _state(self, device: str) -> str:
        return subprocess.run(
            ["xinput", "query-state", device], env=self.env(), capture_output=True, text=True, check=True, timeout=30
        ).stdout

    def keys_down(self) -> list[int]:
        """Keycodes the XTEST keyboard (where injected keys come from) reports as down."""
        out = self._state(self.KEYBOARD)
        return [int(line.split("[")[1].split("]")[0]) for line in out.splitlines() if "=down" in line]

    def buttons_down(self) -> list[int]:
        """Mouse buttons the XTEST pointer reports as down."""
        out = self._state(self.POINTER)
        return [
            int(line.split("[")[1].split("]")[0])
            for line in out.splitlines()
            if line.strip().startswith("button[") and "=down" in line
        ]


class ProbeWindow:
    """One `mcec-testwin` process (on the display `env` names) and the event lines it prints;
    killed by PID on close."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        if not TESTWIN.is_file():
            raise RuntimeError(f"{TESTWIN} is missing; run `cargo build -p mcec-desktop-x11 --bin mcec-testwin`")
        self.proc = subprocess.Popen(
            [str(TESTWIN), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.id = int(self.wait_for(lambda line: line.startswith("ready")).split()[1])

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\n"))

    def wait_for(self, want: Callable[[str], bool]) -> str:
        deadline = time.monotonic() + PROBE_PATIENCE_S
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
