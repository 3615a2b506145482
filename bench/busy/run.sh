#!/usr/bin/env bash
# bench/busy/run.sh: speed that holds on a busy machine (issue 37). Beside
# the server, one CPU-bound loop per core at nice 0 (the default priority of
# whatever else a CI machine runs); tablestone and Azurite 3.35 measured in
# the same run and the same conditions:
#   load        N entities (default 50,000, 12 properties of every Edm type,
#               bench/js loader --shape edm12) in P partitions (default 5)
#   scans       full drains of `$filter=Rating eq 5 and Age eq 41` (833 rows
#               per 50,000) over one keep-alive connection (bench/cold/scan.py,
#               connection opened before timing): the first right after
#               loading; tablestone then restarts on its directory and drains
#               twice (first and second after the restart). Azurite runs in
#               memory (no restart): its restart rows are its first and
#               second drain after loading, as in bench/cold.
#   point GETs  wrk, C connections (default 8), S seconds (default 5), busy;
#               then the loops stop and the same again, quiet
#   inserts     wrk inserts into another table, busy
# and prints a Markdown table with the ratios Azurite/tablestone (>1:
# tablestone faster) and tablestone's GET p99 busy/quiet. Targets (issue 37):
# first scan after loading and after a restart >= 3x Azurite's; GET p99 busy
# <= 2x quiet.
#
#   bench/busy/run.sh [--tablestone BIN | --build DIR] [--runs 1] [--count 50000]
#                     [--partitions 5] [--loops N] [--duration S] [--conns C]
#                     [--tablestone-args "..."] [--no-azurite] [--out DIR]
#
# --loops: CPU-bound loops (default: one per core, `nproc`). They run in this
# script's session, so with autogroup scheduling (kernel.sched_autogroup_enabled)
# they share a scheduling group with the servers, as on a CI machine where
# everything runs in one container. Nothing is pinned. Every process is bounded
# by `timeout`, and the EXIT trap stops the loops and the servers. Loopback only.
# Not in CI: about 2 minutes per run.
set -uo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
RUNS=1; COUNT=50000; PARTS=5; DO_AZ=1; TS_BIN=""; BUILD_DIR=""; TS_ARGS=""
LOOPS="$(nproc)"; DURATION=5; CONNS=8; OUT=""
FILTER="Rating eq 5 and Age eq 41"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tablestone) TS_BIN="$2"; shift ;;
    --build) BUILD_DIR="$2"; shift ;;
    --runs) RUNS="$2"; shift ;;
    --count) COUNT="$2"; shift ;;
    --partitions) PARTS="$2"; shift ;;
    --loops) LOOPS="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --conns) CONNS="$2"; shift ;;
    --tablestone-args) TS_ARGS="$2"; shift ;;
    --no-azurite) DO_AZ=0 ;;
    --out) OUT="$2"; shift ;;
    -h|--help) sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ -z "$TS_BIN" ]] && TS_BIN="${BUILD_DIR:-$ROOT/build}/server/app/tablestone"
[[ -x "$TS_BIN" ]] || { echo "no tablestone binary at $TS_BIN" >&2; exit 1; }
AZ_BIN="$BENCH_DIR/.cache/azurite/node_modules/.bin/azurite-table"
if (( DO_AZ )) && [[ ! -x "$AZ_BIN" ]]; then echo "no Azurite at $AZ_BIN (bench/install-bench-deps.sh)" >&2; exit 1; fi
command -v wrk >/dev/null || { echo "wrk is missing: bash bench/install-bench-deps.sh" >&2; exit 1; }
[[ -d "$BENCH_DIR/js/node_modules" ]] || { echo "bench/js/node_modules is missing: bash bench/install-bench-deps.sh" >&2; exit 1; }
(( LOOPS >= 0 && LOOPS <= 64 )) || { echo "--loops must be 0..64" >&2; exit 2; }
OUT="${OUT:-$(mktemp -d /tmp/tablestone-busy.XXXXXX)}"
mkdir -p "$OUT"
PSIZE=$(( (COUNT + PARTS - 1) / PARTS ))
PORT=20403
URL="http://127.0.0.1:$PORT"
SAS="$(python3 "$BENCH_DIR/make_sas.py")"
# shellcheck source=bench/busy/common.sh
source "$BENCH_DIR/busy/common.sh"
cleanup() { loops_stop; server_stop; rm -rf "$OUT/data"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

server_start() {  # tablestone|azurite
  if [[ $1 == tablestone ]]; then
    # shellcheck disable=SC2086
    timeout 900 "$TS_BIN" --tableHost 127.0.0.1 --tablePort "$PORT" -s -l "$OUT/data" $TS_ARGS >>"$OUT/server.log" 2>&1 &
  else
    timeout 900 "$AZ_BIN" --tableHost 127.0.0.1 --tablePort "$PORT" --disableTelemetry --inMemoryPersistence --silent >>"$OUT/server.log" 2>&1 &
  fi
  SPID=$!
  wait_up
}
load() {
  timeout 300 node "$BENCH_DIR/js/loader.mjs" --url "$URL" --table cold --count "$COUNT" --partition-size "$PSIZE" \
    --pk-prefix c --shape edm12 --quiet &&
    timeout 60 node "$BENCH_DIR/js/loader.mjs" --url "$URL" --table ins --count 0 --quiet >/dev/null
}
scan() {  # scan DRAINS -> JSON line
  timeout 300 python3 "$BENCH_DIR/cold/scan.py" --port "$PORT" --table cold --filter "$FILTER" --drains "$1"
}
run_wrk() {  # SCENARIO TABLE PK -> RESULT json
  (cd "$BENCH_DIR/wrk" && BENCH_BASE="$URL" BENCH_THREADS=1 BENCH_TABLE="$2" BENCH_PK="$3" BENCH_N="$PSIZE" \
    BENCH_SAS="$SAS" BENCH_WRK_DIR=. timeout $((DURATION + 60)) \
    wrk -t1 -c"$CONNS" -d"${DURATION}s" --timeout 30s -s "$1.lua" "$URL" 2>&1 | sed -n 's/^RESULT //p')
}
emit() { echo "{\"server\":\"$1\",\"run\":$2,\"what\":\"$3\",\"r\":$4}" >>"$OUT/results.jsonl"; }

: >"$OUT/results.jsonl"
echo "uptime before: $(uptime)" | tee "$OUT/uptime.txt" >&2
for r in $(seq "$RUNS"); do
  rm -rf "$OUT/data"
  loops_start
  server_start tablestone || exit 1
  emit tablestone "$r" load "$(load)"
  emit tablestone "$r" after_load "$(scan 1)"
  emit tablestone "$r" cache_after_load "$(cache_counts)"
  server_stop
  server_start tablestone || exit 1
  emit tablestone "$r" after_restart "$(scan 2)"
  emit tablestone "$r" cache_after_restart "$(cache_counts)"
  emit tablestone "$r" get_busy "$(run_wrk get cold c000000)"
  emit tablestone "$r" insert_busy "$(run_wrk insert ins "b$RANDOM")"
  loops_stop
  emit tablestone "$r" get_quiet "$(run_wrk get cold c000000)"
  server_stop
  if (( DO_AZ )); then
    loops_start
    server_start azurite || exit 1
    emit azurite "$r" load "$(load)"
    emit azurite "$r" after_load "$(scan 2)"
    emit azurite "$r" get_busy "$(run_wrk get cold c000000)"
    emit azurite "$r" insert_busy "$(run_wrk insert ins "b$RANDOM")"
    loops_stop
    emit azurite "$r" get_quiet "$(run_wrk get cold c000000)"
    server_stop
  fi
  echo "run $r done" >&2
done
echo "uptime after: $(uptime)" | tee -a "$OUT/uptime.txt" >&2

python3 - "$OUT/results.jsonl" "$COUNT" "$PARTS" "$RUNS" "$LOOPS" "$CONNS" "$DURATION" "$FILTER" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
count, parts, runs, loops, conns, dur, flt = sys.argv[2:9]
def vals(server, what, f):
    out = []
    for r in rows:
        if r["server"] == server and r["what"] == what and r["r"]:
            try: out.append(f(r["r"]))
            except (KeyError, IndexError, TypeError, ZeroDivisionError): pass
    return out
def med(v): return (statistics.median(v), min(v), max(v)) if v else None
def fmt(m, d=1): return f"{m[0]:.{d}f} ({m[1]:.{d}f}-{m[2]:.{d}f})" if m else "-"
print(f"### Busy machine: {loops} CPU-bound loops at nice 0; {count} entities in {parts} partitions; "
      f"`$filter={flt}`; wrk -c{conns} {dur} s; median (min-max) of {runs} run(s)")
print("| measure | tablestone | Azurite | ratio (>1: tablestone better) |")
print("|---|---:|---:|---:|")
scan_rows = [("first scan after loading, ms", ("after_load", 0), ("after_load", 0)),
             ("first scan after a restart, ms", ("after_restart", 0), ("after_load", 0)),
             ("second scan after the restart, ms", ("after_restart", 1), ("after_load", 1))]
for name, t, a in scan_rows:
    tm = med(vals("tablestone", t[0], lambda x, i=t[1]: x["ms"][i]))
    am = med(vals("azurite", a[0], lambda x, i=a[1]: x["ms"][i]))
    ratio = f"{am[0] / tm[0]:.1f}x" if tm and am else "-"
    print(f"| {name} | {fmt(tm)} | {fmt(am)} | {ratio} |")
for name, what, key, unit_div, higher_better in (
        ("point GET p50 busy, ms", "get_busy", "p50_us", 1000, False),
        ("point GET p99 busy, ms", "get_busy", "p99_us", 1000, False),
        ("point GET p99 quiet, ms", "get_quiet", "p99_us", 1000, False)):
    tm = med(vals("tablestone", what, lambda x: x[key] / unit_div))
    am = med(vals("azurite", what, lambda x: x[key] / unit_div))
    ratio = f"{am[0] / tm[0]:.1f}x" if tm and am and tm[0] else "-"
    print(f"| {name} | {fmt(tm, 2)} | {fmt(am, 2)} | {ratio} |")
for name, what in (("point GETs/s busy", "get_busy"), ("inserts/s busy", "insert_busy"), ("load entities/s busy", "load")):
    f = (lambda x: x["entities_per_s"]) if what == "load" else (lambda x: x["requests"] / (x["duration_us"] / 1e6))
    tm, am = med(vals("tablestone", what, f)), med(vals("azurite", what, f))
    ratio = f"{tm[0] / am[0]:.1f}x" if tm and am and am[0] else "-"
    print(f"| {name} | {fmt(tm, 0)} | {fmt(am, 0)} | {ratio} |")
errs = {s: sum(r["r"].get("non2xx", 0) + r["r"].get("socket_errors", 0) for r in rows
               if r["server"] == s and isinstance(r["r"], dict) and "requests" in r["r"]) for s in ("tablestone", "azurite")}
print(f"wrk errors (non-2xx + socket): {errs}")
busy = vals("tablestone", "get_busy", lambda x: x["p99_us"])
quiet = vals("tablestone", "get_quiet", lambda x: x["p99_us"])
if busy and quiet:
    print(f"tablestone GET p99 busy/quiet: {statistics.median(busy) / statistics.median(quiet):.2f}x (target <= 2x)")
for what, name in (("cache_after_load", "the first scan after loading"), ("cache_after_restart", "the two after the restart")):
    got = [f'{r["r"]["hits"]}/{r["r"]["hits"] + r["r"]["misses"]}' for r in rows if r["what"] == what and r["r"]]
    print(f"tablestone partitions served from the scan cache by {name} (per run): {', '.join(got)}")
ents = {r["server"]: r["r"]["entities"] for r in rows if r["what"].startswith("after") and r["r"]}
print(f"rows returned per drain: {ents}")
PY
