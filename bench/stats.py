"""The one percentile the benchmarks report: p50/p90/p99 of samples taken in seconds, in ms."""

from __future__ import annotations

import math


def pct(samples: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of samples in seconds, returned in ms."""
    ordered = sorted(samples)
    k = max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[k] * 1000
