"""The app gunicorn serves, with one more path that answers slowly: `/slow` holds its worker's
thread for SLOW_SECONDS, as a long streamed answer does."""

import time

from wsgi import app as served

SLOW_SECONDS = 15


def app(environ, start_response):
    if environ.get("PATH_INFO") == "/slow":
        time.sleep(SLOW_SECONDS)
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]
    return served(environ, start_response)
