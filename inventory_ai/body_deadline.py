"""A deadline for reading a request's body. A client that sends its body slowly (a byte a second)
held a worker thread for as long as it liked: 40 of them took all 2 x 16 threads and /healthz timed
out. Under gunicorn the body is read here first, within `seconds` in all, from the client's socket
(`gunicorn.socket`) with a timeout; a body not in by then is answered 408 (JSON) and the thread is
free. The reverse proxy in front should bound slow clients too (docs/operations.md). Without
gunicorn (the test client, `flask run`) there is no socket to bound and nothing changes."""

from __future__ import annotations

import io
import json
import time

CHUNK = 64 * 1024


class BodyDeadline:
    def __init__(self, app, seconds: float, max_bytes: int):
        self.app, self.seconds, self.max_bytes = app, seconds, max_bytes

    def __call__(self, environ, start_response):
        sock = environ.get("gunicorn.socket")
        length = _length(environ)
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if sock is None or not (length or chunked) or (length or 0) > self.max_bytes:
            return self.app(environ, start_response)  # nothing to read, or refused by size (413)
        try:
            body = self._read(environ["wsgi.input"], sock, length)
        except TimeoutError:
            return _refused(start_response)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("HTTP_TRANSFER_ENCODING", None)
        return self.app(environ, start_response)

    def _read(self, stream, sock, length: int | None) -> bytes:
        deadline, parts, got = time.monotonic() + self.seconds, [], 0
        kept = sock.gettimeout()
        try:
            while length is None or got < length:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                sock.settimeout(remaining)
                part = stream.read(min(CHUNK, length - got) if length is not None else CHUNK)
                if not part:
                    break
                parts.append(part)
                got += len(part)
                if got > self.max_bytes:  # chunked and too long: the app says 413 on what it gets
                    break
        finally:
            sock.settimeout(kept)
        return b"".join(parts)


def _length(environ) -> int | None:
    try:
        return int(environ.get("CONTENT_LENGTH") or 0) or None
    except ValueError:
        return None


def _refused(start_response):
    body = json.dumps(
        {"error": {"code": "request_timeout", "message": "the request body did not arrive in time"}}
    ).encode()
    start_response(
        "408 Request Timeout",
        [("Content-Type", "application/json"), ("Content-Length", str(len(body))), ("Connection", "close")],
    )
    return [body]
