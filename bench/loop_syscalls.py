"""System calls, context switches and page faults per message: what callgrind does not count.

    .venv/bin/python bench/loop_syscalls.py ours 1000      # also: floor, plain (project interpreter)
    .venv-peers/bin/python bench/loop_syscalls.py qwen 1000

The four cases of `make bench-peers` as bench/loop_instructions.py runs them (30 messages of warm-up
first). Then `n` messages under getrusage (context switches, page faults, user and system CPU), and
`n` more with `strace -c -f` attached to every thread of the process for them alone. Printed per
message: the rusage figures, then every system call made at least once in ten messages. Needs strace
(Debian's package) and ptrace allowed.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import loop_instructions


def _traced(messages, n: int) -> str:
    out = tempfile.mktemp(prefix="loop-strace-")
    tasks = os.listdir(f"/proc/{os.getpid()}/task")
    command = ["strace", "-c", "-f", "-o", out] + [a for t in tasks for a in ("-p", t)]
    tracer = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    status = Path("/proc/self/status")
    while "TracerPid:\t0\n" in status.read_text():  # until strace has attached
        time.sleep(0.01)
    time.sleep(0.2)
    messages(n)
    tracer.send_signal(signal.SIGINT)
    tracer.wait()
    with open(out) as f:
        return f.read()


def counted(messages, n: int) -> None:
    messages(30)
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    messages(n)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{sys.argv[1]}, {n} messages, per message:")
    for label, field, scale in (
        ("wall ms", None, 1000),
        ("user CPU ms", "ru_utime", 1000),
        ("system CPU ms", "ru_stime", 1000),
        ("voluntary context switches", "ru_nvcsw", 1),
        ("involuntary context switches", "ru_nivcsw", 1),
        ("minor page faults", "ru_minflt", 1),
    ):
        value = wall if field is None else getattr(after, field) - getattr(before, field)
        print(f"  {label}: {value * scale / n:.3f}")
    summary = _traced(messages, n)
    print("  system calls (strace -c -f), per message:")
    for line in summary.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[3].isdigit():
            calls, name = int(parts[3]), parts[-1]
            if calls * 10 >= n or name == "total":
                errors = f" ({int(parts[4]) / n:.2f} failed)" if len(parts) == 6 else ""
                print(f"    {name}: {calls / n:.2f}{errors}")


def main() -> None:
    loop_instructions.counted = counted
    loop_instructions.main()


if __name__ == "__main__":
    main()
