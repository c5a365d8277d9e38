"""A real Wayland session for end-to-end tests: a headless sway (wlroots) that starts XWayland.

sway refuses to run as root, so when the tests run as root (as CI does) it runs as a dedicated
unprivileged user (`mcec-wayland`, created here when missing), with its own XDG_RUNTIME_DIR
(mode 0700, owned by that user). Its config runs `xhost +si:localuser:<us>` inside the session
so our own processes (mcec, the test window) may connect to XWayland, and then writes the
session's DISPLAY and WAYLAND_DISPLAY to a file: the display is known only once access is
granted. Headless and without input devices (`WLR_BACKENDS=headless`,
`WLR_LIBINPUT_NO_DEVICES=1`, the pixman renderer), it needs no GPU, seat or keyboard.

Teardown stops sway and XWayland by PID and removes the runtime directory, XWayland's lock file
and socket if a crash left them, and /tmp/.X11-unix if this harness had to create it.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from xdesk import forget_stop_record

USER = "mcec-wayland"
X11_UNIX = Path("/tmp/.X11-unix")
#: Upper bound for sway and XWayland to come up before we call it a hang.
START_GUARD_S = 30.0


def ensure_user() -> pwd.struct_passwd:
    """The unprivileged user sway runs as (root only); a system user with no home or shell."""
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        pass
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", USER],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return pwd.getpwnam(USER)


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_pid_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def xwayland_pid(display: str, uid: int) -> int:
    """The PID of the XWayland serving `display` for `uid` (wlroots forks it off, so it is no
    child of sway's; its command line names the display)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            owner = proc.stat().st_uid
        except OSError:
            continue
        if owner == uid and len(argv) > 1 and argv[0].endswith(b"Xwayland") and argv[1] == display.encode():
            return int(proc.name)
    raise RuntimeError(f"no Xwayland process serves {display}")


def stop_xwayland(pid: int | None, display: str, compositor_pid: int) -> None:
    """After the compositor `compositor_pid` was stopped: its XWayland `pid` (serving
    `display`) is gone, and so are the lock and socket the compositor made for it."""
    # XWayland is not sway's child once started (wlroots forks it off); it exits when the
    # compositor goes, and is killed by its PID if it does not.
    if pid is not None and not _wait_pid_gone(pid, 10):
        os.kill(pid, signal.SIGKILL)
        _wait_pid_gone(pid, 10)
    if display:
        # A killed compositor leaves the lock and socket it made for XWayland; remove them
        # only while the lock still names our sway, never another server's.
        number = display.lstrip(":")
        lock = Path(f"/tmp/.X{number}-lock")
        try:
            ours = int(lock.read_text().strip()) == compositor_pid
        except (OSError, ValueError):
            ours = False
        if ours:
            (X11_UNIX / f"X{number}").unlink(missing_ok=True)
            lock.unlink(missing_ok=True)


class WaylandDesk:
    """Headless sway with XWayland. `display` is XWayland's X display, `wayland_display` and
    `runtime_dir` name the Wayland socket. Use as a context manager."""

    def __init__(self) -> None:
        for tool in ("sway", "Xwayland", "xhost", "xdpyinfo"):
            if shutil.which(tool) is None:
                raise RuntimeError(f"{tool} is missing; run scripts/test (it installs sway and xwayland)")
        self._made_x11_unix = False
        self._xwayland_pid: int | None = None
        self.display = ""
        self.wayland_display = ""
        as_root = os.geteuid() == 0
        user = ensure_user() if as_root else pwd.getpwuid(os.geteuid())
        self._uid = user.pw_uid
        # XWayland's socket directory: sway as a user would create it owned by that user,
        # mode 0755, and then other users could not create X sockets any more.
        if as_root and not X11_UNIX.exists():
            X11_UNIX.mkdir(mode=0o1777)
            os.chmod(X11_UNIX, 0o1777)
            self._made_x11_unix = True
        self.runtime_dir = Path(tempfile.mkdtemp(prefix="mcec-sway-"))
        os.chmod(self.runtime_dir, 0o700)
        os.chown(self.runtime_dir, user.pw_uid, user.pw_gid)
        me = pwd.getpwuid(os.geteuid()).pw_name
        ready = self.runtime_dir / "session"
        config = self.runtime_dir / "config"
        config.write_text(
            "xwayland force\n"
            f"exec sh -c 'xhost +si:localuser:{me} >/dev/null && "
            f'echo "$DISPLAY $WAYLAND_DISPLAY" > {ready}.tmp && mv {ready}.tmp {ready}\'\n'
        )
        os.chown(config, user.pw_uid, user.pw_gid)
        self.log_path = self.runtime_dir / "sway.log"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.runtime_dir),
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
            "WLR_BACKENDS": "headless",
            "WLR_LIBINPUT_NO_DEVICES": "1",
            "WLR_RENDERER": "pixman",
            "LANG": "C.UTF-8",
        }
        drop = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"] if as_root else []
        self._as_user = drop
        with open(self.log_path, "wb") as log:
            self._sway = subprocess.Popen(
                [*drop, "sway", "--config", str(config)],
                env=env,
                cwd=self.runtime_dir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            self._wait_ready(ready)
        except BaseException:
            self.close()
            raise

    def _wait_ready(self, ready: Path) -> None:
        deadline = time.monotonic() + START_GUARD_S
        while not ready.exists():
            if self._sway.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sway did not bring up XWayland (exit {self._sway.poll()}):\n{self.log()}")
            time.sleep(0.05)
        self.display, self.wayland_display = ready.read_text().split()
        forget_stop_record(self.display)
        self._xwayland_pid = xwayland_pid(self.display, self._uid)
        probe = subprocess.run(["xdpyinfo", "-display", self.display], capture_output=True, timeout=30)
        if probe.returncode != 0:
            raise RuntimeError(f"XWayland on {self.display} refused us: {probe.stderr.decode(errors='replace')}")

    def __enter__(self) -> "WaylandDesk":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def env(self, **extra: str) -> dict[str, str]:
        """An environment for an X client of this session (XWayland only, no Wayland variables)."""
        return {"DISPLAY": self.display, "PATH": os.environ.get("PATH", ""), **extra}

    def session_env(self) -> dict[str, str]:
        """What a process started inside this Wayland session sees."""
        return {
            "DISPLAY": self.display,
            "WAYLAND_DISPLAY": self.wayland_display,
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
        }

    def wayland_client(self, *argv: str) -> subprocess.CompletedProcess:
        """Run a Wayland client (e.g. `wtype`) inside the session, as the session's user."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "WAYLAND_DISPLAY": self.wayland_display,
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
        }
        return subprocess.run([*self._as_user, *argv], env=env, capture_output=True, text=True, timeout=30)

    def close(self) -> None:
        if self._sway.poll() is None:
            self._sway.send_signal(signal.SIGTERM)
            try:
                self._sway.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._sway.kill()
                self._sway.wait(timeout=10)
        stop_xwayland(self._xwayland_pid, self.display, self._sway.pid)
        shutil.rmtree(self.runtime_dir, ignore_errors=True)
        if self._made_x11_unix:
            try:
                X11_UNIX.rmdir()
            except OSError:
                pass  # another X server has its socket there now; the directory is theirs too
