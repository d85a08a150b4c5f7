"""Production logs: one JSON line per record. The workers and gunicorn's master share one stderr
(gunicorn's errorlog "-"): a line another process writes is never stuck to a JSON line. Real
processes, writing at once to one file as they would to one stderr."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.serving import REPO

APP_LINES = """
import structlog, sys
from inventory_ai.logging import configure_logging
configure_logging(production=True)
log = structlog.get_logger("inventory_ai.test")
sys.stdin.read(1)
for i in range(3000):
    log.info("request", n=i, path="/api/v1/chat", note="x" * (i % 300))
"""
GUNICORN_LINES = """
import logging, sys
handler = logging.StreamHandler(sys.stderr)
handler.setFormatter(logging.Formatter("[%(process)d] [INFO] %(message)s"))
log = logging.getLogger("gunicorn.error")
log.addHandler(handler)
log.setLevel(logging.INFO)
sys.stdin.read(1)
for i in range(3000):
    log.info("Booting worker with pid: %d", i)
"""


def test_a_json_line_never_shares_its_line_with_another_processs_line(tmp_path):
    path = tmp_path / "stderr.log"
    with path.open("ab") as shared:  # O_APPEND, as a log file or a pipe is shared
        writers = [
            subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stderr=shared, cwd=REPO)
            for code in (APP_LINES, APP_LINES, GUNICORN_LINES, GUNICORN_LINES)
        ]
        for writer in writers:  # they start writing together
            writer.stdin.write(b"g")
        for writer in writers:
            writer.stdin.close()
        for writer in writers:
            assert writer.wait(60) == 0
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 * 3000
    stuck = [line for line in lines if line.startswith("{") != line.endswith("}") or line.count("{") > 1]
    assert stuck == [], stuck[:3]
    assert sum(json.loads(line)["event"] == "request" for line in lines if line.startswith("{")) == 2 * 3000
