"""Several app hosts on one PostgreSQL and one Redis, as a deployment with more than one host runs
them: each host a gunicorn master (gunicorn.conf.py, production mode) with its own workers, its own
instance folder and its own address, all sharing the database, a Redis and the model.

Where it is allowed (root, `ip netns`), each host lives in a network namespace of its own, linked
to this machine by a veth pair: its own loopback and ports, the shared services reached over its
interface as remote servers (tests/support/forwarding.py relays PostgreSQL and the model stub,
which listen on this machine's loopback; the Redis is started here, listening on the links too).
Elsewhere the hosts are two gunicorn masters on two loopback ports. `Network.kind` says which.

Clients talk to the hosts as the load balancer in front of them would: `X-Forwarded-Proto: https`
and `X-Forwarded-For` (the staff PC's address), from an address the hosts trust as their proxy.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.cookiejar import DefaultCookiePolicy
from pathlib import Path

import requests
from sqlalchemy.engine import make_url

from tests.support.serving import GUNICORN, REPO, free_port, wait_until_healthy

NAMESPACE_PREFIX = "iaihost"
SUBNET = "10.213"  # /30 links carved out of 10.213.0.0/16, one per host
SECRET_KEY = "several-hosts-secret-key-0123456789abcdef"  # the same on every host, as deployed
# The site's name, as the balancer passes it on to whichever host: the same for every host.
SITE = "warehouse.example"
HOST_PORT = 8000
# What every request says as the balancer forwards it. A connection per request: a kept-alive one
# that a host closes for idleness just as the next request goes out is reset under it (gunicorn's
# keep-alive is 5 s; a balancer retries such a request, these clients need not).
BALANCER = {
    "X-Forwarded-Proto": "https",
    "Connection": "close",
}  # in namespaces every host listens on the same port: its own network stack


@dataclass
class Place:
    """Where one host runs: the address it listens on (and clients reach it at), and the address
    at which it reaches the shared services."""

    name: str
    address: str
    gateway: str
    namespace: str | None = None

    def command(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.namespace, *argv] if self.namespace else argv


def _ip(*args: str) -> str:
    return subprocess.run(["ip", *args], check=True, capture_output=True, text=True).stdout


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _forget_dead_runs() -> None:
    """Namespaces left by a run of this suite that was killed before it could remove them (their
    name carries the run's process id, and that process is gone)."""
    for line in _ip("netns", "list").splitlines():
        name = line.split()[0] if line.split() else ""
        parts = name.split("-")
        if (
            len(parts) == 3
            and parts[0] == NAMESPACE_PREFIX
            and parts[1].isdigit()
            and not _alive(int(parts[1]))
        ):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


@dataclass
class Network:
    kind: str  # "network namespaces" or "loopback ports"
    places: list[Place]
    reason: str = ""  # why loopback ports, when they are used

    @classmethod
    def open(cls, names: tuple[str, ...], namespaces: bool = True) -> Network:
        if not namespaces:
            return cls.loopback(names, "")
        if os.environ.get("INVENTORY_AI_HOSTS_NETWORK") == "loopback":
            return cls.loopback(names, "INVENTORY_AI_HOSTS_NETWORK=loopback")
        if shutil.which("ip") is None:
            return cls.loopback(names, "`ip` (iproute2) is not installed")
        made: list[str] = []
        try:
            _forget_dead_runs()
            return cls._namespaces(names, made)
        except (OSError, subprocess.CalledProcessError) as exc:
            for namespace in made:
                subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
            detail = exc.stderr.strip() if isinstance(exc, subprocess.CalledProcessError) else str(exc)
            return cls.loopback(names, f"`ip netns add` is not allowed here ({detail or exc})")

    @classmethod
    def loopback(cls, names: tuple[str, ...], reason: str) -> Network:
        return cls("loopback ports", [Place(n, "127.0.0.1", "127.0.0.1") for n in names], reason)

    @classmethod
    def _namespaces(cls, names: tuple[str, ...], made: list[str]) -> Network:
        taken = _ip("-4", "-o", "addr", "show")
        block = (os.getpid() * 4) % 16384
        places = []
        for name in names:
            while True:  # a /30 nobody on this machine uses: gateway .1, host .2
                base = block * 4
                gateway = f"{SUBNET}.{base // 256}.{base % 256 + 1}"
                address = f"{SUBNET}.{base // 256}.{base % 256 + 2}"
                block = (block + 1) % 16384
                if f" {gateway}/" not in taken and f" {address}/" not in taken:
                    break
            namespace = f"{NAMESPACE_PREFIX}-{os.getpid()}-{name}"
            outside, inside = f"ih{os.getpid() % 100000}{name}h", f"ih{os.getpid() % 100000}{name}n"
            _ip("netns", "add", namespace)
            made.append(namespace)
            _ip("link", "add", outside, "type", "veth", "peer", "name", inside, "netns", namespace)
            _ip("addr", "add", f"{gateway}/30", "dev", outside)
            _ip("link", "set", outside, "up")
            _ip("-n", namespace, "addr", "add", f"{address}/30", "dev", inside)
            _ip("-n", namespace, "link", "set", inside, "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
            places.append(Place(name, address, gateway, namespace))
        return cls("network namespaces", places)

    def close(self) -> None:
        for place in self.places:
            if place.namespace:  # its veth pair goes with it
                subprocess.run(["ip", "netns", "del", place.namespace], capture_output=True)

    def describe(self) -> str:
        where = ", ".join(
            f"{p.name} at {p.address}" + (f" ({p.namespace})" if p.namespace else "") for p in self.places
        )
        return f"{len(self.places)} hosts in {self.kind}: {where}" + (
            f"; {self.reason}" if self.reason else ""
        )


@dataclass
class Host:
    """One app host: a gunicorn master and its workers, its own folder (instance/, its log)."""

    name: str
    place: Place
    folder: Path
    port: int
    env: dict
    process: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://{self.place.address}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.folder / "gunicorn.log"

    @property
    def instance(self) -> Path:
        return self.folder / "instance"

    def launch(self) -> None:
        (self.folder / "metrics").mkdir(parents=True, exist_ok=True)
        with self.log_path.open("a") as log:
            self.process = subprocess.Popen(
                self.place.command([str(GUNICORN), "-c", str(REPO / "gunicorn.conf.py"), "wsgi:app"]),
                cwd=self.folder, env=self.env, stdout=subprocess.DEVNULL, stderr=log,
                start_new_session=True,  # its own process group: killed together, master and workers
            )  # fmt: skip

    def wait_until_up(self, seconds: float = 120) -> None:
        if not wait_until_healthy(self.base, self.process, seconds):
            tail = self.log_path.read_text()[-3000:]
            raise RuntimeError(f"host {self.name} did not start at {self.base}:\n{tail}")

    def start(self) -> None:
        self.launch()
        self.wait_until_up()

    def pids(self) -> list[int]:
        """The master first, then its workers."""
        found = [self.process.pid]
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{self.process.pid}/task").iterdir():
                found += [int(c) for c in (task / "children").read_text().split()]
        return found

    def kill(self) -> None:
        """The host lost at once: SIGKILL to the master and every worker."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        with contextlib.suppress(ProcessLookupError):  # a worker the master did not reap in time
            os.killpg(self.process.pid, signal.SIGKILL)


@dataclass
class Deployment:
    network: Network
    hosts: list[Host]
    database_url: str  # as this process reaches it
    redis_url: str  # as this process reaches it
    folder: Path
    _helpers: list[subprocess.Popen] = field(default_factory=list)

    def describe(self) -> str:
        return self.network.describe() + f"; one PostgreSQL database and one Redis ({self.redis_url})"


def _redis(folder: Path, addresses: list[str]) -> tuple[subprocess.Popen, int]:
    """A redis-server of this run's own, so nothing here touches anyone else's keys."""
    if shutil.which("redis-server") is None:
        raise RuntimeError("redis-server is not installed (`make test-hosts` installs it)")
    port = free_port()
    with (folder / "redis.log").open("w") as log:
        process = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", *addresses, "--protected-mode", "no",
             "--save", "", "--appendonly", "no", "--dir", str(folder)],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + 20
    import redis

    client = redis.Redis(port=port, socket_connect_timeout=1)
    try:
        while True:
            try:
                client.ping()
                return process, port
            except redis.RedisError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"redis-server did not start: {(folder / 'redis.log').read_text()}"
                    ) from None
                time.sleep(0.1)
    finally:
        client.close()


def _forwarder(pairs: list[str]) -> tuple[subprocess.Popen, dict[tuple[str, int], int]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.forwarding", *pairs],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    listening = json.loads(process.stdout.readline())
    process.stdout.close()  # nothing more is said
    return process, {(p["listen"], p["target"]): p["port"] for p in listening}


@contextlib.contextmanager
def several_hosts(
    folder: Path,
    database_url: str,
    model_port: int,
    names: tuple[str, ...] = ("a", "b"),
    workers: int = 2,
    threads: int = 32,
    env: dict | None = None,
    namespaces: bool = True,
) -> Iterator[Deployment]:
    """Start the hosts (all at once, each waited for), on `database_url` (migrated, seeded) and a
    model answering on this machine's 127.0.0.1:`model_port`; stop everything afterwards.
    `namespaces=False`: loopback ports even where namespaces are allowed (a benchmark, whose
    relays would take CPU from what it measures)."""
    network = Network.open(names, namespaces)
    helpers: list[subprocess.Popen] = []
    hosts: list[Host] = []
    try:
        gateways = sorted({p.gateway for p in network.places})
        redis_process, redis_port = _redis(folder, ["127.0.0.1", *[g for g in gateways if g != "127.0.0.1"]])
        helpers.append(redis_process)
        database = make_url(database_url)
        relayed: dict[tuple[str, int], int] = {}
        if network.kind == "network namespaces":
            targets = (database.port or 5432, model_port)
            forwarder, relayed = _forwarder([f"{g}:{t}" for g in gateways for t in targets])
            helpers.append(forwarder)
        for place in network.places:

            def reach(port: int, place=place) -> int:
                return relayed.get((place.gateway, port), port)

            port = HOST_PORT if place.namespace else free_port()
            host_folder = folder / f"host-{place.name}"
            host_folder.mkdir(parents=True, exist_ok=True)
            host_database = database.set(host=place.gateway, port=reach(database.port or 5432))
            host_env = {
                **os.environ,
                "INVENTORY_AI_ENV": "production",
                "INVENTORY_AI_SECRET_KEY": SECRET_KEY,
                "INVENTORY_AI_DATABASE_URL": host_database.render_as_string(hide_password=False),
                "INVENTORY_AI_REDIS_URL": f"redis://{place.gateway}:{redis_port}/0",
                "INVENTORY_AI_LLM_PROVIDER": "dashscope",
                "DASHSCOPE_API_KEY": "sk-several-hosts-0000000000",
                "DASHSCOPE_HTTP_BASE_URL": f"http://{place.gateway}:{reach(model_port)}/api/v1",
                "INVENTORY_AI_BIND": f"{place.address}:{port}",
                # The clients (this process) come from the gateway: the load balancer, trusted.
                "INVENTORY_AI_TRUSTED_PROXIES": place.gateway,
                "INVENTORY_AI_WORKERS": str(workers),
                "INVENTORY_AI_THREADS": str(threads),
                # Every host's pools together stay well under PostgreSQL's 100 connections.
                "INVENTORY_AI_DB_POOL_SIZE": "4",
                "PROMETHEUS_MULTIPROC_DIR": str(host_folder / "metrics"),
                "PYTHONPATH": str(REPO),  # wsgi.py; the working directory is the host's folder
                # gunicorn's control socket (gunicornc) is ~/.gunicorn/gunicorn.ctl for every master
                # a user runs on a machine: each host here has its own, as on a machine of its own.
                "GUNICORN_CMD_ARGS": f"--control-socket {host_folder / 'gunicorn.ctl'}",
                **(env or {}),
            }
            hosts.append(Host(place.name, place, host_folder, port, host_env))
        for host in hosts:  # started together: their workers load the app at the same time
            host.launch()
        for host in hosts:
            host.wait_until_up()
        yield Deployment(network, hosts, database_url, f"redis://127.0.0.1:{redis_port}/0", folder, helpers)
    finally:
        for host in hosts:
            host.stop()
        for helper in helpers:
            helper.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                helper.wait(timeout=10)
            if helper.poll() is None:
                helper.kill()
        network.close()


class Person:
    """Someone at a staff PC behind the load balancer: one login (a session cookie) that whichever
    host the balancer picks is sent, as a browser would send it to the one site."""

    def __init__(self, username: str, password: str, address: str = "198.51.100.7"):
        self.username, self.password, self.address = username, password, address
        self.cookie: str | None = None
        self.csrf: str | None = None
        self.http = requests.Session()
        # The cookie is Secure (production) and this client talks plain HTTP to the hosts, as the
        # TLS-terminating balancer does: it is kept here and sent by hand, never by the jar.
        self.http.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))

    def headers(self, extra: dict | None = None) -> dict:
        headers = {
            **BALANCER,
            "X-Forwarded-For": self.address,
            "Host": SITE,
            # A browser's same-origin request says where it came from; over https the CSRF check
            # wants it to be this site.
            "Referer": f"https://{SITE}/",
        }
        if self.cookie:
            headers["Cookie"] = f"session={self.cookie}"
        if self.csrf:
            headers["X-CSRFToken"] = self.csrf
        return {**headers, **(extra or {})}

    def request(self, method: str, host: Host, path: str, **kwargs) -> requests.Response:
        headers = self.headers(kwargs.pop("headers", None))
        response = self.http.request(
            method, host.base + path, headers=headers, timeout=kwargs.pop("timeout", 60), **kwargs
        )
        if "session" in response.cookies:
            self.cookie = response.cookies["session"]
        return response

    def get(self, host: Host, path: str, **kwargs) -> requests.Response:
        return self.request("GET", host, path, **kwargs)

    def post(self, host: Host, path: str, **kwargs) -> requests.Response:
        return self.request("POST", host, path, **kwargs)

    def login(self, host: Host, password: str | None = None) -> requests.Response:
        response = self.post(
            host,
            "/api/v1/auth/login",
            json={"username": self.username, "password": password or self.password},
        )
        if response.status_code == 200:
            self.csrf = response.json()["csrf_token"]
        return response


class Script:
    """A script with a bearer token, as a dashboard or an import job calls the API."""

    def __init__(self, token: str, address: str = "198.51.100.9"):
        self.token, self.address = token, address
        self.http = requests.Session()

    def request(self, method: str, host: Host, path: str, **kwargs) -> requests.Response:
        headers = {
            "Authorization": f"Bearer {self.token}",
            **BALANCER,
            "X-Forwarded-For": self.address,
            **kwargs.pop("headers", {}),
        }
        return self.http.request(
            method, host.base + path, headers=headers, timeout=kwargs.pop("timeout", 60), **kwargs
        )

    def get(self, host: Host, path: str, **kwargs) -> requests.Response:
        return self.request("GET", host, path, **kwargs)

    def post(self, host: Host, path: str, **kwargs) -> requests.Response:
        return self.request("POST", host, path, **kwargs)


def tool_names(request_body: dict) -> set[str]:
    """The tools a model request offered."""
    tools = request_body.get("parameters", {}).get("tools") or []
    return {(t.get("function") or t).get("name") for t in tools}


def chat(person, host: Host, message: str, **fields) -> requests.Response:
    return person.post(host, "/api/v1/chat", json={"message": message, **fields})


class EventStream:
    """A streamed answer (Server-Sent Events) read as the page reads it: one reader from start to
    end. (Leaving a reader half-way and starting another closes the connection: the server sees the
    client go away.)"""

    def __init__(self, response: requests.Response):
        self.response = response
        self._lines = response.iter_lines(decode_unicode=True)

    def next_event(self) -> tuple[str, dict]:
        kind = None
        for line in self._lines:
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and kind is not None:
                return kind, json.loads(line.split(":", 1)[1])
        raise EOFError(f"the stream ended (HTTP {self.response.status_code})")

    def start(self) -> dict:
        """The first event, `start`: the answer's conversation and message ids."""
        kind, data = self.next_event()
        assert kind == "start", (kind, data)
        return data

    def kinds_to_the_end(self) -> list[str]:
        kinds = []
        with contextlib.suppress(EOFError):
            while True:
                kinds.append(self.next_event()[0])
        return kinds

    def close(self) -> None:
        self.response.close()
