#!/usr/bin/env python3
"""What a session's own display costs (issue 26): time to a first capture, memory, and
actions per second with several own-display sessions at once.

    .venv/bin/python bench/bench_own_display.py [--sessions 4] [--size 1280x800] [--clicks 50]

The operator's display is a plain Xvfb (xdesk.Screen). Each session is provisioned with
`--own-display`, then its copy is started as `mcec mcp` on a raw pipe: the time from starting
the process to the first `capture` that answers is "to first capture" (it includes the copy's
own start-up, its Xephyr, bus and openbox). Memory is the proportional set size (Pss, from
/proc/<pid>/smaps_rollup) of every process in the display's process group (Xephyr, dbus-daemon,
openbox), apart from the copy itself. Then every session clicks `--clicks` times at once, one
thread each, and the rate per session and in all is printed. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

from mcec_e2e import RawStdio, envelope_of, manual_copy, run_cli, session_copy  # noqa: E402
from xdesk import Screen  # noqa: E402


def group_of(pgid: int) -> list[int]:
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[2]) == pgid:
            members.append(int(stat.parent.name))
    return members


def pss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


def server_of(directory: Path) -> int:
    want = str(directory / "own-display.xauth").encode()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if want in cmdline.read_bytes().split(b"\0"):
                return int(cmdline.parent.name)
        except (FileNotFoundError, ProcessLookupError):
            continue
    raise RuntimeError("no server found")


def call(copy: RawStdio, name: str, args: dict | None = None, id: int = 1) -> dict:
    envelope, _ = envelope_of(copy.call(name, args, id=id))
    return envelope


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--size", default="1280x800")
    ap.add_argument("--clicks", type=int, default=50)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="mcec-bench-own-display-"))
    operator = manual_copy(root / "op", settings="AllowSessionProvisioning = true\nOwnDisplaySessionsMax = 64\n")
    copies: list[RawStdio] = []
    with Screen() as screen:
        try:
            rows = []
            for n in range(args.sessions):
                code, out, err = run_cli(
                    operator, ["provision", "--json", "--no-mcp-server", "--own-display", args.size,
                               "--commands", "capture,click,session-status"],
                )
                assert code == 0, err
                handoff = json.loads(out)
                start = time.monotonic()
                copy = RawStdio(session_copy(operator, handoff), {"DISPLAY": screen.display})
                copies.append(copy)
                assert "result" in copy.initialize(), copy.stderr()
                captured = call(copy, "capture", {"maxWidth": 320})
                first = time.monotonic() - start
                assert captured["ok"], captured
                server = server_of(Path(handoff["directory"]))
                members = group_of(server)
                memory = sum(pss_kib(pid) for pid in members)
                rows.append((first, memory, len(members)))
                print(f"session {n + 1}: first capture after {first * 1000:.0f} ms; display group "
                      f"{len(members)} processes, Pss {memory / 1024:.1f} MiB", flush=True)

            rates: list[float] = [0.0] * len(copies)

            def clicks(i: int) -> None:
                t0 = time.monotonic()
                for k in range(args.clicks):
                    got = call(copies[i], "click", {"at": {"x": 10 + k % 100, "y": 10}}, id=100 + k)
                    assert got["ok"], got
                rates[i] = args.clicks / (time.monotonic() - t0)

            threads = [threading.Thread(target=clicks, args=(i,)) for i in range(len(copies))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            print(f"{len(copies)} sessions clicking at once: "
                  f"{', '.join(f'{r:.1f}' for r in rates)} clicks/s each, {sum(rates):.1f} in all")
        finally:
            for copy in copies:
                copy.kill()


if __name__ == "__main__":
    main()
