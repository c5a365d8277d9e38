#!/usr/bin/env python3
"""Exit stress: start `mcec mcp` on an Xvfb display, click, close stdin at a random moment,
and record how the process ended. Repeats for --cycles rounds and prints the exit codes.

    cargo build -p mcec
    .venv/bin/python bench/stress_exit.py [--bin PATH] [--cycles 200] [--max-delay-ms 300] [--seed N]

Each cycle: a fresh `mcec mcp` (the operator windows, the stop's monitor and the desktop all
come up on the display), `initialize`, `notifications/initialized`, one `click` at a random
point, its answer, a random pause of 0..max-delay ms, then stdin is closed and the exit
status collected. A process killed by a signal is reported with the signal's name (the
crash this guards against was a SIGSEGV in the `mcec-operator-ui` thread at exit). Numbers
are printed, never asserted; the exit status is 1 when any cycle did not exit 0.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

import mcec_e2e  # noqa: E402
from mcec_e2e import INIT_PARAMS, manual_copy, rpc  # noqa: E402
from xdesk import Screen, forget_stop_record  # noqa: E402


def read_response(proc: subprocess.Popen, want_id: object) -> dict:
    assert proc.stdout is not None
    for line in proc.stdout:
        msg = json.loads(line)
        if msg.get("id") == want_id:
            return msg
    raise RuntimeError(f"stdout closed before the answer to {want_id!r} (exit {proc.poll()})")


def one_cycle(copy: mcec_e2e.Copy, display: str, rng: random.Random, max_delay: float) -> tuple[int, str]:
    stderr_path = copy.stderr_file("cycle")
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(
            [str(copy.exe), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env=copy.env(DISPLAY=display),
            cwd=copy.root,
        )
    assert proc.stdin is not None
    try:
        proc.stdin.write((json.dumps(rpc("initialize", INIT_PARAMS, id=1)) + "\n").encode())
        proc.stdin.flush()
        read_response(proc, 1)
        proc.stdin.write((json.dumps(rpc("notifications/initialized", None, id=None)) + "\n").encode())
        point = {"x": rng.randrange(0, 1280), "y": rng.randrange(0, 800)}
        proc.stdin.write((json.dumps(rpc("tools/call", {"name": "click", "arguments": {"at": point}}, id=2)) + "\n").encode())
        proc.stdin.flush()
        answer = read_response(proc, 2)
        time.sleep(rng.uniform(0, max_delay))
        proc.stdin.close()
        code = proc.wait(timeout=60)
    except (subprocess.TimeoutExpired, RuntimeError, BrokenPipeError) as e:
        proc.kill()
        proc.wait()
        return -999, f"{type(e).__name__}: {e}"
    text = answer.get("result", {}).get("content", [{}])[-1].get("text", "")
    ok = json.loads(text).get("ok") if text else None
    if code == 0:
        stderr_path.unlink()
    return code, f"click ok={ok}; stderr in {stderr_path}" if code else ""


def describe(code: int) -> str:
    if code < 0 and code != -999:
        return f"killed by {signal.Signals(-code).name}"
    return "hang or protocol failure" if code == -999 else f"exit {code}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, default=mcec_e2e.BIN)
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--max-delay-ms", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    mcec_e2e.BIN = args.bin
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    codes: collections.Counter[int] = collections.Counter()
    failures: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcec-stress-exit-") as tmp, Screen() as screen:
        forget_stop_record(screen.display)
        copy = manual_copy(Path(tmp) / "c", settings="AgentCommandsEnabled = true\n", commands=("click",))
        for n in range(args.cycles):
            code, note = one_cycle(copy, screen.display, rng, args.max_delay_ms / 1000)
            codes[code] += 1
            if code != 0:
                failures.append(f"cycle {n}: {describe(code)}; {note}")
                print(failures[-1], flush=True)
                # Keep the evidence: the temporary directory goes away at the end.
                kept = Path(tempfile.gettempdir()) / f"mcec-stress-exit-cycle-{n}.txt"
                kept.write_text(note + "\n" + "".join(p.read_text(errors="replace") for p in copy.root.glob("cycle.*.txt")))
            forget_stop_record(screen.display)
    elapsed = time.monotonic() - started
    print(f"binary {args.bin}; seed {seed}; {args.cycles} cycles in {elapsed:.0f} s")
    for code, count in sorted(codes.items()):
        print(f"  {describe(code)}: {count}")
    print(f"non-zero exits: {sum(c for k, c in codes.items() if k != 0)} of {args.cycles}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
