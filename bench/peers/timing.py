"""The peers' shared timing: warm up, time `n` messages, print a row of the loop table.

Plain standard library: it runs in the peers' own virtualenv as well as in the project's.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable


def report(label: str, one: Callable[[], float], n: int, places: int = 2) -> None:
    """`one()` runs a message and returns its milliseconds; the row is p50, p95 and 0 statements."""
    for _ in range(20):
        one()
    timings = sorted(one() for _ in range(n))
    print(
        f"| {label} | {statistics.median(timings):.{places}f} | {timings[int(0.95 * (n - 1))]:.{places}f} | 0 |"
    )
