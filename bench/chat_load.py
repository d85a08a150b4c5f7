"""Concurrent chats against gunicorn, the model being a DashScope-protocol stub that answers in 200 ms.

    .venv/bin/python bench/chat_load.py [--database sqlite|postgresql] [clients ...]   # 8 32 64
    .venv/bin/python bench/chat_load.py --hosts 2 [clients ...]                     # two hosts at once

Real parts: gunicorn with gunicorn.conf.py (2 workers x 64 gthreads), the dashscope SDK over HTTP
to tests/support/dashscope_stub.py in its own process, a seeded database (SQLite by default, or a fresh
PostgreSQL database on 127.0.0.1:5432). The load is wrk (C, from Debian; `make bench-chat` installs
it): one keep-alive connection per client, each sending the next message as soon as its answer
is back, for a fixed time, every message from one of 64 users with their own bearer token. The
ideal is what a zero-cost server would do: clients / 0.2 s messages per second, each taking 0.2 s.
Each worker's share of the server's CPU tells a lopsided run (keep-alive connections stay with the
worker that accepted them) from a slow one. PostgreSQL's CPU (PostgreSQL runs only) is that of
every `postgres` process on the machine, the backends that ended during the level included. Each
level is measured only after a warm-up at the same load, whose rate and p99 are in the last column
(the first level's is the workers' cold start). The column before it splits the workers' CPU a
message into user and system time, counts their threads' context switches a message (voluntary:
a wait for a socket, a lock or the GIL; involuntary: preempted), and on PostgreSQL the sessions
the pool opened a message (connections beyond the pool's kept ones, closed when given back).

`--hosts 2`: two app hosts at once (tests/support/hosts.py: each a gunicorn master with its own
instance folder and loopback port) on one fresh PostgreSQL database and a redis-server of the run's
own, as a deployment behind a balancer runs them. By default each host has one worker of 64 threads,
so the two hosts together have the one-host run's two workers (INVENTORY_AI_WORKERS sets it per
host). Each host gets half the clients, from a wrk of its own (one thread each), started together;
latencies are each host's own, the rate is their sum.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _server import deployed, deployed_hosts

MODEL_SECONDS = 0.2
RUN_SECONDS = 10
# Before each level is measured, the same load for this long, reported on its own: the first
# level's warm-up is the workers' cold start (their model and database connections opened, the
# first statements compiled), which took the first 1-2 s of a run and is not the steady rate.
WARM_UP_SECONDS = 3

# wrk's Lua: each request is sent as the next user (round robin per wrk thread); any answer that
# is not a completed message counts as a failure; the summary is printed as one JSON line.
WRK_SCRIPT = """
local tokens = {}
for line in io.lines(os.getenv("BENCH_TOKENS")) do tokens[#tokens + 1] = line end
local threads = {}
function setup(thread) thread:set("id", #threads); table.insert(threads, thread) end
function init(args) n = id * 7; failures = 0 end
function request()
  n = n + 1
  return wrk.format("POST", "/api/v1/chat",
    {["Authorization"] = "Bearer " .. tokens[(n % #tokens) + 1], ["Content-Type"] = "application/json",
     ["X-Forwarded-Proto"] = "https"},
    '{"message": "hello"}')
end
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"status":%s*"completed"') then
    failures = failures + 1
  end
end
function done(summary, latency, requests)
  local failed = 0
  for _, t in ipairs(threads) do failed = failed + t:get("failures") end
  io.write(string.format(
    '{"requests": %d, "seconds": %f, "failures": %d, "errors": %d, "p50": %f, "p99": %f, "max": %f}\\n',
    summary.requests, summary.duration / 1e6, failed,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status
      + summary.errors.timeout,
    latency:percentile(50) / 1e6, latency:percentile(99) / 1e6, latency.max / 1e6))
end
"""


def _stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command's name; None once the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of these processes so far (Linux /proc)."""
    ticks = 0
    for pid in pids:
        if (fields := _stat(pid)) is not None:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _is_postgres(pid: int | str) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == "postgres"
    except OSError:
        return False


def database_cpu_seconds() -> float:
    """CPU so far of PostgreSQL on this machine: every `postgres` process, and, through the
    postmaster's children's time, the backends that have ended (a connection closed by the pool)."""
    ticks = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or not _is_postgres(entry.name):
            continue
        if (fields := _stat(entry.name)) is None:
            continue
        ticks += int(fields[11]) + int(fields[12])
        if not _is_postgres(fields[1]):  # the postmaster: its ended children's CPU
            ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def workers_counts(pids: list[int]) -> tuple[int, int, int, int]:
    """User and system clock ticks, voluntary and involuntary context switches so far, summed over
    every thread of these processes (a process's own status counts its first thread only)."""
    user = system = voluntary = involuntary = 0
    for pid in pids:
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                status = dict(line.split(":", 1) for line in (task / "status").read_text().splitlines())
            except (OSError, ValueError):
                continue
            user, system = user + int(fields[11]), system + int(fields[12])
            voluntary += int(status["voluntary_ctxt_switches"])
            involuntary += int(status["nonvoluntary_ctxt_switches"])
    return user, system, voluntary, involuntary


def sessions_opened(database: str) -> int:
    """Connections PostgreSQL has accepted into this database so far (pg_stat_database.sessions)."""
    from sqlalchemy import create_engine, text

    admin = create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/test")
    with admin.connect() as conn:
        found = conn.scalar(text("SELECT sessions FROM pg_stat_database WHERE datname = :d"), {"d": database})
    admin.dispose()
    return int(found or 0)


def wrk(base: str, clients: int, seconds: int, script: Path, tokens: Path) -> dict:
    out = subprocess.run(
        ["wrk", "-t", "2", "-c", str(clients), "-d", f"{seconds}s", "--timeout", "30s", "-s", str(script), base],
        env={**os.environ, "BENCH_TOKENS": str(tokens)}, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def wrk_each(bases: list[str], clients: int, seconds: int, script: Path, tokens: list[Path]) -> list[dict]:
    """One wrk per host, started together, each with its share of the clients (and of the users)."""
    runs = [
        subprocess.Popen(
            [
                "wrk",
                "-t",
                "1",
                "-c",
                str(clients // len(bases)),
                "-d",
                f"{seconds}s",
                "--timeout",
                "30s",
                "-s",
                str(script),
                base,
            ],
            env={**os.environ, "BENCH_TOKENS": str(users)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for base, users in zip(bases, tokens, strict=True)
    ]
    results = []
    for run in runs:
        out, err = run.communicate()
        if run.returncode:
            sys.exit(f"wrk failed: {err}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def main_hosts(hosts: int, levels: list[int]) -> None:
    workers, threads = (
        int(os.environ.get("INVENTORY_AI_WORKERS", 1)),
        int(os.environ.get("INVENTORY_AI_THREADS", 64)),
    )
    with deployed_hosts(("--delay", str(MODEL_SECONDS)), hosts, workers, threads) as app:
        script = app.folder / "chat.lua"
        script.write_text(WRK_SCRIPT)
        tokens = []  # each host's clients are users of their own
        for n in range(hosts):
            tokens.append(app.folder / f"tokens-{n}.txt")
            tokens[-1].write_text("\n".join(app.tokens[n::hosts]) + "\n")
        bases = [h.base for h in app.hosts]
        print(
            f"{hosts} hosts x gunicorn {workers} workers x {threads} threads, postgresql, one Redis, model stub "
            f"{MODEL_SECONDS * 1000:.0f} ms in its own process, a wrk per host, {RUN_SECONDS} s per level after "
            f"{WARM_UP_SECONDS} s of warm-up\n"
        )
        print(
            "| clients | messages | failures | msg/s | ideal msg/s | share of ideal | p50 s by host | p99 s by host "
            "| CPU ms per message: servers / stub / wrk / PostgreSQL | hosts' shares of server CPU | warm-up: msg/s |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for clients in levels:
            warm = wrk_each(bases, clients, WARM_UP_SECONDS, script, tokens)
            time.sleep(MODEL_SECONDS * 2)
            pids = [h.pids() for h in app.hosts]
            before = [cpu_seconds(p) for p in pids], cpu_seconds([app.stub.pid])
            children, database = resource.getrusage(resource.RUSAGE_CHILDREN), database_cpu_seconds()
            runs = wrk_each(bases, clients, RUN_SECONDS, script, tokens)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            spent = [cpu_seconds(p) - b for p, b in zip(pids, before[0], strict=True)]
            sent = sum(r["requests"] for r in runs)
            failed = sum(r["failures"] + r["errors"] for r in runs)
            per_message = 1000 / max(1, sent)
            throughput = sum((r["requests"] - r["failures"]) / r["seconds"] for r in runs)
            ideal = clients / MODEL_SECONDS
            wrk_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
            warm_rate = sum((w["requests"] - w["failures"]) / w["seconds"] for w in warm)

            def by_host(key: str, runs=runs) -> str:
                return " / ".join(f"{r[key]:.3f}" for r in runs)

            print(
                f"| {clients} | {sent} | {failed} | {throughput:.1f} | {ideal:.0f} | {throughput / ideal:.0%} "
                f"| {by_host('p50')} | {by_host('p99')} "
                f"| {sum(spent) * per_message:.1f} / {(cpu_seconds([app.stub.pid]) - before[1]) * per_message:.1f} "
                f"/ {wrk_cpu * per_message:.2f} / {(database_cpu_seconds() - database) * per_message:.1f} "
                f"| {'/'.join(f'{s / max(sum(spent), 1e-9):.0%}' for s in spent)} | {warm_rate:.1f} |",
                flush=True,
            )


def run_level(
    base: str, clients: int, script: Path, tokens: Path, server_pids: list[int], stub_pid: int, kind: str,
    database_name: str | None = None,
) -> dict:  # fmt: skip
    workers = server_pids[1:]  # the first is gunicorn's arbiter
    before = cpu_seconds(server_pids), cpu_seconds([stub_pid]), resource.getrusage(resource.RUSAGE_CHILDREN)
    database = database_cpu_seconds()
    per_worker = [cpu_seconds([pid]) for pid in workers]
    counts, opened = workers_counts(workers), sessions_opened(database_name) if database_name else 0
    r = wrk(base, clients, RUN_SECONDS, script, tokens)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    counts = [b - a for a, b in zip(counts, workers_counts(workers), strict=True)]
    opened = sessions_opened(database_name) - opened if database_name else None
    per_worker = [cpu_seconds([pid]) - spent for pid, spent in zip(workers, per_worker, strict=True)]
    completed = r["requests"] - r["failures"]
    per_message = 1000 / max(1, r["requests"])
    return {
        **r,
        "clients": clients,
        "throughput": completed / r["seconds"],
        "ideal": clients / MODEL_SECONDS,
        "server_ms": (cpu_seconds(server_pids) - before[0]) * per_message,
        "stub_ms": (cpu_seconds([stub_pid]) - before[1]) * per_message,
        "wrk_ms": (after.ru_utime + after.ru_stime - before[2].ru_utime - before[2].ru_stime) * per_message,
        "database_ms": (database_cpu_seconds() - database) * per_message if kind == "postgresql" else None,
        # Each worker's share of the server's CPU: keep-alive connections stay with the worker that
        # accepted them, so one worker can carry most of the load while another idles.
        "split": "/".join(f"{spent / max(sum(per_worker), 1e-9):.0%}" for spent in per_worker),
        "user_ms": counts[0] / os.sysconf("SC_CLK_TCK") * per_message,
        "system_ms": counts[1] / os.sysconf("SC_CLK_TCK") * per_message,
        "voluntary": counts[2] / max(1, r["requests"]),
        "involuntary": counts[3] / max(1, r["requests"]),
        "sessions": None if opened is None else opened / max(1, r["requests"]),
    }


def main() -> None:
    args = sys.argv[1:]
    kind = args.pop(args.index("--database") + 1) if "--database" in args else "sqlite"
    hosts = int(args.pop(args.index("--hosts") + 1)) if "--hosts" in args else 1
    levels = [int(x) for x in args if x not in ("--database", "--hosts")] or [8, 32, 64]
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: `make bench-chat` installs it (Debian package wrk)")
    if hosts > 1:  # several hosts share one PostgreSQL database
        return main_hosts(hosts, levels)
    workers, threads = (
        int(os.environ.get("INVENTORY_AI_WORKERS", 2)),
        int(os.environ.get("INVENTORY_AI_THREADS", 64)),
    )
    with deployed(kind, ("--delay", str(MODEL_SECONDS)), workers, threads) as app:
        script, tokens = app.folder / "chat.lua", app.folder / "tokens.txt"
        script.write_text(WRK_SCRIPT)
        tokens.write_text("\n".join(app.tokens) + "\n")
        print(
            f"gunicorn {workers} workers x {threads} threads, {kind}, model stub {MODEL_SECONDS * 1000:.0f} ms "
            f"in its own process, wrk, {RUN_SECONDS} s per level after {WARM_UP_SECONDS} s of warm-up\n"
        )
        print(
            "| clients | messages | failures | msg/s | ideal msg/s | share of ideal | p50 s | p99 s "
            "| p99 / ideal latency | CPU ms per message: server / stub / wrk / PostgreSQL | workers' shares of server CPU "
            "| workers a message: user / system ms, switches voluntary / involuntary, PostgreSQL sessions opened "
            "| warm-up: msg/s, p99 s |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for clients in levels:
            w = wrk(app.base, clients, WARM_UP_SECONDS, script, tokens)
            time.sleep(MODEL_SECONDS * 2)  # the warm-up's last answers end before the level is counted
            name = app.env["INVENTORY_AI_DATABASE_URL"].rsplit("/", 1)[1] if kind == "postgresql" else None
            r = run_level(app.base, clients, script, tokens, app.worker_pids(), app.stub.pid, kind, name)
            database = "–" if r["database_ms"] is None else f"{r['database_ms']:.1f}"
            workers = (
                f"{r['user_ms']:.1f} / {r['system_ms']:.2f}, {r['voluntary']:.0f} / {r['involuntary']:.0f}"
            )
            workers += "" if r["sessions"] is None else f", {r['sessions']:.3f}"
            warm_up = f"{(w['requests'] - w['failures']) / w['seconds']:.1f}, {w['p99']:.3f}"
            if failed := w["failures"] + w["errors"]:
                warm_up += f", {failed} failed"
            print(
                f"| {r['clients']} | {r['requests']} | {r['failures'] + r['errors']} | {r['throughput']:.1f} "
                f"| {r['ideal']:.0f} | {r['throughput'] / r['ideal']:.0%} | {r['p50']:.3f} | {r['p99']:.3f} "
                f"| {r['p99'] / MODEL_SECONDS:.2f}× | {r['server_ms']:.1f} / {r['stub_ms']:.1f} / {r['wrk_ms']:.2f} / {database} "
                f"| {r['split']} | {workers} | {warm_up} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
