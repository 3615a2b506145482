#!/usr/bin/env bash
# bench/cold/restart_tables.sh: what the first query after a restart pays
# beyond its rows (issue 20). Loads two tables of N entities of the
# bench/cold shape (cold, cold2), stops the server cleanly, restarts it on
# the directory, and drains `$filter=Rating eq 5 and Age eq 41` once on
# `cold`, once on `cold2`, then once more on `cold` (bench/cold/scan.py,
# each on a new connection). If the first drain after the restart paid for
# opening the table or the store (files, index and filter blocks, counts),
# the first drain of `cold2` would cost less than it; the third is the
# second read of `cold` (scan-cache admission).
#
#   bench/cold/restart_tables.sh BIN [RUNS=3] [N=50000]
#
# The server runs on CPU 0, the client on CPU 1. Wall clock: run it under
# `flock /tmp/bench.lock` on a shared machine. Not in CI.
set -uo pipefail
BIN=$1; RUNS=${2:-3}; N=${3:-50000}; PORT=${PORT:-20977}
B="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT=$(mktemp -d /tmp/tablestone-restart.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
wait_up() {
  local sas; sas="$(python3 "$B/make_sas.py")"
  for _ in $(seq 600); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept: application/json;odata=nometadata' \
      "http://127.0.0.1:$PORT/devstoreaccount1/Tables?$sas")" == 200 ]] && return 0
    sleep 0.05
  done
  return 1
}
start() { taskset -c 0 "$BIN" --tableHost 127.0.0.1 --tablePort "$PORT" -s -l "$OUT/data" >>"$OUT/log" 2>&1 & SPID=$!; wait_up; }
stop() { kill -INT "$SPID"; for _ in $(seq 300); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.05; done; wait "$SPID" 2>/dev/null; }
drain() { taskset -c 1 python3 "$B/cold/scan.py" --port "$PORT" --table "$1" --drains 1; }
for r in $(seq "$RUNS"); do
  rm -rf "$OUT/data"
  start || exit 1
  for t in cold cold2; do
    taskset -c 1 node "$B/js/loader.mjs" --url "http://127.0.0.1:$PORT" --table "$t" --count "$N" \
      --partition-size $(( (N + 4) / 5 )) --pk-prefix c --shape edm12 --quiet >/dev/null
  done
  stop
  start || exit 1
  a=$(drain cold); b=$(drain cold2); c=$(drain cold)
  stop
  echo "run $r: cold first $a | cold2 first $b | cold second $c"
done
