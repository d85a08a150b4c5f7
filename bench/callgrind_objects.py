"""A callgrind profile's events per message, summed by shared object (the interpreter, SQLite, libc …).

    valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --instr-atstart=no \
        --callgrind-out-file=/tmp/cg.ours .venv/bin/python bench/loop_instructions.py ours 200
    .venv/bin/python bench/callgrind_objects.py /tmp/cg.ours 200

With the cache and branch simulation on, the columns are instructions (Ir), first-level instruction
and data cache misses (I1mr, D1mr reads, D1mw writes) and mispredicted conditional and indirect
branches (Bcm, Bim), in thousands a message: what makes one instruction cost more than another,
which an instruction count alone does not show (docs/benchmarks.md, the loop). Reads the output of
callgrind_annotate (valgrind's own tool).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict

EVENTS = ("Ir", "I1mr", "D1mr", "D1mw", "Bcm", "Bim")
_FIELD = r"(?:([\d,]+)(?: \(\s*[\d.]+%\))?|\.)\s+"  # a count, with its share, or "." for none
_LINE = re.compile(r"^\s*" + _FIELD * len(EVENTS) + r"(\S.*)$")
_OBJECT = re.compile(r"\[([^\[\]]*)\]\s*$")


def by_object(annotated: str) -> dict[str, list[int]]:
    totals: dict[str, list[int]] = defaultdict(lambda: [0] * len(EVENTS))
    for line in annotated.splitlines():
        match = _LINE.match(line)
        if match is None or "PROGRAM TOTALS" in line:
            continue
        where = match.group(len(EVENTS) + 1)
        found = _OBJECT.search(where)
        if found:
            name = found.group(1).rsplit("/", 1)[-1].split(".so")[0]
        else:  # an inlined function's line names its source file only: CPython's, by its path
            name = "libpython3.11 (inlined)" if "/Python-3." in where else "?"
        for i in range(len(EVENTS)):
            totals[name][i] += int((match.group(i + 1) or "0").replace(",", ""))
    return totals


def main() -> None:
    path, messages = sys.argv[1], int(sys.argv[2])
    annotated = subprocess.run(
        ["callgrind_annotate", "--threshold=100", f"--show={','.join(EVENTS)}", path],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    totals = by_object(annotated)
    every = [sum(row[i] for row in totals.values()) for i in range(len(EVENTS))]
    print("| object | " + " | ".join(f"{e} k" for e in EVENTS) + " |\n|---|" + "---|" * len(EVENTS))
    for name, row in [*sorted(totals.items(), key=lambda item: -item[1][0])[:6], ("all", every)]:
        print(f"| {name} | " + " | ".join(f"{value / messages / 1000:.1f}" for value in row) + " |")


if __name__ == "__main__":
    main()
