# Every target does its own set-up on a fresh machine: nothing relies on a hand install.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
FLASK   := $(BIN)/flask --app wsgi

.PHONY: lock run serve test test-pg test-hosts hosts-tools lint fuzz screenshots bench bench-peers bench-chat bench-hosts bench-faults bench-crash install chromium wrk clean traces

# constraints.txt holds every package's version as CI tested it, the ones pyproject.toml does not name
# too: a new release of a dependency's dependency changes nothing until it is tested and written there.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Writes constraints.txt from what .venv holds (after a pin in pyproject.toml changed in both files).
lock: $(STAMP)
	{ grep '^#' constraints.txt; $(BIN)/python -m pip freeze --exclude-editable; } > constraints.tmp
	mv constraints.tmp constraints.txt

# Debian's chromium for the browser tests (never a downloaded browser build), and a CJK font so
# Chinese renders in the browser and in docs/screenshots.
chromium:
	@if ! command -v chromium >/dev/null 2>&1 || ! fc-list 2>/dev/null | grep -qi "wenquanyi"; then \
	  echo "installing Debian chromium and a CJK font for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei >/dev/null; \
	fi

# wrk (C, Debian) drives the concurrent-chat benchmark without taking the CPU it measures.
wrk:
	@command -v wrk >/dev/null 2>&1 || { echo "installing Debian wrk for bench-chat"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }

# `make run PORT=5001` serves on another port; the line before the server's own says which.
PORT    ?= 5000
run: $(STAMP)
	$(FLASK) db upgrade
	$(FLASK) seed
	@echo "inventory_ai: serving on http://127.0.0.1:$(PORT) (another port: make run PORT=5001)"
	$(FLASK) run --host 127.0.0.1 --port $(PORT)

# Traces in Arize Phoenix, on this machine (docs/operations.md, "Traces"): Phoenix from PyPI in a
# virtualenv of its own (its dependencies are not the app's pins), its storage in instance/phoenix,
# and the app exporting to it over OTLP. PORT and PHOENIX_PORT (6006) choose the ports.
PHOENIX := .venv-phoenix
traces: $(STAMP)
	test -x $(PHOENIX)/bin/phoenix || { $(PY) -m venv $(PHOENIX) && $(PHOENIX)/bin/python -m pip install \
	  --quiet -c scripts/phoenix-constraints.txt arize-phoenix==20.26.1; }
	$(FLASK) db upgrade
	$(FLASK) seed
	PORT=$(PORT) scripts/traces.sh

# Production-like: gunicorn with gthread workers (gunicorn.conf.py); set INVENTORY_AI_ENV=production
# and INVENTORY_AI_SECRET_KEY for a real deployment (docs/operations.md).
serve: $(STAMP)
	$(FLASK) db upgrade
	$(FLASK) seed
	$(BIN)/gunicorn -c gunicorn.conf.py wsgi:app

test: $(STAMP) chromium hosts-tools
	$(BIN)/python -m pytest -q

# The pictures in docs/screenshots/, taken in Debian chromium from a freshly seeded server.
screenshots: $(STAMP) chromium
	INVENTORY_AI_SCREENSHOTS=docs $(BIN)/python -m pytest -q -p no:randomly tests/web/test_browser.py -k screenshots

# The same suite on PostgreSQL (127.0.0.1:5432, trust auth, database `test`).
test-pg: $(STAMP) chromium hosts-tools
	INVENTORY_AI_TEST_DATABASE_URL=$${INVENTORY_AI_TEST_DATABASE_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/test} \
	  $(BIN)/python -m pytest -q

# Two app hosts on one PostgreSQL and one Redis, tested from outside (tests/ops/hosts; docs/operations.md,
# "Running several hosts"). Each host in a network namespace of its own when `ip netns` is allowed, else
# on a loopback port of its own; the output says which. A few minutes; not part of `make test`.
test-hosts: $(STAMP) hosts-tools
	INVENTORY_AI_TEST_DATABASE_URL=$${INVENTORY_AI_TEST_DATABASE_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/test} \
	  $(BIN)/python -m pytest -q tests/ops/hosts

# Debian's redis-server (the hosts' Redis, and the one the Redis fault tests stop mid-run, are the run's
# own, never a shared one) and iproute2
# (`ip netns`); without iproute2 the hosts run on loopback ports.
hosts-tools:
	@command -v redis-server >/dev/null 2>&1 || { echo "installing Debian redis-server for the Redis fault tests and test-hosts"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }
	@command -v ip >/dev/null 2>&1 || { echo "installing Debian iproute2 for test-hosts"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null; } \
	  || echo "iproute2 could not be installed: the hosts run on loopback ports"; }

# The admin API fuzzed from its own OpenAPI document, call by call and in sequences along its links,
# long and random (make test runs it small and derandomised). Findings become fixed tests.
fuzz: $(STAMP)
	INVENTORY_AI_FUZZ_EXAMPLES=$${INVENTORY_AI_FUZZ_EXAMPLES:-150} INVENTORY_AI_FUZZ_RANDOM=1 \
	  $(BIN)/python -m pytest -q -s -p no:randomly tests/api/test_api_keeps_to_its_document.py -k 'never_errors or sequences_of_calls'

lint: $(STAMP)
	$(BIN)/ruff check inventory_ai tests bench scripts wsgi.py gunicorn.conf.py
	$(BIN)/ruff format --check inventory_ai tests bench scripts wsgi.py gunicorn.conf.py

bench: $(STAMP)
	$(BIN)/python bench/loop_overhead.py
	$(BIN)/python bench/tokens.py
	$(BIN)/python bench/history.py
	$(BIN)/python bench/offline_eval.py
	$(BIN)/python bench/search.py sqlite 10000 100000

# The loop's scenario on Qwen-Agent beside ours, on the same machine, and our loop's writes through
# plain sqlite3 (the database's own floor under ours; docs/benchmarks.md, the loop). Qwen-Agent lives
# in a virtualenv of its own; the packages after it are imports it makes at start.
PEERS := .venv-peers
bench-peers: $(STAMP)
	test -x $(PEERS)/bin/python || $(PY) -m venv $(PEERS)
	$(PEERS)/bin/python -m pip install --quiet qwen-agent==0.0.34 numpy==2.4.6 soundfile==0.14.0 \
	  pillow==13.0.0 tqdm==4.70.1 python-dateutil==4.0.0
	$(PEERS)/bin/python bench/peers/qwen_agent_loop.py 2>/dev/null
	$(BIN)/python bench/peers/plain_loop.py
	$(BIN)/python bench/loop_overhead.py
	$(BIN)/python bench/loop_floor.py

# gunicorn under load (docs/benchmarks.md); each takes a few minutes and wants a quiet machine.
bench-chat: $(STAMP) wrk
	$(BIN)/python bench/chat_load.py 8 32 64

# Two app hosts at once on one PostgreSQL and one Redis (loopback ports, one worker each).
bench-hosts: $(STAMP) wrk hosts-tools
	$(BIN)/python bench/chat_load.py --hosts 2 8 32 64

bench-faults: $(STAMP)
	$(BIN)/python bench/model_faults.py

# Workers killed with SIGKILL under load, on SQLite then PostgreSQL (about 2.5 minutes each).
bench-crash: $(STAMP)
	$(BIN)/python bench/crash.py --database sqlite
	$(BIN)/python bench/crash.py --database postgresql

clean:
	rm -rf $(VENV) $(PEERS) $(PHOENIX) instance .pytest_cache
