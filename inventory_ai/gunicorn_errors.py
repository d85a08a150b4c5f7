"""gunicorn's own error answers in the API's shape. A request gunicorn refuses before the app sees
it (a request line over `limit_request_line`: 414; a header over `limit_request_field_size`, or
more than `limit_request_fields`: 431; a malformed request: 400) was answered with an HTML page.
gunicorn writes all of them with one function, `gunicorn.util.write_error`; each worker puts this
one in its place (gunicorn.conf.py, post_fork). The path is not known then (the request line may
not have been read), so every such answer is JSON `{"error": {"code", "message"}}`, and it never
quotes the request back."""

from __future__ import annotations

import json

from gunicorn import util


def write_json_error(sock, status_int: int, reason: str, mesg: str) -> None:
    code = reason.lower().replace(" ", "_") or "error"
    message = "internal error" if status_int >= 500 else f"the request was refused: {reason}"
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin1") + body)


def install() -> None:
    util.write_error = write_json_error
