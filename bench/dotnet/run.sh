#!/usr/bin/env bash
# bench/dotnet/run.sh: the .NET SDK-level benchmark (Program.cs) of tablestone against Azurite 3.35.0 in
# one run: both servers on loopback with a fresh on-disk data directory each, the same Azure.Data.Tables
# 12.13.0 client code against both, the ratios in one Markdown table on stdout (docs/benchmarks.md).
#
#   bench/dotnet/run.sh [--seconds S] [--tasks 1,32]
#
# Environment: TABLESTONE_BIN (default build/server/app/tablestone, else build-test/...). Azurite is
# installed into the scratch dir bench/.cache/azurite as bench/run.sh does (a comparison, never a
# dependency of the product).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
AZURITE_VERSION=3.35.0
TS_BIN="${TABLESTONE_BIN:-}"
if [[ -z "$TS_BIN" ]]; then
  for b in "$ROOT/build/server/app/tablestone" "$ROOT/build-test/server/app/tablestone"; do [[ -x "$b" ]] && { TS_BIN="$b"; break; }; done
fi
[[ -x "$TS_BIN" ]] || { echo "run.sh: no tablestone binary (set TABLESTONE_BIN)" >&2; exit 2; }
AZURITE_BIN="$ROOT/bench/.cache/azurite/node_modules/.bin/azurite-table"
if [[ ! -x "$AZURITE_BIN" ]]; then
  echo "installing Azurite $AZURITE_VERSION into bench/.cache/azurite" >&2
  timeout 600 npm install --prefix "$ROOT/bench/.cache/azurite" --no-audit --no-fund "azurite@$AZURITE_VERSION" >&2
fi
WORK="$(mktemp -d /tmp/tablestone-dotnet-bench.XXXXXX)"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() {  # wait_up PORT PID NAME: any HTTP answer within 60 s
  for _ in $(seq 600); do
    kill -0 "$2" 2>/dev/null || { echo "run.sh: $3 exited at startup" >&2; exit 1; }
    curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0
    sleep 0.1
  done
  echo "run.sh: $3 did not answer within 60 s" >&2; exit 1
}

TS_PORT="$(free_port)"; AZ_PORT="$(free_port)"
mkdir -p "$WORK/ts" "$WORK/az"
"$TS_BIN" --tableHost 127.0.0.1 --tablePort "$TS_PORT" -l "$WORK/ts" -s >"$WORK/ts.log" 2>&1 &
PIDS+=($!); wait_up "$TS_PORT" $! tablestone
"$AZURITE_BIN" --tableHost 127.0.0.1 --tablePort "$AZ_PORT" --location "$WORK/az" --disableTelemetry >"$WORK/az.log" 2>&1 &
PIDS+=($!); wait_up "$AZ_PORT" $! azurite

KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
cs() { echo "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$KEY;TableEndpoint=http://127.0.0.1:$1/devstoreaccount1;"; }
dotnet build "$HERE" -c Release -nologo -v:q -clp:ErrorsOnly >&2
echo "tablestone $("$TS_BIN" --version 2>/dev/null | head -1), azurite $AZURITE_VERSION, $(dotnet --version) SDK, $(nproc) cores" >&2
dotnet "$HERE/bin/Release/net10.0/TableBench.dll" --target "tablestone=$(cs "$TS_PORT")" --target "azurite=$(cs "$AZ_PORT")" "$@"
