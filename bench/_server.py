"""The app as deployed, for the load and fault benchmarks: gunicorn (gunicorn.conf.py) in production
mode, the dashscope SDK talking to tests/support/dashscope_stub.py in its own process, a migrated and seeded
database (SQLite, or a fresh PostgreSQL database), and USERS staff accounts with a bearer token each.
`deployed_hosts` runs several such hosts (tests/support/hosts.py) on one PostgreSQL database and one Redis.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tests.support.hosts import Host, several_hosts  # noqa: E402
from tests.support.serving import free_port, wait_until_healthy  # noqa: E402

BIN = REPO / ".venv" / "bin"
USERS = 64


@dataclass
class Deployment:
    base: str  # http://127.0.0.1:port
    folder: Path  # the database (SQLite), gunicorn.log, instance/
    tokens: list[str]  # one bearer token per bench user
    server: subprocess.Popen
    stub: subprocess.Popen
    env: dict

    def worker_pids(self) -> list[int]:
        found = [self.server.pid]
        for task in Path(f"/proc/{self.server.pid}/task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
        return found


def database_url(kind: str, folder: Path, name: str | None = None) -> str:
    """A fresh database: dropped and made again on PostgreSQL, so two runs at once on one server
    need a name each (INVENTORY_AI_BENCH_DATABASE; iai_bench_server unless set)."""
    if kind == "sqlite":
        return f"sqlite:///{folder}/bench.db"
    from sqlalchemy import create_engine, text

    name = name or os.environ.get("INVENTORY_AI_BENCH_DATABASE", "iai_bench_server")
    admin = create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/test", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"


def _make_users(env: dict, folder: Path) -> list[str]:
    code = f"""
from inventory_ai import create_app
from inventory_ai.auth import issue_token
from inventory_ai.extensions import db
from inventory_ai.models import User
app = create_app()
with app.app_context():
    staff = db.session.query(User).filter_by(username="staff").one()
    plain = []
    for i in range({USERS}):
        user = User(username=f"bench{{i:02d}}", role="warehouse_staff", password_hash=staff.password_hash)
        db.session.add(user)
        # the bench's users approve their own bookings (bench/crash.py): a person's scope, `decide`
        plain.append(issue_token(user, "bench", valid_days=1, scopes=("read", "chat", "decide"))[1])
    db.session.commit()
    print("\\n".join(plain))
"""
    out = subprocess.run([BIN / "python", "-c", code], env=env, cwd=folder, check=True, capture_output=True)
    return out.stdout.decode().split()


@contextmanager
def deployed(
    database: str = "sqlite",
    stub_args: tuple[str, ...] = (),
    workers: int = 2,
    threads: int = 64,
    extra_env: dict | None = None,
) -> Iterator[Deployment]:
    folder = Path(tempfile.mkdtemp(prefix="iai-bench-"))
    (folder / "metrics").mkdir()
    port = free_port()
    stub = subprocess.Popen(
        [BIN / "python", "-m", "tests.support.dashscope_stub", *stub_args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    server = None
    try:
        env = {
            **os.environ,
            "INVENTORY_AI_DATABASE_URL": database_url(database, folder),
            "DASHSCOPE_API_KEY": "sk-bench-0000000000000000",
            "DASHSCOPE_HTTP_BASE_URL": stub.stdout.readline().strip(),
            "INVENTORY_AI_CHAT_RATE_LIMIT": "1000000 per minute",
            "INVENTORY_AI_DEMO_PASSWORD": "bench-password",
            # As deployed: JSON log lines, security headers, behind a TLS proxy (clients say https).
            "INVENTORY_AI_ENV": "production",
            "INVENTORY_AI_SECRET_KEY": "bench-secret-key-0123456789abcdef",
            "INVENTORY_AI_BIND": f"127.0.0.1:{port}",
            "INVENTORY_AI_WORKERS": str(workers),
            "INVENTORY_AI_THREADS": str(threads),
            "PROMETHEUS_MULTIPROC_DIR": str(folder / "metrics"),
            "PYTHONPATH": str(REPO),  # wsgi.py; instance/ stays in the temporary folder
            **(extra_env or {}),
        }
        for command in (["db", "upgrade"], ["seed"]):
            subprocess.run([BIN / "flask", "--app", "wsgi", *command], env=env, cwd=folder, check=True,
                           capture_output=True)  # fmt: skip
        tokens = _make_users(env, folder)
        server = subprocess.Popen(
            [BIN / "gunicorn", "-c", str(REPO / "gunicorn.conf.py"), "--chdir", str(REPO), "wsgi:app"],
            env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=open(folder / "gunicorn.log", "w"),  # noqa: SIM115
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        if not wait_until_healthy(base, server, seconds=120):  # a busy machine starts workers slowly
            sys.exit(f"gunicorn did not start; see {folder}/gunicorn.log")
        yield Deployment(base, folder, tokens, server, stub, env)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=90)
        stub.terminate()
        stub.wait(timeout=10)


@dataclass
class HostsDeployment:
    hosts: list[Host]  # each: .base, .pids() (its master first), .folder (instance/, gunicorn.log)
    folder: Path
    tokens: list[str]
    stub: subprocess.Popen
    database_url: str


@contextmanager
def deployed_hosts(
    stub_args: tuple[str, ...] = (),
    hosts: int = 2,
    workers: int = 1,
    threads: int = 64,
    extra_env: dict | None = None,
) -> Iterator[HostsDeployment]:
    """`hosts` gunicorn masters, each with its own instance folder and loopback port, on one fresh
    PostgreSQL database and a redis-server of the run's own, the model stub in its own process."""
    folder = Path(tempfile.mkdtemp(prefix="iai-bench-hosts-"))
    stub = subprocess.Popen(
        [BIN / "python", "-m", "tests.support.dashscope_stub", *stub_args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        model_url = stub.stdout.readline().strip()
        url = database_url("postgresql", folder, name="iai_bench_hosts")
        env = {
            **os.environ,
            "INVENTORY_AI_DATABASE_URL": url,
            "INVENTORY_AI_DEMO_PASSWORD": "bench-password",
            "INVENTORY_AI_LLM_PROVIDER": "offline",
            "PYTHONPATH": str(REPO),
        }
        for command in (["db", "upgrade"], ["seed"]):
            subprocess.run([BIN / "flask", "--app", "wsgi", *command], env=env, cwd=folder, check=True,
                           capture_output=True)  # fmt: skip
        tokens = _make_users(env, folder)
        host_env = {
            "INVENTORY_AI_CHAT_RATE_LIMIT": "1000000 per minute",
            "INVENTORY_AI_DB_POOL_SIZE": "20",  # the default, as the one-host runs have it
            **(extra_env or {}),
        }
        model_port = int(model_url.split(":")[2].split("/")[0])
        names = tuple("abcdefgh"[:hosts])
        with several_hosts(
            folder, url, model_port, names, workers, threads, host_env, namespaces=False
        ) as running:
            yield HostsDeployment(running.hosts, folder, tokens, stub, url)
    finally:
        stub.terminate()
        stub.wait(timeout=10)
