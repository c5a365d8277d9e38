"""The accessibility tools end to end: a real `mcec mcp` on the inner display of an Xvfb +
Xephyr desk, an AT-SPI2 accessibility bus of the test's own, the project's GTK 3 test app
(`a11y_app.py`, which prints what is done to it) and one stock app (`gtk3-widget-factory`),
driven through the official MCP Python SDK.

Covers `query`, `find`, `invoke`, `wait-for`, `get-text` and `clipboard`: a button found by name and pressed, bounds in
desktop pixels (a `click` at their centre presses the button, also under `GDK_SCALE=2`),
element endpoints (`click` by selector and by id, a `drag` between two elements, `focus` on an
entry then `type`; ambiguous, missing and stale endpoints refused with nothing pressed), every
match enumerated whether the app filters (role, states) or the tree is walked (`by: text`), an
entry set with `invoke` and typed into after `focus`, the check box toggled, the delayed dialog's
OK waited for, a long `wait-for` reporting progress,
`ambiguous-selector` listing both twins, `stale-element` after a window closed, a disabled
button refused, the walk cut by its bounds, mcec's own windows unreachable, bad input refused
with nothing acted on, no bus → a clear `unavailable`, the label's text from the tree and the
image's by OCR (words boxed inside it), a missing OCR engine named, the clipboard set and seen
by `xclip` after the call returned (and the other way round), reading refused while
`[clipboard.read]` is off, and (last, as it latches the stop for
the display) the stop refusing `invoke` and ending a `wait-for`.

Build first: `cargo build -p mcec`."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from a11y_desk import APP, SYSTEM_PYTHON, AccessibilityBus, App, bus_env
from mcec_e2e import Copy, manual_copy, sdk_envelope, sdk_stdio
from xdesk import Desk, forget_stop_record, wait_until

pytestmark = pytest.mark.anyio

COMMANDS = ("windows", "click", "drag", "focus", "type", "query", "find", "invoke", "wait-for", "get-text", "clipboard",
            "clipboard.read")
MAIN = {"window": "mcec a11y main"}
LIST = {"window": "mcec a11y list"}
CHORD = "ctrl+alt+shift+s"


@pytest.fixture(scope="module")
def desk():
    with Desk() as d:
        forget_stop_record(d.inner)
        yield d
        forget_stop_record(d.inner)


@pytest.fixture(scope="module")
def bus(desk: Desk):
    b = AccessibilityBus(desk.inner)
    yield b
    b.close()


@pytest.fixture(scope="module")
def app(desk: Desk, bus: AccessibilityBus):
    a = App.test_app(desk.inner)
    yield a
    a.close()


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n", commands=COMMANDS)


@asynccontextmanager
async def agent(copy: Copy, desk: Desk, **env: str):
    extra = {k: v for k, v in bus_env(desk.inner).items() if k in ("DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
    extra.update(env)
    async with sdk_stdio(copy, env_extra=extra) as (session, _init):
        yield session


async def call(s: Any, tool: str, args: dict) -> dict:
    return sdk_envelope(await s.call_tool(tool, args))


async def ok(s: Any, tool: str, args: dict) -> Any:
    env = await call(s, tool, args)
    assert env["ok"], f"{tool} {args}: {env}"
    return env["result"]


async def refused(s: Any, tool: str, args: dict, code: str) -> str:
    env = await call(s, tool, args)
    assert env["ok"] is False, f"{tool} {args} should fail: {env}"
    assert env["error"]["code"] == code, env
    return env["error"]["detail"]


async def window_bounds(s: Any, title: str) -> dict:
    found = [w for w in (await ok(s, "windows", {}))["windows"] if w["title"] == title]
    assert len(found) == 1, found
    return found[0]["bounds"]


def inside(inner: dict, outer: dict) -> bool:
    return (
        inner["x"] >= outer["x"]
        and inner["y"] >= outer["y"]
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"]
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"]
    )


async def test_find_a_button_by_name_and_invoke_it(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        found = await ok(s, "find", {**MAIN, "value": "Press me"})
        button = found["element"]
        assert button["role"] == "push-button" and button["name"] == "Press me"
        assert "enabled" in button["states"] and "click" in button["actions"]
        assert inside(button["bounds"], await window_bounds(s, "mcec a11y main")), button
        # The same element keeps its id.
        again = await ok(s, "find", {**MAIN, "by": "name", "value": "press me", "role": "button"})
        assert again["element"]["elementId"] == button["elementId"]
        mark = app.mark()
        done = await ok(s, "invoke", {"elementId": button["elementId"]})
        assert done["done"] == "click"
        app.wait_line(lambda line: line == "pressed Press me", mark)
    assert "tool=invoke ok=true" in copy.log()


async def test_click_at_the_centre_of_an_element_presses_it(copy: Copy, desk: Desk, app: App) -> None:
    """Bounds are desktop pixels: the pointer lands on the button they name."""
    async with agent(copy, desk) as s:
        b = (await ok(s, "find", {**MAIN, "value": "Press me"}))["element"]["bounds"]
        mark = app.mark()
        await ok(s, "click", {"at": {"x": b["x"] + b["width"] // 2, "y": b["y"] + b["height"] // 2}})
        app.wait_line(lambda line: line == "pressed Press me", mark)


async def test_click_an_element_endpoint(copy: Copy, desk: Desk, app: App) -> None:
    """`click` takes `{by, value}` (under the window) or `{elementId}` where it takes a point
    and clicks the centre of the element's bounds, in desktop pixels."""
    async with agent(copy, desk) as s:
        button = (await ok(s, "find", {**MAIN, "value": "Press me"}))["element"]
        b = button["bounds"]
        mark = app.mark()
        done = await ok(s, "click", {**MAIN, "at": {"by": "name", "value": "Press me", "role": "button"}})
        assert done["at"] == {"x": b["x"] + b["width"] // 2, "y": b["y"] + b["height"] // 2}, (done, b)
        app.wait_line(lambda line: line == "pressed Press me", mark)
        mark = app.mark()
        await ok(s, "click", {"at": {"elementId": button["elementId"]}})
        app.wait_line(lambda line: line == "pressed Press me", mark)


async def test_drag_between_two_elements(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        mark = app.mark()
        await ok(s, "drag", {**MAIN, "from": {"value": "Drag source"}, "to": {"value": "Drop target"}})
        app.wait_line(lambda line: line.startswith("dragged"), mark)
        assert app.since(mark)[-1] == "dragged Drag source to Drop target", app.since(mark)
        # The app can tell a drag that ends elsewhere: from the element to a point of the window.
        mark = app.mark()
        target = (await ok(s, "find", {**MAIN, "value": "Drop target"}))["element"]["elementId"]
        await ok(s, "drag", {**MAIN, "from": {"value": "Drag source"}, "to": {"x": 3, "y": 3}})
        app.wait_line(lambda line: line.startswith("dragged"), mark)
        assert app.since(mark)[-1] == "dragged Drag source to nothing", app.since(mark)
        mark = app.mark()
        await ok(s, "drag", {"from": {"x": 1, "y": 1}, "to": {"elementId": target}})
        await ok(s, "drag", {**MAIN, "from": {"value": "Drag source"}, "to": {"elementId": target}})
        app.wait_line(lambda line: line.startswith("dragged"), mark)
        assert [line for line in app.since(mark) if line.startswith("dragged")] == [
            "dragged Drag source to Drop target"], app.since(mark)


async def test_focus_an_entry_by_endpoint_then_type(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        await ok(s, "invoke", {**MAIN, "value": "Name field", "action": "setText", "text": ""})
        await ok(s, "focus", MAIN)
        await ok(s, "invoke", {**MAIN, "value": "Press me", "action": "focus"})
        # The positive control: with the button focused, typing does not reach the entry.
        mark = app.mark()
        await ok(s, "type", {"text": "a"})
        await anyio.sleep(0.3)
        assert not [line for line in app.since(mark) if line.startswith("entry")], app.since(mark)
        done = await ok(s, "focus", {**MAIN, "clickAt": {"value": "Name field", "role": "text"}})
        assert done["clicked"] is not None
        assert "focused" in (await ok(s, "find", {**MAIN, "value": "Name field"}))["element"]["states"]
        mark = app.mark()
        await ok(s, "type", {"text": "typed"})
        app.wait_line(lambda line: line == "entry typed", mark)


async def test_ambiguous_and_missing_endpoints_press_nothing(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        mark = app.mark()
        cases = [
            ("click", {**MAIN, "at": {"value": "Twin"}}, "ambiguous-selector"),
            ("click", {**MAIN, "at": {"value": "No such thing"}}, "element-not-found"),
            ("click", {"at": {"elementId": "e987654321"}}, "element-not-found"),
            ("click", {**MAIN, "at": {"value": ""}}, "bad-arguments"),
            ("click", {**MAIN, "at": {"x": 5, "value": "Twin"}}, "bad-arguments"),
            ("click", {"at": {"value": "Twin"}}, "window-not-found"),
            ("drag", {**MAIN, "from": {"value": "Twin"}, "to": {"value": "Drop target"}}, "ambiguous-selector"),
            ("drag", {**MAIN, "from": {"value": "Drag source"}, "to": {"value": "Twin"}}, "ambiguous-selector"),
            ("focus", {**MAIN, "clickAt": {"value": "Twin"}}, "ambiguous-selector"),
            ("click", {**MAIN, "at": {"value": "Never enabled", "states": ["shiny"]}}, "bad-arguments"),
        ]
        for tool, args, code in cases:
            env = await call(s, tool, args)
            assert env["ok"] is False and env["error"]["code"] == code, (tool, args, env)
            if code == "ambiguous-selector":
                assert env["error"]["detail"].count('push-button "Twin"') == 2, env
        # The positive control: a click by endpoint after them is seen, and only it.
        await ok(s, "click", {**MAIN, "at": {"value": "Press me"}})
        app.wait_line(lambda line: line == "pressed Press me", mark)
        acted = [line for line in app.since(mark) if line.startswith(("pressed", "dragged"))]
        assert acted == ["pressed Press me"], acted


async def test_bounds_are_desktop_pixels_under_gdk_scale_2(copy: Copy, desk: Desk, bus: AccessibilityBus) -> None:
    """GTK 3 under GDK_SCALE=2 reports its extents in its own (logical) pixels; mcec answers
    desktop pixels, so the bounds lie inside the X window and a click at their centre lands."""
    scaled = App([SYSTEM_PYTHON, str(APP), "--scaled"], bus_env(desk.inner, GDK_SCALE="2"))
    try:
        async with agent(copy, desk) as s:
            window = await window_bounds(s, "mcec a11y scaled")
            found = (await ok(s, "find", {"window": "mcec a11y scaled", "value": "Scaled button"}))["element"]
            b = found["bounds"]
            assert inside(b, window), (b, window)
            # The button fills the window: at scale 2 its desktop size is most of the window's.
            assert b["width"] * 2 > window["width"] and b["height"] * 2 > window["height"], (b, window)
            mark = scaled.mark()
            await ok(s, "click", {"window": "mcec a11y scaled", "at": {"value": "Scaled button"}})
            scaled.wait_line(lambda line: line == "pressed Scaled button", mark)
    finally:
        scaled.close()


async def test_find_enumerates_every_match_filtered_or_walked(copy: Copy, desk: Desk, app: App) -> None:
    """`find` asks GTK's Collection for role and states and compares names itself; `by: text`
    walks. Both see the deepest rows of the 1,000-row list, and neither stops at the first."""
    async with agent(copy, desk) as s:
        row = (await ok(s, "find", {**LIST, "value": "Row 999"}))["element"]
        assert row["role"] == "table-cell" and row["name"] == "Row 999", row
        detail = await refused(s, "find", {**LIST, "by": "text", "value": "Row 99"}, "ambiguous-selector")
        assert detail.startswith("11 elements match"), detail
        many = await ok(s, "find", {**LIST, "by": "role", "value": "table-cell", "all": True})
        assert len(many["elements"]) == 50, len(many["elements"])
        assert (await ok(s, "find", {**MAIN, "by": "role", "value": "check-box"}))["element"]["name"] == "Remember me"
        # States are filtered by the application: the insensitive button is there, but not enabled.
        assert (await ok(s, "find", {**MAIN, "value": "Never enabled"}))["element"]["role"] == "push-button"
        await refused(s, "find", {**MAIN, "value": "Never enabled", "states": ["enabled"]}, "element-not-found")
        ok_states = await ok(s, "find", {**MAIN, "value": "Press me", "states": ["enabled", "showing"]})
        assert ok_states["element"]["name"] == "Press me"


async def test_entry_text_by_invoke_and_by_typing_after_focus(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        mark = app.mark()
        entry = (await ok(s, "find", {**MAIN, "value": "Name field", "role": "text"}))["element"]
        done = await ok(s, "invoke", {"elementId": entry["elementId"], "action": "setText", "text": "hello"})
        assert done["done"] == "setText" and done["element"]["text"] == "hello"
        app.wait_line(lambda line: line == "entry hello", mark)
        await ok(s, "focus", MAIN)
        await ok(s, "invoke", {"elementId": entry["elementId"], "action": "focus"})
        assert "focused" in (await ok(s, "find", {**MAIN, "value": "Name field"}))["element"]["states"]
        await ok(s, "invoke", {"elementId": entry["elementId"], "action": "appendText", "text": " there"})
        app.wait_line(lambda line: line == "entry hello there", mark)
        await ok(s, "type", {"text": "!"})
        app.wait_line(lambda line: line == "entry hello there!", mark)


async def test_toggle_the_check_box(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        mark = app.mark()
        done = await ok(s, "invoke", {**MAIN, "value": "Remember me", "action": "toggle"})
        app.wait_line(lambda line: line.startswith("toggled Remember me"), mark)
        first = [line for line in app.since(mark) if line.startswith("toggled")][0]
        want = "checked" in done["element"]["states"]
        assert first == f"toggled Remember me {int(want)}"
        # A button is not a toggle: refused, naming what it offers, nothing pressed.
        mark = app.mark()
        detail = await refused(s, "invoke", {**MAIN, "value": "Press me", "action": "toggle"}, "bad-arguments")
        assert "offers press" in detail and "click" in detail
        await anyio.sleep(0.3)
        assert not any(line.startswith("pressed") for line in app.since(mark))


async def test_wait_for_the_delayed_dialogs_ok(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        # Not there yet: a short wait times out (the positive control for the wait below).
        await refused(s, "wait-for", {"window": "mcec a11y dialog", "value": "OK", "timeoutMs": 0}, "timeout")
        mark = app.mark()
        await ok(s, "invoke", {**MAIN, "value": "Open dialog"})
        got = await ok(s, "wait-for", {"window": "mcec a11y dialog", "value": "OK", "condition": "enabled",
                                       "timeoutMs": 20000})
        assert "enabled" in got["element"]["states"]
        assert "dialog ok enabled" in app.since(mark), app.since(mark)
        await ok(s, "invoke", {"elementId": got["element"]["elementId"]})
        app.wait_line(lambda line: line == "dialog ok", mark)


async def test_a_long_wait_for_reports_progress(copy: Copy, desk: Desk, app: App) -> None:
    """`wait-for` may wait up to 60 s, past the 50 s other calls keep to: a client that sends a
    `progressToken` hears how far it got every 2 s."""
    seen: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    async with agent(copy, desk) as s:
        args = {**MAIN, "value": "Never there", "timeoutMs": 4500}
        env = sdk_envelope(await s.call_tool("wait-for", args, progress_callback=on_progress))
        assert env["ok"] is False and env["error"]["code"] == "timeout", env
        assert len(seen) >= 2, seen
        assert all(m and re.fullmatch(r"wait-for: \d+ of 4500 ms waited after [\d.]+ s", m) for m in seen), seen
        # 60 s is accepted (not waited here: the element is there at once); 60.001 s is not.
        assert (await ok(s, "wait-for", {**MAIN, "value": "Press me", "timeoutMs": 60000}))["element"]
        await refused(s, "wait-for", {**MAIN, "value": "Press me", "timeoutMs": 60001}, "bad-arguments")


async def test_two_buttons_with_one_name_are_ambiguous(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        mark = app.mark()
        detail = await refused(s, "find", {**MAIN, "value": "Twin"}, "ambiguous-selector")
        assert detail.startswith("2 elements match"), detail
        assert detail.count("push-button \"Twin\"") == 2, detail
        await refused(s, "invoke", {**MAIN, "value": "Twin"}, "ambiguous-selector")
        both = await ok(s, "find", {**MAIN, "value": "Twin", "all": True})
        assert len({e["elementId"] for e in both["elements"]}) == 2
        await anyio.sleep(0.3)
        assert not any(line == "pressed Twin" for line in app.since(mark))


async def test_an_element_of_a_closed_window_is_stale(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        other = (await ok(s, "find", {"window": "mcec a11y other", "value": "Other button"}))["element"]
        mark = app.mark()
        await ok(s, "invoke", {"elementId": other["elementId"]})
        app.wait_line(lambda line: line == "pressed Other button", mark)
        await ok(s, "invoke", {**MAIN, "value": "Close other"})
        app.wait_line(lambda line: line == "closed other", mark)
        await refused(s, "invoke", {"elementId": other["elementId"]}, "stale-element")
        await refused(s, "click", {"at": {"elementId": other["elementId"]}}, "stale-element")


async def test_query_is_bounded_and_says_when_it_was_cut(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        tree = await ok(s, "query", MAIN)
        assert "cut" not in tree, tree.get("cut")
        by_name = {e["name"]: e for e in tree["elements"]}
        label = by_name["Hello accessible world"]
        assert label["role"] == "label" and label["text"] == "Hello accessible world"
        assert by_name["Remember me"]["role"] == "check-box"
        ids = {e["elementId"] for e in tree["elements"]}
        assert all(e.get("parentId") in ids for e in tree["elements"] if e["depth"] > 0)
        frame = tree["elements"][0]
        assert frame["role"] == "frame" and frame["depth"] == 0
        rows = await ok(s, "query", {**LIST, "maxElements": 50})
        assert rows["count"] == 50 and rows["cut"] == "maxElements"
        shallow = await ok(s, "query", {**LIST, "depth": 1})
        assert shallow["cut"] == "depth" and all(e["depth"] <= 1 for e in shallow["elements"])
        whole = await ok(s, "query", {**LIST, "maxElements": 5000, "depth": 64})
        names = {e["name"] for e in whole["elements"]}
        assert {"Row 0", "Row 999", "List action"} <= names
        sub = await ok(s, "query", {"elementId": frame["elementId"], "depth": 1})
        assert sub["elements"][0]["elementId"] == frame["elementId"]


async def test_a_disabled_element_is_not_invoked(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        mark = app.mark()
        detail = await refused(s, "invoke", {**MAIN, "value": "Never enabled"}, "no-target")
        assert "not enabled" in detail
        await ok(s, "invoke", {**MAIN, "value": "Press me"})  # positive control
        app.wait_line(lambda line: line == "pressed Press me", mark)
        assert "pressed Never enabled" not in app.since(mark)


async def test_mcec_windows_are_never_reachable(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        await ok(s, "query", {"process": "python3", "window": "mcec a11y main", "depth": 1})  # positive control
        # mcec's overlay is on screen (the control that there is something to refuse), found
        # from outside mcec: by its class, as the X server knows it ...
        ids: list[str] = []

        def overlay_shown() -> bool:
            found = desk._xdotool(desk.inner, ("search", "--onlyvisible", "--class", "mcec-overlay"), ok=(0, 1))
            ids.extend(found.split())
            return bool(ids)

        assert wait_until(overlay_shown, 20), "mcec's overlay never showed"
        handle = int(ids[0])
        pid = int(desk.injected("getwindowpid", str(handle)).strip())
        listed = (await ok(s, "windows", {}))["windows"]
        assert listed, "the app's windows are listed (control)"
        # ... and no tool lists it or reaches it, however it is named.
        assert all(w["id"] != handle and w.get("pid") != pid for w in listed), listed
        assert (await ok(s, "windows", {"process": "mcec"}))["windows"] == []
        for sel in ({"process": "mcec"}, {"handle": handle}, {"pid": pid}, {"window": "mcec overlay"}):
            for tool, extra in (("query", {}), ("find", {"value": "x"}), ("get-text", {}), ("focus", {}),
                                ("click", {"at": {"x": 5, "y": 5}})):
                env = await call(s, tool, {**sel, **extra})
                assert env["ok"] is False and env["error"]["code"] == "window-not-found", (tool, sel, env)


async def test_bad_input_is_refused_and_nothing_acts(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        mark = app.mark()
        entry = (await ok(s, "find", {**MAIN, "value": "Name field"}))["element"]["elementId"]
        cases = [
            ("find", {**MAIN, "value": ""}, "bad-arguments"),
            ("find", {**MAIN, "value": "OK\u0007"}, "bad-arguments"),
            ("find", {**MAIN, "by": "role", "value": "frobnicator"}, "bad-arguments"),
            ("find", {**MAIN, "value": "Press me", "role": "widget"}, "bad-arguments"),
            ("find", {**MAIN, "value": "Press me", "states": ["shiny"]}, "bad-arguments"),
            ("find", {**MAIN, "by": "colour", "value": "red"}, "bad-arguments"),
            ("find", {**MAIN, "value": "No such thing"}, "element-not-found"),
            ("find", {"value": "Press me"}, "window-not-found"),
            ("query", {**MAIN, "depth": 0}, "bad-arguments"),
            ("query", {**MAIN, "depth": 100000}, "bad-arguments"),
            ("query", {**MAIN, "maxElements": 0}, "bad-arguments"),
            ("invoke", {"elementId": entry, "action": "setText", "text": "x" * 10_000_000}, "bad-arguments"),
            ("invoke", {"elementId": entry, "action": "setText", "text": "a\u001bb"}, "bad-arguments"),
            ("invoke", {"elementId": entry, "action": "frobnicate"}, "bad-arguments"),
            ("invoke", {"elementId": entry, "action": "named", "name": "frob"}, "bad-arguments"),
            ("invoke", {"elementId": "e987654321"}, "element-not-found"),
            ("invoke", {"elementId": "/org/a11y/atspi/accessible/1"}, "element-not-found"),
            ("invoke", {}, "bad-arguments"),
            ("wait-for", {**MAIN, "value": "Press me", "timeoutMs": 60001}, "bad-arguments"),
        ]
        for tool, args, code in cases:
            env = await call(s, tool, args)
            assert env["ok"] is False and env["error"]["code"] == code, (tool, str(args)[:200], env)
        await anyio.sleep(0.3)
        assert not [line for line in app.since(mark) if line.startswith(("entry", "pressed"))], app.since(mark)


async def test_a_stock_gtk_app_is_readable(copy: Copy, desk: Desk, bus: AccessibilityBus) -> None:
    factory = shutil.which("gtk3-widget-factory")
    assert factory, "gtk3-widget-factory is missing (Debian gtk-3-examples; scripts/test installs it)"
    stock = App([factory], bus_env(desk.inner), ready=None)
    try:
        async with agent(copy, desk) as s:
            got = await ok(s, "windows", {"pid": stock.proc.pid, "condition": "appears", "timeoutMs": 20000})
            handle = got["windows"][0]["id"]
            tree = await ok(s, "query", {"handle": handle, "maxElements": 2000, "depth": 64})
            roles = {e["role"] for e in tree["elements"]}
            assert {"frame", "push-button", "check-box"} <= roles, roles
            assert all("bounds" in e for e in tree["elements"] if "showing" in e["states"] and e["role"] == "push-button")
    finally:
        stock.close()


async def test_no_accessibility_bus_is_a_clear_error(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk, DBUS_SESSION_BUS_ADDRESS="") as s:
        detail = await refused(s, "query", MAIN, "unavailable")
        assert "accessibility bus" in detail and "at-spi" in detail.lower(), detail
        assert "QT_LINUX_ACCESSIBILITY_ALWAYS_ON" in detail
        # No tree to read: `get-text` of the window reads its pixels (issue 28), unless only
        # the tree was asked for.
        read = await ok(s, "get-text", MAIN)
        assert read["source"] == "ocr" and "Hello accessible world" in read["text"], read
        assert read["window"]["title"], read
        detail = await refused(s, "get-text", {**MAIN, "source": "accessibility"}, "unavailable")
        assert "accessibility bus" in detail, detail
    async with agent(copy, desk) as s:
        await ok(s, "query", {**MAIN, "depth": 1})  # positive control: same window, with the bus


async def test_get_text_from_the_tree_and_by_ocr(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk) as s:
        label = await ok(s, "get-text", {**MAIN, "value": "Hello accessible world", "role": "label"})
        assert label["source"] == "accessibility" and label["text"] == "Hello accessible world"
        image = (await ok(s, "find", {**MAIN, "by": "role", "value": "icon"}))["element"]
        assert image["name"] == "" and "text" not in image, image
        await refused(s, "get-text", {"elementId": image["elementId"], "source": "accessibility"}, "element-not-found")
        read = await ok(s, "get-text", {"elementId": image["elementId"]})
        assert (read["source"], read["engine"]) == ("ocr", "tesseract"), read
        words = {w["text"]: w for w in read["words"]}
        assert {"QUICK", "BROWN", "FOX"} <= set(words), read["words"]
        for w in words.values():
            assert inside(w["bounds"], image["bounds"]) and 0 <= w["confidence"] <= 100, (w, image["bounds"])
        region = await ok(s, "get-text", {"region": image["bounds"]})
        assert "QUICK BROWN FOX" in region["text"], region
        whole = await ok(s, "get-text", MAIN)
        assert whole["source"] == "accessibility" and "Hello accessible world" in whole["text"]


async def test_a_missing_ocr_engine_is_named(copy: Copy, desk: Desk, app: App) -> None:
    async with agent(copy, desk, MCEC_TESSERACT="/nonexistent/tesseract") as s:
        image = (await ok(s, "find", {**MAIN, "by": "role", "value": "icon"}))["element"]
        detail = await refused(s, "get-text", {"elementId": image["elementId"]}, "unavailable")
        assert "tesseract-ocr" in detail and "tesseract-ocr-eng" in detail, detail
        # Only Tesseract is tried here, and the detail says why it could not be used.
        assert "(Tesseract: `/nonexistent/tesseract` cannot be started (" in detail, detail
        assert "Windows.Media.Ocr" not in detail, detail


def xclip(desk: Desk, *args: str, text: str | None = None) -> str:
    done = subprocess.run(["xclip", *args], env={"DISPLAY": desk.inner, "PATH": os.environ.get("PATH", "")},
                          input=text, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_clipboard_outlives_the_call_and_reads_what_others_set(copy: Copy, desk: Desk) -> None:
    async with agent(copy, desk) as s:
        secret = "mcec clip ünïcode 1"
        done = await ok(s, "clipboard", {"action": "set", "text": secret})
        assert done["length"] == len(secret)
        assert xclip(desk, "-o", "-selection", "clipboard") == secret
        await ok(s, "clipboard", {"action": "set", "text": "primary text", "selection": "primary"})
        assert xclip(desk, "-o", "-selection", "primary") == "primary text"
        assert xclip(desk, "-o", "-selection", "clipboard") == secret, "PRIMARY is separate"
        owner = subprocess.Popen(["xclip", "-i", "-selection", "clipboard"], stdin=subprocess.PIPE, text=True,
                                 env={"DISPLAY": desk.inner, "PATH": os.environ.get("PATH", "")})
        try:
            assert owner.stdin is not None
            owner.stdin.write("from xclip")
            owner.stdin.close()
            assert wait_until(lambda: xclip(desk, "-o", "-selection", "clipboard") == "from xclip")
            got = await ok(s, "clipboard", {"action": "get"})
            assert got["text"] == "from xclip" and got["owned"] is True
        finally:
            owner.kill()
            owner.wait(timeout=10)
        await refused(s, "clipboard", {"action": "set", "text": "x" * 10_000_000}, "bad-arguments")
        await refused(s, "clipboard", {"action": "set", "text": "a\u0000b"}, "bad-arguments")
        await refused(s, "clipboard", {"action": "set"}, "bad-arguments")
    log = copy.log()
    assert "action=set selection=clipboard length=19" in log
    assert secret not in log and "from xclip" not in log, "the audit must never carry clipboard text"


async def test_reading_the_clipboard_needs_its_own_switch(tmp_path: Path, desk: Desk) -> None:
    no_read = manual_copy(tmp_path / "n", settings="AgentCommandsEnabled = true\n", commands=("clipboard",))
    async with agent(no_read, desk) as s:
        await ok(s, "clipboard", {"action": "set", "text": "visible to others"})  # positive control
        detail = await refused(s, "clipboard", {"action": "get"}, "command-disabled")
        assert "[clipboard.read]" in detail
        assert xclip(desk, "-o", "-selection", "clipboard") == "visible to others"


async def test_an_app_that_never_answers_costs_a_bounded_wait(copy: Copy, desk: Desk, app: App) -> None:
    """The app is frozen (SIGSTOP): its D-Bus calls never answer. Every tool answers anyway,
    with an error that says so, and works again once the app runs (the positive control)."""
    async with agent(copy, desk) as s:
        press = (await ok(s, "find", {**MAIN, "value": "Press me"}))["element"]["elementId"]
        mark = app.mark()
        app.proc.send_signal(signal.SIGSTOP)
        try:
            for tool, args in (("query", MAIN), ("find", {**MAIN, "value": "Press me"}), ("invoke", {"elementId": press})):
                env = await call(s, tool, args)
                assert env["ok"] is False and env["error"]["code"] == "unavailable", (tool, env)
                assert "did not answer" in env["error"]["detail"] or "exposes no accessibility tree" in env["error"]["detail"]
        finally:
            app.proc.send_signal(signal.SIGCONT)
        await ok(s, "invoke", {"elementId": press})
        app.wait_line(lambda line: line == "pressed Press me", mark)
        assert app.since(mark).count("pressed Press me") == 1, "the frozen invoke must not have acted later"


async def test_zz_the_stop_refuses_invoke_and_ends_wait_for(copy: Copy, desk: Desk, app: App) -> None:
    """Last in the file: it latches the stop for the display (forgotten at module teardown)."""
    async with agent(copy, desk) as s:
        mark = app.mark()
        async with anyio.create_task_group() as tg:
            waited: dict = {}

            async def wait_long() -> None:
                waited.update(await call(s, "wait-for", {**MAIN, "value": "Never there", "timeoutMs": 50000}))

            tg.start_soon(wait_long)
            await anyio.sleep(1.0)
            desk.physical("key", CHORD)
        assert waited["ok"] is False and waited["error"]["code"] == "emergency-stopped", waited
        assert "The wait ended after" in waited["error"]["detail"] or "stop" in waited["error"]["detail"]
        await refused(s, "invoke", {**MAIN, "value": "Press me"}, "emergency-stopped")
        await anyio.sleep(0.3)
        assert "pressed Press me" not in app.since(mark)
