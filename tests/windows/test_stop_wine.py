"""The emergency stop's Windows hook monitor, run under Wine (mcec-stop-probe.exe).

The operator's keyboard is xdotool on the Xvfb Wine draws on (the hook sees no
LLKHF_INJECTED); another program is mcec-send-input.exe, a second Wine process that calls
SendInput. Every negative test first shows that the hook saw the events it ignores.

    scripts/windows-build && .venv/bin/python -m pytest -q tests/windows
"""

from __future__ import annotations

import pytest

from wine_desk import Probe, key_events

LCTRL, LALT, LSHIFT, S = "0xa2", "0xa4", "0xa0", "0x53"
MODIFIERS = {"0xa2", "0xa3", "0xa4", "0xa5", "0xa0", "0xa1", "0x5b", "0x5c"}
LLKHF_INJECTED = 0x10
CHORD_STROKES = [(LCTRL, "1"), (LALT, "1"), (LSHIFT, "1"), (S, "1"), (S, "0"), (LSHIFT, "0"), (LALT, "0"), (LCTRL, "0")]


def is_latched(line: str) -> bool:
    return line.startswith("LATCHED")


def test_physical_chord_latches(desk):
    with Probe(desk) as probe:
        desk.xdotool("key", "ctrl+alt+shift+s")
        latched = probe.wait_for(is_latched)
        assert "kind=Engaged" in latched and "operator pressed Ctrl+Alt+Shift+S" in latched
        probe.wait_for(lambda l: l.startswith(f"EVENT key vk={S} down=0"))
        events = key_events(probe.snapshot("EVENT"))
        downs = [e for e in events if e["down"] == "1"]
        assert [e["vk"] for e in downs] == [LCTRL, LALT, LSHIFT, S]
        assert all(e["origin"] == "physical" and int(e["flags"], 16) & LLKHF_INJECTED == 0 for e in events)
        assert [e["tripped"] for e in downs] == ["0", "0", "0", "1"], "the main key trips, nothing else"


@pytest.mark.parametrize("mark,origin", [([], "foreign"), (["--mark"], "mcec")])
def test_sendinput_chord_from_another_process_does_not_latch(desk, mark, origin):
    with Probe(desk) as probe:
        assert desk.wine("mcec-send-input", "chord", *mark).startswith("SENT chord Ctrl+Alt+Shift+S events=8")
        # Positive control: the hook saw every injected stroke, flagged, and let none trip.
        probe.wait_for(lambda l: l.startswith("EVENT key"), count=len(CHORD_STROKES))
        events = key_events(probe.snapshot("EVENT"))
        assert [(e["vk"], e["down"]) for e in events] == CHORD_STROKES
        assert all(e["origin"] == origin and int(e["flags"], 16) & LLKHF_INJECTED for e in events)
        assert all(e["tripped"] == "0" for e in events)
        # The same monitor then latches on the operator's chord, and that trip is the first:
        # had the injected chord tripped, this one would be a retrigger.
        desk.xdotool("key", "ctrl+alt+shift+s")
        assert "kind=Engaged" in probe.wait_for(is_latched)
    assert len([l for l in probe.lines if is_latched(l)]) == 1


def test_the_stops_own_release_is_marked_and_trips_nothing(desk):
    with Probe(desk, "--release-on-trip") as probe:
        desk.xdotool("keydown", "ctrl+alt+shift")
        desk.xdotool("key", "s")
        probe.wait_for(is_latched)
        assert probe.wait_for(lambda l: l.startswith(("RELEASED", "RELEASE-FAILED"))) == "RELEASED 8"
        probe.wait_for(lambda l: "origin=mcec" in l, count=8)
        desk.xdotool("keyup", "ctrl+alt+shift")
        probe.wait_for(lambda l: l.startswith(f"EVENT key vk={LCTRL} down=0 origin=physical"))
        events = key_events(probe.snapshot("EVENT"))
        ours = [e for e in events if e["origin"] == "mcec"]
        assert {e["vk"] for e in ours} == MODIFIERS and all(e["down"] == "0" for e in ours)
        assert all(int(e["flags"], 16) & LLKHF_INJECTED and e["tripped"] == "0" for e in ours)
        assert [e for e in events if e["origin"] == "foreign"] == []
    assert len([l for l in probe.lines if is_latched(l)]) == 1


def test_clicks_are_attested_by_origin(desk):
    with Probe(desk) as probe:
        window = desk.focus("mcec stop probe")
        desk.xdotool("mousemove", "--window", window, "60", "60", "click", "1")
        physical = probe.wait_for(lambda l: l.startswith("EVENT button 1 down=1"))
        assert "origin=physical" in physical
        desk.wine("mcec-send-input", "click")
        desk.wine("mcec-send-input", "click", "--mark")
        probe.wait_for(lambda l: l.startswith("EVENT button 1 down=1"), count=3)
        downs = [l.split()[4] for l in probe.snapshot("EVENT button 1 down=1")]
        assert downs == ["origin=physical", "origin=foreign", "origin=mcec"]
        assert len(probe.snapshot("LATCHED")) == 0, "clicks never trip the stop"
