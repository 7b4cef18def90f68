"""One reconnect policy for SSH connections and log streams: 0.5 s, doubling, at most 30 s."""

from __future__ import annotations

import time
from typing import Protocol

FIRST = 0.5
LONGEST = 30.0


class Retrying(Protocol):
    next_retry: float  # a transport's: monotonic time before which it tries no reconnect


def reconnect_delay(failures: int) -> float:
    """Seconds to wait after the `failures`-th failure in a row (1 -> 0.5 s, 2 -> 1 s, ...)."""
    return min(LONGEST, FIRST * 2 ** max(0, failures - 1))


def retry_wait(failures: int, transport: Retrying) -> float:
    """Before a stream over `transport` is opened again: the stream's own backoff, or the
    connection's when that waits longer (a connect before it would be refused at once)."""
    return max(reconnect_delay(failures), transport.next_retry - time.monotonic())
