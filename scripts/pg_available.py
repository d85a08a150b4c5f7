"""Exit 0 when the PostgreSQL test server answers, 1 otherwise (used by .ci/run)."""

import os
import sys

import psycopg

URL = os.environ.get("INVENTORY_AI_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")

try:
    psycopg.connect(URL.replace("postgresql+psycopg://", "postgresql://"), connect_timeout=3).close()
except Exception:
    sys.exit(1)
