"""What traces cost a message: bench/loop_overhead.py (and, with --calls, bench/chat_calls.py's Python
calls a message) run in turns on three builds, so a busy machine weighs on all of them alike:

    .venv/bin/python bench/traces_overhead.py [--base REV] [--rounds 4] [--calls N]

(`--rounds 0 --calls 200`: the counts alone.)

  before   REV (default: where this branch left main), checked out in a temporary git worktree: the product without traces
  off      this tree, no OTEL_* variable set: what every deployment that does not ask for traces runs
  on       this tree exporting over OTLP/HTTP (BatchSpanProcessor, its defaults) to a sink in another
           process that answers 200 and keeps nothing: the cost of making and exporting the spans

Printed: each run's table rows, then per build the median of the runs' p50 and p95, and the load
average before and after (docs/benchmarks.md, "Traces").
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
ROW = re.compile(r"^\| (one round[^|]*) \| ([\d.]+) \| ([\d.]+) \| (\d+) \|")
CALLS = re.compile(r"^Python calls a message: ([\d,]+)")


def sink() -> None:
    """An OTLP/HTTP endpoint that takes every export and keeps nothing (run as its own process)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler)
    server.serve_forever()


def merge_base() -> str:
    found = subprocess.run(
        ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], capture_output=True, text=True
    )
    return found.stdout.strip() or "main"


def run(tree: Path, script: str, env: dict, *args: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [PYTHON, str(tree / "bench" / script), *args],
        env={**clean, **env},
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if done.returncode != 0:
        raise SystemExit(f"{script} in {tree} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def main() -> None:
    args = sys.argv[1:]
    base = args[args.index("--base") + 1] if "--base" in args else merge_base()
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 4
    chat_calls = int(args[args.index("--calls") + 1]) if "--calls" in args else 0
    port = 4399
    receiver = subprocess.Popen([PYTHON, __file__, "--sink", str(port)])
    on = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    }
    before = Path(tempfile.mkdtemp(prefix="iai-before-")) / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(before), base], check=True
    )
    (before / ".venv").symlink_to(ROOT / ".venv")  # chat_calls.py starts its servers with the tree's .venv
    builds = {"before": (before, {}), "off": (ROOT, {}), "on": (ROOT, on)}
    try:
        print(f"load average before: {os.getloadavg()}")
        rows: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
        for turn in range(rounds):
            for name, (tree, env) in builds.items():
                for line in run(tree, "loop_overhead.py", env).splitlines():
                    found = ROW.match(line)
                    if found:
                        case, p50, p95, sql = found.groups()
                        rows.setdefault((name, case), []).append((float(p50), float(p95), int(sql)))
                        print(f"round {turn + 1} {name:6} {line}", flush=True)
        if rows:
            print(f"\nload average after: {os.getloadavg()}\n")
            print("| build | case | p50 ms (median of runs) | p95 ms (median of runs) | SQL statements |")
            print("|---|---|---|---|---|")
        for (name, case), values in rows.items():
            p50 = statistics.median(v[0] for v in values)
            p95 = statistics.median(v[1] for v in values)
            print(f"| {name} | {case} | {p50:.2f} | {p95:.2f} | {values[0][2]} |")
        if chat_calls:
            print("\n| build | Python calls a message (bench/chat_calls.py) |\n|---|---|")
            for name, (tree, env) in builds.items():
                found = [
                    CALLS.match(line)
                    for line in run(tree, "chat_calls.py", env, str(chat_calls)).splitlines()
                ]
                count = next(m.group(1) for m in found if m)
                print(f"| {name} | {count} |", flush=True)
            print(f"\nload average after: {os.getloadavg()}")
    finally:
        receiver.terminate()
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], check=False)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--sink"]:
        sink()
    else:
        main()
