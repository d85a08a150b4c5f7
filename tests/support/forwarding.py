"""TCP forwarding into this machine's loopback, for hosts in network namespaces of their own.

A host in its own namespace has its own 127.0.0.1: PostgreSQL and the DashScope stub, listening on
the machine's loopback, are out of its reach. This process listens on the namespace's gateway
address (the machine's end of its veth pair) and relays each connection to a loopback port, so
the host reaches them as a remote server, over its own network interface.

    python -m tests.support.forwarding 10.213.0.1:5432 10.213.0.5:5432 ...

Each argument is `listen address:target port` (the target is on 127.0.0.1); the listening port is
chosen free. Prints one JSON line, [{"listen": "10.213.0.1", "port": 40123, "target": 5432}, ...],
once every socket listens, then relays until killed.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:  # the other direction may still have bytes to deliver: half-close, then let it end
        for end, how in ((sink, socket.SHUT_WR), (source, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                end.shutdown(how)


def _relay(client: socket.socket, target: int) -> None:
    try:
        upstream = socket.create_connection(("127.0.0.1", target), timeout=10)
    except OSError:
        client.close()
        return
    upstream.settimeout(None)
    for s in (client, upstream):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
    back.start()
    _pipe(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, target: int) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_relay, args=(client, target), daemon=True).start()


def main(pairs: list[str]) -> None:
    listening = []
    for pair in pairs:
        address, target = pair.rsplit(":", 1)
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((address, 0))
        listener.listen(256)
        listening.append((listener, int(target)))
    print(
        json.dumps(
            [{"listen": s.getsockname()[0], "port": s.getsockname()[1], "target": t} for s, t in listening]
        ),
        flush=True,
    )
    threads = [threading.Thread(target=_serve, args=pair, daemon=True) for pair in listening]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main(sys.argv[1:])
