"""`launch`, `record`, `send_command` and `displays`' DPI of mcec.exe under Wine, through the
official MCP Python SDK (the harness of test_mcec_wine.py: a manual copy run as
`wine64 mcec.exe mcp`).

    scripts/windows-build && .venv/bin/python -m pytest -q tests/windows/test_tools_wine.py
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path


from test_mcec_wine import call, linux_path, run, wine_copy
from wine_desk import WINE, WineDesk, exe
from mcec_e2e import sdk_stdio  # noqa: E402 (wine_desk puts tests/e2e on the path)

COMMANDS = ("displays", "windows", "launch", "record", "send_command", "send_command.chars", "send_command.mouse")
# mcec-wintest's window: title, colour, place and size in desktop pixels.
TARGET = ("mcec raw target", "3060c0", 120, 140, 300, 200)
#: Wine's notepad, in every prefix.
NOTEPAD = r"C:\windows\notepad.exe"


def text_file(desk: WineDesk, tmp_path: Path, name: str) -> str:
    """A file notepad can open without asking (its window is then titled after it); its
    Windows path on Wine's Z: drive."""
    path = tmp_path / name
    path.write_text("mcec\n")
    return "Z:" + str(path).replace("/", "\\")


def taskkill(desk: WineDesk, pid: int) -> None:
    subprocess.run([WINE, "taskkill", "/f", "/t", "/pid", str(pid)], env=desk.env(), capture_output=True, timeout=60)


# --------------------------------------------------------------------------- launch


def test_launch_finds_the_window_of_the_program(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)
    doc = text_file(desk, tmp_path, "launched-direct.txt")

    async def main():
        async with sdk_stdio(copy) as (session, _):
            launched = await call(session, "launch", path=NOTEPAD, args=[doc], timeoutMs=30000)
            assert launched["ok"] is True, launched
            res = launched["result"]
            try:
                assert res["window"]["pid"] == res["pid"], res
                # Notepad's first title is "Untitled - Notepad"; it names the file a moment later.
                assert res["window"]["className"] == "Notepad", res
                assert res["window"]["process"] == "notepad", res
            finally:
                taskkill(desk, res["pid"])

    run(main)


def test_launch_finds_the_window_of_a_process_its_program_started(desk: WineDesk, tmp_path: Path) -> None:
    """`cmd /c start /wait notepad FILE`: cmd starts `start`, which starts notepad and waits.
    The window belongs to a grandchild, found through the process table's parent links (on
    Linux: /proc; on Windows: a Toolhelp snapshot). Its own program's pid is `launch`'s `pid`."""
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)
    doc = text_file(desk, tmp_path, "launched-grandchild.txt")

    async def main():
        async with sdk_stdio(copy) as (session, _):
            launched = await call(
                session, "launch", path="cmd.exe", args=["/c", "start", "/wait", NOTEPAD, doc], timeoutMs=30000
            )
            assert launched["ok"] is True, launched
            res = launched["result"]
            try:
                assert res["window"]["className"] == "Notepad", res
                assert res["window"]["process"] == "notepad", res
                # The window is not cmd's own: it was found through the parent links.
                assert res["window"]["pid"] != res["pid"], res
            finally:
                taskkill(desk, res["pid"])

    run(main)


def test_launch_of_a_program_that_ends_without_a_window_says_so(desk: WineDesk, tmp_path: Path) -> None:
    """The negative side of the rule: windows of processes it did not start are not taken.
    A notepad is already open; `cmd /c exit 3` opens none and ends."""
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)
    doc = text_file(desk, tmp_path, "already-open.txt")
    other = subprocess.Popen([WINE, "notepad.exe", doc], env=desk.env())

    async def main():
        async with sdk_stdio(copy) as (session, _):
            # Positive control: the other notepad's window is there to be (wrongly) taken.
            for _ in range(200):
                listed = await call(session, "windows", title="already-open")
                if listed["ok"] and listed["result"]["windows"]:
                    break
                await anyio_sleep(0.05)
            assert listed["result"]["windows"], listed
            refused = await call(session, "launch", path="cmd.exe", args=["/c", "exit", "3"], timeoutMs=20000)
            assert refused["ok"] is False, refused
            assert refused["error"]["code"] == "no-target", refused
            assert "exited" in refused["error"]["detail"], refused

    try:
        run(main)
    finally:
        other.kill()
        subprocess.run([WINE, "taskkill", "/f", "/im", "notepad.exe"], env=desk.env(), capture_output=True, timeout=60)


async def anyio_sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


# --------------------------------------------------------------------------- record


def test_record_oneshot_writes_an_animated_gif_of_the_screen(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)

    async def main():
        async with sdk_stdio(copy) as (session, _):
            # 3 s, not 1: under Wine on a loaded CI machine the first frame alone once took 1.4 s.
            rec = await call(session, "record", action="oneshot", durationMs=3000, fps=5, maxWidth=320)
            assert rec["ok"] is True, rec
            res = rec["result"]
            assert res["frames"] >= 2 and res["width"] == 320 and res["height"] == 240, res
            gif = linux_path(desk, res["file"]).read_bytes()
            assert gif[:6] == b"GIF89a" and len(gif) == res["byteSize"], res
            # Every frame is an image descriptor (0x2C) after a graphic control extension.
            assert gif.count(b"\x21\xf9\x04") >= res["frames"], res

    run(main)


# --------------------------------------------------------------------------- send_command


def test_send_command_clicks_and_types_into_a_window(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)
    title, colour, x, y, w, h = TARGET
    target = subprocess.Popen(
        [WINE, str(exe("mcec-wintest")), title, colour, str(x), str(y), str(w), str(h)],
        env=desk.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: list[str] = []
    seen = threading.Condition()

    def read() -> None:
        assert target.stdout is not None
        for line in target.stdout:
            with seen:
                lines.append(line.strip())
                seen.notify_all()

    def wait_for(pred) -> list[str]:
        with seen:
            assert seen.wait_for(lambda: [l for l in lines if pred(l)], timeout=60), lines
            return [l for l in lines if pred(l)]

    threading.Thread(target=read, daemon=True).start()
    try:
        ready = wait_for(lambda l: l.startswith("READY"))[0]
        cx, cy, _, _ = (int(v) for v in ready.split("client=")[1].split(","))
        desk.focus(title)

        async def main():
            async with sdk_stdio(copy) as (session, _):
                line = f"mouse:click {cx + 40} {cy + 30}; chars:hé\\;; mouse:click {cx + 41} {cy + 31} right"
                sent = await call(session, "send_command", command=line)
                assert sent["ok"] is True and sent["result"]["ran"] == 3, sent
                refused = await call(session, "send_command", command="key:Return")
                assert refused["error"]["code"] == "command-disabled", refused

        run(main)
        assert wait_for(lambda l: l.startswith("DOWN"))[:2] == ["DOWN button=left x=40 y=30", "DOWN button=right x=41 y=31"]
        chars = wait_for(lambda l: l.startswith("CHAR"))
        assert chars[:3] == ["CHAR cp=0x68", "CHAR cp=0xe9", "CHAR cp=0x3b"], chars
    finally:
        target.kill()


# --------------------------------------------------------------------------- displays


def test_displays_reports_the_dpi_wine_is_set_to(tmp_path: Path) -> None:
    """Wine's DPI setting (`LogPixels`, what winecfg writes) at 144: mcec.exe reports 144 and
    scale 1.5 for its monitor. A desk of its own, so the setting reaches no other test; the
    fresh prefix's 96 is the control."""
    with WineDesk() as desk:
        copy = wine_copy(desk, tmp_path / "a", "AgentCommandsEnabled = true\n", COMMANDS)

        async def monitors() -> list[dict]:
            async with sdk_stdio(copy) as (session, _):
                found = await call(session, "displays")
                assert found["ok"] is True, found
                return found["result"]["displays"]

        async def default():
            (d,) = await monitors()
            assert (d["dpi"], d["scale"]) == (96, 1.0), d
            assert d["dpiSource"] in ("monitor", "system"), d

        run(default)
        subprocess.run(
            [WINE, "reg", "add", r"HKCU\Control Panel\Desktop", "/v", "LogPixels", "/t", "REG_DWORD", "/d", "144", "/f"],
            env=desk.env(),
            check=True,
            capture_output=True,
            timeout=60,
        )

        async def set_144():
            (d,) = await monitors()
            assert (d["dpi"], d["scale"]) == (144, 1.5), d
            assert d["dpiSource"] == "monitor", d

        run(set_144)
