"""One reconnect policy for SSH connections and log streams: 0.5 s, doubling, at most 30 s."""

from __future__ import annotations

FIRST = 0.5
LONGEST = 30.0


def reconnect_delay(failures: int) -> float:
    """Seconds to wait after the `failures`-th failure in a row (1 -> 0.5 s, 2 -> 1 s, ...)."""
    return min(LONGEST, FIRST * 2 ** max(0, failures - 1))
