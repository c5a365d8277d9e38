"""sway as mcec's desktop for end-to-end tests: an Xvfb, and sway 1.7 on it with
`WLR_BACKENDS=x11`, so sway takes the Xvfb's XTEST keyboard for a physical keyboard.
`physical_key` (xdotool on the Xvfb) is then the operator's hand; `wayland_client` runs a
Wayland client of the session (`wtype`, `foot`) as sway's user.

sway refuses to run as root, so as root it runs as the unprivileged user of `waydesk.py`,
with its own runtime directory; the Xvfb lets that user in (`xhost +si:localuser:`). By default no
XWayland: mcec's operator windows and its stop record use the DISPLAY of a second Xvfb
(`operator_display`), as they would use XWayland's in a real session. Not the first Xvfb's:
there a prompt given the X focus would take the keys of the Xvfb's keyboard before sway (an
X client there) saw them, whereas in a session sway sees every key before any window does.
`wayland_env` is a session without any X display (no `DISPLAY`): mcec's stop record is then
the Wayland display's (`wayland_stop_record`), removed when the desk starts and closes, as
`xdesk` does for the displays it makes. Everything is stopped by PID.

`SwayDesk(xwayland=True)` starts sway's XWayland too (`xwayland_display`, open to us through
`xhost`), for X11-only programs in the session (the peer bench, `bench/bench_sway_peers.py`);
`config_extra` adds lines to sway's config.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from waydesk import ensure_user, stop_xwayland, xwayland_pid
from xdesk import Screen, forget_stop_record

#: Where mcec keeps its stop records (the home from the user database).
STOP_DIR = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".local/state/mcec/stop"


def wayland_record_name(socket: str) -> str:
    """The record file of the Wayland display whose socket is `socket` (mcec_rules'
    `Scope::file_name`): `wayland-`, then the resolved path with every byte but ASCII letters,
    digits, `.` and `-` written as `_` and two hex digits."""
    real = os.path.realpath(socket)
    return "wayland-" + "".join(
        chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) in ".-") else f"_{b:02x}" for b in real.encode()
    )

#: Upper bound for sway to come up: a hang guard.
START_GUARD_S = 30.0


class SwayDesk:
    """Xvfb + sway (x11 backend). `display` is the Xvfb, `swaysock` and `wayland_display` the
    session, `operator_display` where mcec's own windows go; with `xwayland`,
    `xwayland_display` is sway's XWayland. Use as a context manager."""

    def __init__(self, xwayland: bool = False, config_extra: str = "") -> None:
        self.screen = Screen()
        self.display = self.screen.display
        self.operator_screen = Screen()
        self.operator_display = self.operator_screen.display
        forget_stop_record(self.operator_display)
        as_root = os.geteuid() == 0
        user = ensure_user() if as_root else pwd.getpwuid(os.geteuid())
        self._uid = user.pw_uid
        self.xwayland_display = ""
        self._xwayland_pid: int | None = None
        subprocess.run(["xhost", f"+si:localuser:{user.pw_name}"], env=self.screen.env(), check=True,
                       capture_output=True, timeout=30)
        self.runtime_dir = Path(tempfile.mkdtemp(prefix="mcec-sway-"))
        os.chmod(self.runtime_dir, 0o700)
        os.chown(self.runtime_dir, user.pw_uid, user.pw_gid)
        config = self.runtime_dir / "config"
        self._xwayland_ready = self.runtime_dir / "xwayland-display"
        ready = self._xwayland_ready
        x = (
            "xwayland force\n"
            f"exec sh -c 'xhost +si:localuser:{pwd.getpwuid(os.geteuid()).pw_name} >/dev/null && "
            f'echo "$DISPLAY" > {ready}.tmp && mv {ready}.tmp {ready}\'\n'
            if xwayland
            else "xwayland disable\n"
        )
        config.write_text(f"default_border none\nfocus_follows_mouse no\n{x}{config_extra}")
        self._as_user = (
            ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"] if as_root else []
        )
        self.log_path = self.runtime_dir / "sway.log"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.runtime_dir),
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
            "DISPLAY": self.display,
            "WLR_BACKENDS": "x11",
            "WLR_LIBINPUT_NO_DEVICES": "1",
            "WLR_RENDERER": "pixman",
            "LANG": "C.UTF-8",
        }
        with open(self.log_path, "wb") as log:
            self._sway = subprocess.Popen(
                [*self._as_user, "sway", "--config", str(config)],
                env=env, cwd=self.runtime_dir, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            )
        try:
            self._wait_ready()
            if xwayland:
                self._wait_xwayland()
        except BaseException:
            self.close()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_GUARD_S
        while True:
            if self._sway.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sway did not come up (exit {self._sway.poll()}):\n{self.log()}")
            socks = sorted(self.runtime_dir.glob("sway-ipc.*.sock"))
            wls = [p for p in self.runtime_dir.glob("wayland-*") if not p.name.endswith(".lock")]
            if socks and wls:
                self.swaysock = str(socks[0])
                self.wayland_display = wls[0].name
                self.wayland_stop_record().unlink(missing_ok=True)
                inputs = self.swaymsg("-t", "get_inputs")
                if inputs.returncode == 0 and any(i.get("type") == "keyboard" for i in json.loads(inputs.stdout)):
                    return
            time.sleep(0.05)

    def _wait_xwayland(self) -> None:
        deadline = time.monotonic() + START_GUARD_S
        while not self._xwayland_ready.exists():
            if self._sway.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sway did not bring up XWayland (exit {self._sway.poll()}):\n{self.log()}")
            time.sleep(0.05)
        self.xwayland_display = self._xwayland_ready.read_text().strip()
        forget_stop_record(self.xwayland_display)
        self._xwayland_pid = xwayland_pid(self.xwayland_display, self._uid)

    def __enter__(self) -> "SwayDesk":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def session_env(self) -> dict[str, str]:
        """What mcec started inside this session sees."""
        return {
            "DISPLAY": self.operator_display,
            "WAYLAND_DISPLAY": self.wayland_display,
            "SWAYSOCK": self.swaysock,
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
        }

    def wayland_env(self) -> dict[str, str | None]:
        """A sway session with no X display: no `DISPLAY` at all (None removes it)."""
        return {**self.session_env(), "DISPLAY": None}

    def wayland_stop_record(self) -> Path:
        """mcec's stop record for this session's Wayland display."""
        return STOP_DIR / wayland_record_name(str(self.runtime_dir / self.wayland_display))

    def swaymsg(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["swaymsg", "-r", "-s", self.swaysock, *args], capture_output=True, text=True, timeout=30)

    def tree(self) -> dict:
        return json.loads(self.swaymsg("-t", "get_tree").stdout)

    def physical_key(self, keys: str) -> None:
        """Keys on the Xvfb's XTEST keyboard: to sway, the operator's physical keyboard."""
        subprocess.run(["xdotool", "key", keys], env=self.screen.env(), check=True, timeout=30)

    def wayland_client(self, *argv: str) -> subprocess.Popen:
        """A Wayland client of this session, as sway's user."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.runtime_dir),
            "WAYLAND_DISPLAY": self.wayland_display,
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
            "LANG": "C.UTF-8",
        }
        return subprocess.Popen([*self._as_user, *argv], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

    def close(self) -> None:
        if self._sway.poll() is None:
            self._sway.send_signal(signal.SIGTERM)
            try:
                self._sway.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._sway.kill()
                self._sway.wait(timeout=10)
        if self.xwayland_display:
            stop_xwayland(self._xwayland_pid, self.xwayland_display, self._sway.pid)
            forget_stop_record(self.xwayland_display)
        self.screen.close()
        self.operator_screen.close()
        forget_stop_record(self.operator_display)
        if getattr(self, "wayland_display", None):
            self.wayland_stop_record().unlink(missing_ok=True)
        shutil.rmtree(self.runtime_dir, ignore_errors=True)


def views(tree: dict) -> list[dict]:
    """Every container with a client behind it."""
    out = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.get("pid") is not None:
            out.append(node)
        stack.extend(node.get("nodes", []) + node.get("floating_nodes", []))
    return out
