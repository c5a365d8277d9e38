"""The host exits when told to after its X server went away, as at logout (SIGHUP).

The host (`mcec`) paints its windows on the CPU over its own X connection. When the X server
goes, that connection breaks and the windows' loop ends with an error the core logs; the
process must live on, and a SIGTERM, SIGINT or SIGHUP after that must still end it (this test
was written when the host drew with eframe over Xlib, whose I/O-error handler parked the
window thread holding a lock exit-time destructors wanted). Each run: a fresh Xvfb, the host
window mapped on it, the X server ended, the loss logged, then the signal; the host must be
gone within EXIT_GUARD_S (a hang detector: a clean exit takes a fraction of it) and exit 0.
RUNS runs per signal, 30 in all."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from mcec_e2e import HANG_GUARD_S, manual_copy, start_process, stop_process
from xdesk import Screen, wait_until

RUNS = 10
EXIT_GUARD_S = 5.0
# How the core logs the windows' end (their loop returned the broken connection's error).
UI_GONE = "operator windows unavailable"


def loss_noticed(log: str) -> bool:
    return UI_GONE in log


def host_window_mapped(screen: Screen) -> bool:
    found = subprocess.run(
        ["xdotool", "search", "--onlyvisible", "--name", "^mcec$"],
        env=screen.env(),
        capture_output=True,
        timeout=30,
    )
    return found.returncode == 0 and bool(found.stdout.strip())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["SIGTERM", "SIGINT", "SIGHUP"])
def test_the_host_exits_on_a_signal_after_its_display_went_away(tmp_path: Path, sig: signal.Signals) -> None:
    copy = manual_copy(tmp_path / "c", settings="")
    for run in range(RUNS):
        screen = Screen()
        proc = None
        try:
            proc, stderr_path = start_process(copy, [], env_extra={"DISPLAY": screen.display})
            assert wait_until(lambda: host_window_mapped(screen), timeout=HANG_GUARD_S), (
                f"run {run}: the host window never mapped:\n{stderr_path.read_text()}"
            )
            screen.close()
            assert wait_until(lambda: loss_noticed(stderr_path.read_text()), timeout=HANG_GUARD_S), (
                f"run {run}: the display loss was never noticed:\n{stderr_path.read_text()}"
            )
            assert proc.poll() is None, "the host outlives its display until told to exit"
            proc.send_signal(sig)
            try:
                code = proc.wait(timeout=EXIT_GUARD_S)
            except subprocess.TimeoutExpired:
                raise AssertionError(
                    f"run {run}: the host was still running {EXIT_GUARD_S} s after {sig.name}:\n"
                    f"{stderr_path.read_text()[-2000:]}"
                ) from None
            assert code == 0, f"run {run}: exit {code}:\n{stderr_path.read_text()[-2000:]}"
        finally:
            if proc is not None and proc.poll() is None:
                stop_process(proc, signal.SIGKILL)
            screen.close()
