#!/usr/bin/env bash
# README command 1: install the build dependencies, build a Release binary into build/, and run the
# server in the foreground on 127.0.0.1:10002 with its data under ./data (Ctrl-C stops it cleanly).
#
# Usage: bash scripts/start.sh [extra server flags...]
# Environment: TABLESTONE_HOST (127.0.0.1), TABLESTONE_PORT (10002), TABLESTONE_DATA (./data)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/install-deps.sh --no-tests
# Only the server: the tests are built by scripts/test.sh.
TABLESTONE_TARGETS=tablestone bash scripts/build.sh Release "$ROOT/build"

host="${TABLESTONE_HOST:-127.0.0.1}"
port="${TABLESTONE_PORT:-10002}"
data="${TABLESTONE_DATA:-$ROOT/data}"
mkdir -p "$data"

echo "[start] tablestone on http://$host:$port/devstoreaccount1 (data: $data)"
echo "[start] connection string: UseDevelopmentStorage=true"
exec "$ROOT/build/server/app/tablestone" --tableHost "$host" --tablePort "$port" -l "$data" "$@"
