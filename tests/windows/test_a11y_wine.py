"""The accessibility tools of mcec.exe under Wine, through the official MCP Python SDK: MSAA
(`via: "msaa"`) on another program's standard controls (`mcec-controls`) and on the objects
that program serves itself (`mcec-controls ... own`: a push button, a check box and a list
with default actions, `accSelect` and `accFocus`, which Wine's standard controls lack), the
whole chain from `tools/call` to the control (the backend's own cases are
crates/a11y/tests/msaa_wine.rs).

    scripts/windows-build && .venv/bin/python -m pytest -q tests/windows/test_a11y_wine.py
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import anyio
import pytest

from test_mcec_wine import call, run, wine_copy
from test_operator_wine import CHORD, wait_for_code
from wine_desk import WINE, WineDesk, exe
from mcec_e2e import audit_with, sdk_stdio  # noqa: E402 (wine_desk puts tests/e2e on the path)

# One test latches the stop, which mcec.exe records in the prefix: no test here inherits it.
pytestmark = pytest.mark.usefixtures("no_stop_record")

COMMANDS = ("query", "find", "invoke", "get-text", "wait-for", "displays")
TITLE = "mcec a11y wine"
OWN_TITLE = "mcec own accessible"
CASES_TITLE = "mcec a11y cases"


class Controls:
    """A running `mcec-controls` and the lines it printed, read in order."""

    def __init__(self, desk: WineDesk, title: str, *more: str) -> None:
        self.proc = subprocess.Popen(
            [WINE, str(exe("mcec-controls")), title, "100", "100", *more],
            env=desk.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.lines: list[str] = []
        self.read_to = 0
        self.seen = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.next("READY")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.seen:
                self.lines.append(line.strip())
                self.seen.notify_all()

    def next(self, prefix: str) -> str:
        """The first line starting with `prefix` after the last one returned (hang guard only)."""
        def found() -> int | None:
            return next((i for i in range(self.read_to, len(self.lines)) if self.lines[i].startswith(prefix)), None)

        with self.seen:
            assert self.seen.wait_for(lambda: found() is not None, timeout=60), (prefix, self.lines)
            i = found()
            assert i is not None
            self.read_to = i + 1
            return self.lines[i]

    def tell(self, line: str) -> None:
        """One line on the program's stdin (`state`, `later MS`, `close`)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def own_state(self) -> str:
        """The own panel's state as the program holds it now."""
        self.tell("state")
        return self.next("STATE")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


def test_find_query_get_text_and_invoke_read_msaa(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)
    target = Controls(desk, TITLE)
    try:

        async def main():
            async with sdk_stdio(copy) as (session, _):
                found = await call(session, "find", window=TITLE, by="name", value="OK")
                assert found["ok"] is True, found
                ok = found["result"]["element"]
                assert (ok["role"], ok["name"], ok["via"]) == ("push-button", "OK", "msaa"), ok
                query = await call(session, "query", window=TITLE)
                names = {(e["role"], e["name"]) for e in query["result"]["elements"]}
                assert {("push-button", "OK"), ("check-box", "Remember me"), ("label", "Name:")} <= names, names
                text = await call(session, "get-text", window=TITLE, by="role", value="text")
                assert text["result"]["text"] == "hello msaa", text
                pressed = await call(session, "invoke", elementId=ok["elementId"])
                assert pressed["ok"] is True, pressed

        run(main)
        assert target.next("CLICKED") == "CLICKED id=1"
    finally:
        target.close()


def test_automation_id_set_text_wait_for_ambiguity_and_a_closed_window(desk: WineDesk, tmp_path: Path) -> None:
    """The Win32 test window's remaining cases through mcec.exe: `find` by AutomationId (the
    control id), `setText` read back by `get-text`, `wait-for` of a button the program makes
    1.5 s after it is asked, two buttons of one name listed both, and the elements of a
    window that closed answering `stale-element` while a window like it has taken its place."""
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)
    target = Controls(desk, CASES_TITLE)
    targets = [target]

    async def line(prefix: str) -> str:
        return await anyio.to_thread.run_sync(target.next, prefix)

    try:

        async def main():
            async with sdk_stdio(copy) as (session, _):
                found = await call(session, "find", window=CASES_TITLE, by="automationid", value="100")
                assert found["ok"] is True, found
                edit = found["result"]["element"]
                assert (edit["role"], edit["automationId"], edit["via"]) == ("text", "100", "msaa"), edit
                ok = (await call(session, "find", window=CASES_TITLE, by="automationid", value="1"))["result"]["element"]
                assert (ok["role"], ok["name"]) == ("push-button", "OK"), ok

                set_text = await call(session, "invoke", elementId=edit["elementId"], action="setText",
                                      text="typed by no one")
                assert set_text["ok"] is True and set_text["result"]["done"] == "setText", set_text
                assert await line("EDIT") == "EDIT text=typed by no one"
                read = await call(session, "get-text", elementId=edit["elementId"])
                assert (read["result"]["text"], read["result"]["source"]) == ("typed by no one", "accessibility"), read

                later = {"window": CASES_TITLE, "by": "name", "value": "Later"}
                absent = await call(session, "find", **later)
                assert absent["ok"] is False and absent["error"]["code"] == "element-not-found", absent
                target.tell("later 1500")
                waited = await call(session, "wait-for", **later, timeoutMs=20000)
                assert waited["ok"] is True, waited
                first = waited["result"]["element"]
                assert (first["role"], first["automationId"], first["via"]) == ("push-button", "103", "msaa"), first
                assert await line("LATER") == "LATER id=103"

                target.tell("later 0")
                assert await line("LATER") == "LATER id=104"
                second = (await call(session, "find", window=CASES_TITLE, by="automationid", value="104"))
                second = second["result"]["element"]
                for tool in ("find", "wait-for", "invoke"):
                    both = await call(session, tool, **later)
                    assert both["ok"] is False and both["error"]["code"] == "ambiguous-selector", (tool, both)
                    detail = both["error"]["detail"]
                    assert detail.startswith("2 elements match"), (tool, detail)
                    for e in (first, second):
                        assert f'{e["elementId"]} push-button "Later"' in detail, (tool, e, detail)
                # The refused invoke pressed nothing: the next press reported is the one asked for.
                pressed = await call(session, "invoke", elementId=second["elementId"])
                assert pressed["ok"] is True, pressed
                assert await line("CLICKED") == "CLICKED id=104"

                target.tell("close")
                assert await line("CLOSED") == "CLOSED"
                # A window like it in its place (same title, same controls), untouched by the old ids.
                replacement = await anyio.to_thread.run_sync(Controls, desk, CASES_TITLE)
                targets.append(replacement)
                for args in ({"elementId": ok["elementId"]},
                             {"elementId": edit["elementId"], "action": "setText", "text": "stale"},
                             {"elementId": first["elementId"]}):
                    stale = await call(session, "invoke", **args)
                    assert not stale["ok"] and stale["error"]["code"] == "stale-element", (args, stale)
                stale = await call(session, "get-text", elementId=edit["elementId"])
                assert not stale["ok"] and stale["error"]["code"] == "stale-element", stale
                fresh = await call(session, "get-text", window=CASES_TITLE, by="automationid", value="100")
                assert fresh["ok"] is True and fresh["result"]["text"] == "hello msaa", fresh
                assert fresh["result"]["element"]["elementId"] != edit["elementId"], fresh

        run(main)
    finally:
        for t in targets:
            t.close()


# What a fake Tesseract prints: tesseract's TSV for two words on one line.
FAKE_TSV = (
    "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"
    "5\t1\t1\t1\t1\t1\t2\t3\t20\t10\t91.5\tHELLO\n"
    "5\t1\t1\t1\t1\t2\t25\t3\t20\t10\t88\tWINE\n"
)


def windows_path(path: Path) -> str:
    """`path` as the Wine prefix's programs name it (Wine maps Z: to /)."""
    return "Z:" + str(path).replace("/", "\\")


def test_get_text_ocr_names_each_engine_tried_then_reads_with_tesseract(desk: WineDesk, tmp_path: Path) -> None:
    """Wine has no Windows.Media.Ocr: OCR is `unavailable` naming its failure and Tesseract's;
    with a Tesseract (here a .bat printing Tesseract's TSV) the read falls through to it."""
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)
    region = {"x": 100, "y": 100, "width": 50, "height": 20}

    answers: list[dict] = []

    async def unavailable():
        async with sdk_stdio(copy) as (session, _):
            answers.append(await call(session, "get-text", region=region))

    run(unavailable)
    ocr = answers.pop()
    assert ocr["ok"] is False and ocr["error"]["code"] == "unavailable", ocr
    detail = ocr["error"]["detail"]
    # Wine 8.0 registers no Windows.Media.Ocr class.
    assert (
        "Windows.Media.Ocr: the engine cannot be created: class not registered (REGDB_E_CLASSNOTREG) "
        "(HRESULT 0x80040154)" in detail
    ), detail
    assert "; Tesseract: `tesseract` cannot be started (" in detail, detail
    assert "tesseract.exe" in detail and "MCEC_TESSERACT" in detail and "apt-get" not in detail, detail

    tsv = tmp_path / "words.tsv"
    tsv.write_text(FAKE_TSV)
    fake = tmp_path / "fake-tesseract.bat"
    fake.write_text(f'@type "{windows_path(tsv)}"\r\n')

    async def read():
        async with sdk_stdio(copy, {"MCEC_TESSERACT": windows_path(fake)}) as (session, _):
            answers.append(await call(session, "get-text", region=region))

    run(read)
    ocr = answers.pop()
    assert ocr["ok"] is True, ocr
    result = ocr["result"]
    assert (result["source"], result["engine"], result["text"]) == ("ocr", "tesseract", "HELLO WINE"), result
    assert result["words"][0] == {
        "text": "HELLO",
        "bounds": {"x": 102, "y": 103, "width": 20, "height": 10},
        "confidence": 91.5,
    }, result


def test_the_programs_own_objects_are_found_invoked_selected_focused_and_stopped(
    desk: WineDesk, tmp_path: Path
) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)
    target = Controls(desk, OWN_TITLE, "own")

    async def own_line() -> str:
        return await anyio.to_thread.run_sync(target.next, "OWN")

    try:

        async def main():
            async with sdk_stdio(copy) as (session, _):
                found = await call(session, "find", window=OWN_TITLE, by="name", value="Apply")
                assert found["ok"] is True, found
                apply = found["result"]["element"]
                assert (apply["role"], apply["via"], apply["actions"]) == ("push-button", "msaa", ["Press"]), apply
                items = await call(session, "find", window=OWN_TITLE, by="role", value="list-item")
                assert items["ok"] is False and items["error"]["code"] == "ambiguous-selector", items
                assert all(n in items["error"]["detail"] for n in ("Red", "Green", "Blue")), items
                green = (await call(session, "find", window=OWN_TITLE, by="name", value="Green"))["result"]["element"]
                assert green["role"] == "list-item" and "selectable" in green["states"], green

                pressed = await call(session, "invoke", elementId=apply["elementId"])
                assert pressed["ok"] is True and pressed["result"]["done"] == "Press", pressed
                assert await own_line() == "OWN press applied=1 bold=0 selected=- focus=-"
                selected = await call(session, "invoke", elementId=green["elementId"], action="select")
                assert selected["ok"] is True and selected["result"]["done"] == "select", selected
                assert "selected" in selected["result"]["element"]["states"], selected
                assert await own_line() == "OWN select applied=1 bold=0 selected=Green focus=-"
                focused = await call(session, "invoke", window=OWN_TITLE, by="name", value="Blue", action="focus")
                assert focused["ok"] is True and focused["result"]["done"] == "focus", focused
                assert await own_line() == "OWN focus applied=1 bold=0 selected=Green focus=Blue"

                # The operator's physical chord: every invoke is refused and the program is untouched.
                desk.focus(OWN_TITLE)
                desk.xdotool("key", CHORD)
                assert await wait_for_code(session, "emergency-stopped") == "emergency-stopped"
                for args in ({"elementId": apply["elementId"]},
                             {"window": OWN_TITLE, "by": "name", "value": "Bold", "action": "toggle"},
                             {"window": OWN_TITLE, "by": "name", "value": "Red", "action": "select"},
                             {"elementId": green["elementId"], "action": "focus"}):
                    refused = await call(session, "invoke", **args)
                    assert not refused["ok"] and refused["error"]["code"] == "emergency-stopped", (args, refused)
                state = await anyio.to_thread.run_sync(target.own_state)
                assert state == "STATE applied=1 bold=0 selected=Green focus=Blue", state

        run(main)
    finally:
        target.close()
    assert len(audit_with(copy, "tool=invoke", "code=emergency-stopped")) == 4, copy.log()
