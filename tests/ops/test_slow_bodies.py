"""Slow request bodies: clients that send a body a few bytes and then nothing no longer hold the
worker's threads. Past the body-read deadline each is answered 408 (JSON) and its thread is free,
so /healthz is answered with more slow clients than threads. Real gunicorn, real sockets."""

from __future__ import annotations

import json
import socket

import pytest
import requests

from tests.support.serving import serve_gunicorn

SLOW_CLIENTS = 8  # twice the worker's 4 threads


@pytest.fixture
def served(database_url, tmp_path):
    yield from serve_gunicorn(database_url, tmp_path, workers=1, INVENTORY_AI_BODY_READ_SECONDS="2")


def slow_client(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.sendall(
        b"POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nX-Forwarded-Proto: https\r\n"
        b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user'
    )  # and then nothing more
    return sock


def answer_of(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data or not data.endswith(b"}"):
        part = sock.recv(4096)
        if not part:
            break
        data += part
    return data


def test_slow_bodies_are_refused_at_their_deadline_and_the_threads_serve_others(served):
    base, server = served
    port = int(base.rsplit(":", 1)[1])
    clients = [slow_client(port) for _ in range(SLOW_CLIENTS)]
    try:
        assert requests.get(f"{base}/healthz", timeout=60).status_code == 200
        for sock in clients:
            answer = answer_of(sock)
            assert answer.startswith(b"HTTP/1.1 408"), answer[:100]
            body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
            assert body["error"]["code"] == "request_timeout"
    finally:
        for sock in clients:
            sock.close()
    assert "Traceback" not in server.log_path.read_text()
