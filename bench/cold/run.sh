#!/usr/bin/env bash
# bench/cold/run.sh: the cold-path query benchmark of issue 20. Loads N
# entities (12 properties of every Edm type, lib.mjs entity12) into P
# partitions and times full drains of `$filter=Rating eq 5 and Age eq 41`
# (833 rows per 50,000) over raw HTTP (bench/cold/scan.py: one keep-alive
# connection, account SAS, continuation followed):
#   tablestone: the first drain right after loading; then a restart on the
#               loaded directory and five drains on one connection (first,
#               second, ..., fifth = warm);
#   Azurite 3.35 (--inMemoryPersistence --disableTelemetry): five drains
#               right after loading (in memory it has no restart).
# Every run loads afresh; the report gives the median of --runs runs and the
# ratio Azurite/tablestone (>1: tablestone faster). Restart rows are compared
# with Azurite's first and second drain.
#
#   bench/cold/run.sh [--tablestone BIN | --build DIR] [--runs 3] [--count 50000]
#                     [--partitions 5] [--scale N] [--no-azurite]
#                     [--tablestone-args "..."] [--server-cpus 0] [--client-cpus 1] [--out DIR]
#
# --scale N: N entities in N/10000 partitions (at least 5), tablestone only
# unless --azurite is also given (Azurite loads ~5k entities/s). Not in CI.
# The report ends with tablestone's rows scanned per second of the uncached
# drains (N / drain time; the server runs on one core, --server-cpus).
set -uo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
RUNS=3; COUNT=50000; PARTS=5; DO_AZ=1; FORCE_AZ=0; TS_BIN=""; BUILD_DIR=""; TS_ARGS=""
SERVER_CPUS=0; CLIENT_CPUS=1; OUT=""
FILTER="Rating eq 5 and Age eq 41"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tablestone) TS_BIN="$2"; shift ;;
    --build) BUILD_DIR="$2"; shift ;;
    --runs) RUNS="$2"; shift ;;
    --count) COUNT="$2"; shift ;;
    --partitions) PARTS="$2"; shift ;;
    --scale) COUNT="$2"; PARTS=$(( $2 / 10000 > 5 ? $2 / 10000 : 5 )); DO_AZ=0; shift ;;
    --azurite) FORCE_AZ=1 ;;
    --no-azurite) DO_AZ=0 ;;
    --tablestone-args) TS_ARGS="$2"; shift ;;
    --server-cpus) SERVER_CPUS="$2"; shift ;;
    --client-cpus) CLIENT_CPUS="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    -h|--help) sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
(( FORCE_AZ )) && DO_AZ=1
[[ -z "$TS_BIN" ]] && TS_BIN="${BUILD_DIR:-$ROOT/build}/server/app/tablestone"
[[ -x "$TS_BIN" ]] || { echo "no tablestone binary at $TS_BIN" >&2; exit 1; }
AZ_BIN="$BENCH_DIR/.cache/azurite/node_modules/.bin/azurite-table"
if (( DO_AZ )) && [[ ! -x "$AZ_BIN" ]]; then echo "no Azurite at $AZ_BIN (bench/install-bench-deps.sh)" >&2; exit 1; fi
OUT="${OUT:-$(mktemp -d /tmp/tablestone-cold.XXXXXX)}"
mkdir -p "$OUT"
PSIZE=$(( (COUNT + PARTS - 1) / PARTS ))
PORT=20402
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$OUT/data"; }
trap cleanup EXIT

wait_up() {  # wait_up PID: until the server answers Query Tables
  local sas; sas="$(python3 "$BENCH_DIR/make_sas.py")"
  for _ in $(seq 600); do
    kill -0 "$1" 2>/dev/null || { echo "server exited (see $OUT/server.log)" >&2; return 1; }
    [[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept: application/json;odata=nometadata' "http://127.0.0.1:$PORT/devstoreaccount1/Tables?$sas")" == 200 ]] && return 0
    sleep 0.05
  done
  return 1
}
start() {  # start tablestone|azurite ; sets SPID
  if [[ $1 == tablestone ]]; then
    # shellcheck disable=SC2086
    taskset -c "$SERVER_CPUS" "$TS_BIN" --tableHost 127.0.0.1 --tablePort "$PORT" -s -l "$OUT/data" $TS_ARGS >>"$OUT/server.log" 2>&1 &
  else
    taskset -c "$SERVER_CPUS" "$AZ_BIN" --tableHost 127.0.0.1 --tablePort "$PORT" --disableTelemetry --inMemoryPersistence >>"$OUT/server.log" 2>&1 &
  fi
  SPID=$!; PIDS+=("$SPID")
  wait_up "$SPID"
}
stop() {  # Azurite saves on SIGINT only; both stop on it
  kill -INT "$SPID" 2>/dev/null
  for _ in $(seq 300); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.05; done
  kill -KILL "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null
}
load() {
  taskset -c "$CLIENT_CPUS" node "$BENCH_DIR/js/loader.mjs" --url "http://127.0.0.1:$PORT" --table cold \
    --count "$COUNT" --partition-size "$PSIZE" --pk-prefix c --shape edm12 --quiet
}
scan() {  # scan DRAINS -> JSON line
  taskset -c "$CLIENT_CPUS" python3 "$BENCH_DIR/cold/scan.py" --port "$PORT" --table cold --filter "$FILTER" --drains "$1"
}

: >"$OUT/results.jsonl"
for r in $(seq "$RUNS"); do
  rm -rf "$OUT/data"
  start tablestone || exit 1
  echo "{\"server\":\"tablestone\",\"run\":$r,\"load\":$(load)}" >>"$OUT/results.jsonl"
  echo "{\"server\":\"tablestone\",\"run\":$r,\"phase\":\"after_load\",\"scan\":$(scan 1)}" >>"$OUT/results.jsonl"
  stop
  start tablestone || exit 1
  echo "{\"server\":\"tablestone\",\"run\":$r,\"phase\":\"after_restart\",\"scan\":$(scan 5)}" >>"$OUT/results.jsonl"
  stop
  if (( DO_AZ )); then
    start azurite || exit 1
    echo "{\"server\":\"azurite\",\"run\":$r,\"load\":$(load)}" >>"$OUT/results.jsonl"
    echo "{\"server\":\"azurite\",\"run\":$r,\"phase\":\"after_load\",\"scan\":$(scan 5)}" >>"$OUT/results.jsonl"
    stop
  fi
  echo "run $r done" >&2
done

python3 - "$OUT/results.jsonl" "$COUNT" "$PARTS" "$RUNS" "$FILTER" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
count, parts, runs, flt = sys.argv[2:6]
def ms(server, phase, i):
    v = [r["scan"]["ms"][i] for r in rows if r["server"] == server and r.get("phase") == phase]
    return (statistics.median(v), min(v), max(v)) if v else None
ents = {r["server"]: r["scan"]["entities"] for r in rows if "scan" in r}
print(f"### Cold scan: {count} entities, {parts} partitions, `$filter={flt}`, median of {runs} runs")
print(f"rows returned: {ents}")
print("| scan | tablestone ms (min-max) | Azurite ms (min-max) | ratio |")
print("|---|---|---|---|")
table = [("first, right after loading", ("after_load", 0), ("after_load", 0)),
         ("first after a restart", ("after_restart", 0), ("after_load", 0)),
         ("second after the restart", ("after_restart", 1), ("after_load", 1)),
         ("warm (fifth after the restart)", ("after_restart", 4), ("after_load", 4))]
fmt = lambda m: f"{m[0]:.1f} ({m[1]:.1f}-{m[2]:.1f})" if m else "-"
for name, t, a in table:
    tm, am = ms("tablestone", *t), ms("azurite", *a)
    ratio = f"{am[0] / tm[0]:.2f}x" if tm and am else "-"
    print(f"| {name} | {fmt(tm)} | {fmt(am)} | {ratio} |")
# Rows scanned per second by the server (all N rows are read by every
# uncached drain; the server is pinned to --server-cpus, one core by default).
for name, t in (("first after loading", ("after_load", 0)), ("first after a restart", ("after_restart", 0)),
                ("second after the restart", ("after_restart", 1))):
    m = ms("tablestone", *t)
    if m: print(f"tablestone {name}: {int(count) / m[0] * 1000 / 1e6:.2f} M rows scanned/s (median)")
loads = {}
for r in rows:
    if "load" in r: loads.setdefault(r["server"], []).append(r["load"]["entities_per_s"])
print("load entities/s (median): " + ", ".join(f"{k} {statistics.median(v):.0f}" for k, v in loads.items()))
PY
