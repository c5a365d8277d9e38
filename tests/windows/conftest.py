"""Fixtures every Wine test module shares: one Wine desk per module, and a clean stop record.

A module that must not inherit a stop an earlier test recorded in the prefix (it would latch
the next mcec.exe at start) says so with `pytestmark = pytest.mark.usefixtures("no_stop_record")`.
"""

from __future__ import annotations

import pytest

from wine_desk import WineDesk


@pytest.fixture(scope="module")
def desk():
    with WineDesk() as d:
        yield d


@pytest.fixture
def no_stop_record(desk: WineDesk) -> None:
    desk.forget_stop_record()
