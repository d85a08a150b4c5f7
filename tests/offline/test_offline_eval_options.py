"""bench/offline_eval.py never prints the cases of a half that is scored only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_even_half_is_refused_with_the_misses_printed():
    run = subprocess.run(
        [sys.executable, "bench/offline_eval.py", "dev_tail", "--half", "even", "-v"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    assert "never read" in run.stderr and "==" not in run.stdout
