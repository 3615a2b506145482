#!/usr/bin/env bash
# README command 1: install the build dependencies, build a Release binary into build/, and run the
# server in the foreground (Ctrl-C stops it cleanly). With no settings it serves
# http://127.0.0.1:10002/devstoreaccount1 with its data under ./data of the directory it is run from.
#
# Usage: bash scripts/start.sh [server flags...]      (bash scripts/start.sh --help lists them)
# Settings reach the server unchanged, in its own precedence (defaults < --config file < environment
# < flags): TABLESTONE_HOST, TABLESTONE_PORT, TABLESTONE_LOCATION and every other TABLESTONE_*
# variable of `tablestone --help`. TABLESTONE_DATA is start.sh's older name for TABLESTONE_LOCATION.
# start.sh sets nothing itself, so a --config file's host, port and location are kept.
# TABLESTONE_BIN=PATH runs that binary instead of installing and building (tests/e2e/python/test_start_and_health.py).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The server runs in the caller's directory, so relative paths (--config, -l, the default ./data)
# mean what they mean for any other command; only the install and the build run in $ROOT.
bin="${TABLESTONE_BIN:-$ROOT/build/server/app/tablestone}"

for arg in "$@"; do
  case "$arg" in
    -h | --help)
      echo "Usage: bash scripts/start.sh [server flags...]: build (first run) and run tablestone."
      if [[ -x "$bin" ]]; then
        echo; exec "$bin" --help
      fi
      echo "The server's flags are listed by 'bash scripts/start.sh --help' once it is built"
      echo "(run 'bash scripts/start.sh' once), and in config/README.md."
      exit 0 ;;
  esac
done

if [[ -z "${TABLESTONE_BIN:-}" ]]; then
  # Only the server: the tests are built by scripts/test.sh.
  (cd "$ROOT" && bash scripts/install-deps.sh --no-tests &&
    TABLESTONE_TARGETS=tablestone bash scripts/build.sh Release "$ROOT/build")
fi

if [[ -n "${TABLESTONE_DATA:-}" ]]; then
  if [[ -n "${TABLESTONE_LOCATION:-}" && "$TABLESTONE_LOCATION" != "$TABLESTONE_DATA" ]]; then
    echo "[start] TABLESTONE_DATA and TABLESTONE_LOCATION differ; using TABLESTONE_LOCATION ($TABLESTONE_LOCATION)" >&2
  else
    export TABLESTONE_LOCATION="$TABLESTONE_DATA"
  fi
  unset TABLESTONE_DATA  # not a server setting: the server would warn that it ignores it
fi

# The server logs the address it listens on and its data directory; the default account's
# connection string is UseDevelopmentStorage=true when it listens on 127.0.0.1:10002.
exec "$bin" "$@"
