"""The accessibility tools of mcec.exe under Wine, through the official MCP Python SDK: MSAA
(`via: "msaa"`) on another program's standard controls (`mcec-controls`), the whole chain from
`tools/call` to the control (the backend's own cases are crates/a11y/tests/msaa_wine.rs).

    scripts/windows-build && .venv/bin/python -m pytest -q tests/windows/test_a11y_wine.py
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from test_mcec_wine import call, run, wine_copy
from wine_desk import WINE, WineDesk, exe
from mcec_e2e import sdk_stdio  # noqa: E402 (wine_desk puts tests/e2e on the path)

COMMANDS = ("query", "find", "invoke", "get-text")
TITLE = "mcec a11y wine"


def test_find_query_get_text_and_invoke_read_msaa(desk: WineDesk, tmp_path: Path) -> None:
    copy = wine_copy(desk, tmp_path, "AgentCommandsEnabled = true\n", COMMANDS)
    target = subprocess.Popen(
        [WINE, str(exe("mcec-controls")), TITLE, "100", "100"],
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

    def wait_for(prefix: str) -> str:
        with seen:
            assert seen.wait_for(lambda: any(l.startswith(prefix) for l in lines), timeout=60), lines
            return next(l for l in lines if l.startswith(prefix))

    threading.Thread(target=read, daemon=True).start()
    try:
        wait_for("READY")

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
                # No Tesseract under Wine: OCR says so, with Windows' way to get it.
                ocr = await call(session, "get-text", region={"x": 100, "y": 100, "width": 50, "height": 20})
                assert ocr["ok"] is False and ocr["error"]["code"] == "unavailable", ocr
                assert "tesseract.exe" in ocr["error"]["detail"] and "apt-get" not in ocr["error"]["detail"], ocr

        run(main)
        assert wait_for("CLICKED") == "CLICKED id=1"
    finally:
        target.kill()
