"""The one percentile the benchmarks report: nearest rank, p in 0..100."""

from __future__ import annotations

import math


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile of values, in their own unit."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[k]


def pct(samples: list[float], p: float) -> float:
    """Percentile of samples taken in seconds, returned in ms."""
    return percentile(samples, p) * 1000
