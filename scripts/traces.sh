#!/usr/bin/env bash
# `make traces`: Arize Phoenix on this machine (its own storage in instance/phoenix, nothing sent
# anywhere) and the app exporting its traces to it over OTLP/HTTP. Ctrl-C stops both.
#   Phoenix: http://127.0.0.1:${PHOENIX_PORT:-6006}   the app: http://127.0.0.1:${PORT:-5000}
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-5000}"
PHOENIX_PORT="${PHOENIX_PORT:-6006}"
mkdir -p instance/phoenix
export PHOENIX_WORKING_DIR="$PWD/instance/phoenix" PHOENIX_HOST=127.0.0.1 PHOENIX_PORT
export PHOENIX_GRPC_PORT="${PHOENIX_GRPC_PORT:-4317}"
# Local only: no usage telemetry, no sandbox binaries fetched at run time.
export PHOENIX_TELEMETRY_ENABLED=false PHOENIX_ALLOW_EXTERNAL_RESOURCES=false PHOENIX_ALLOWED_SANDBOX_PROVIDERS=NONE
.venv-phoenix/bin/phoenix serve > instance/phoenix/phoenix.log 2>&1 &
phoenix=$!
trap 'kill "$phoenix" 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 120); do
  curl -fsS -o /dev/null "http://127.0.0.1:$PHOENIX_PORT/healthz" 2>/dev/null && break
  kill -0 "$phoenix" 2>/dev/null || { echo "Phoenix did not start: instance/phoenix/phoenix.log"; exit 1; }
  sleep 1
done
echo "Phoenix: http://127.0.0.1:$PHOENIX_PORT  (traces of the app below; its log: instance/phoenix/phoenix.log)"
export OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PHOENIX_PORT" OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf
export OTEL_SERVICE_NAME="${OTEL_SERVICE_NAME:-inventory_ai}" OTEL_BSP_SCHEDULE_DELAY="${OTEL_BSP_SCHEDULE_DELAY:-1000}"
# Phoenix files spans by this resource attribute (its project), else under "default".
export OTEL_RESOURCE_ATTRIBUTES="${OTEL_RESOURCE_ATTRIBUTES:-openinference.project.name=inventory_ai}"
echo "the app: http://127.0.0.1:$PORT"
.venv/bin/flask --app wsgi run --host 127.0.0.1 --port "$PORT"
