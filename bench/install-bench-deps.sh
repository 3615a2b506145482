#!/usr/bin/env bash
# Installs what bench/run.sh needs besides the build: wrk (Debian), the
# bench/js Node packages (npm ci from bench/js/package-lock.json) and Azurite
# 3.35.0 into the scratch dir bench/.cache/azurite (the comparison only, never
# a dependency of the product). Idempotent; run.sh also installs the Node
# parts on demand.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! command -v wrk >/dev/null || ! command -v taskset >/dev/null || ! command -v curl >/dev/null; then
  SUDO=""; [[ $(id -u) == 0 ]] || SUDO=sudo
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends wrk util-linux curl
fi
command -v node >/dev/null || { echo "install-bench-deps: node (>= 18) and npm are required" >&2; exit 1; }
(cd "$BENCH_DIR/js" && npm ci --no-audit --no-fund)
if [[ ! -x "$BENCH_DIR/.cache/azurite/node_modules/.bin/azurite-table" ]]; then
  npm install --prefix "$BENCH_DIR/.cache/azurite" --no-audit --no-fund azurite@3.35.0
fi
echo "bench dependencies ready: $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), node $(node --version), azurite 3.35.0"
