#!/usr/bin/env bash
# bench/scale/run.sh: the scale benchmark of issue 20 (docs/benchmarks.md, "Scale").
#
#   bench/scale/run.sh [--build DIR | --tablestone BIN] [--count N] [--partitions P]
#                      [--deep D] [--conns 16] [--get-conns 32] [--get-seconds 10]
#                      [--get-runs 3] [--tablestone-args "..."] [--drop-caches] [--keep]
#                      [--out DIR] [--data DIR]
#
# 1. Starts tablestone on a fresh data directory (no CPU pinning, nice 0: the
#    load uses both cores, the server's compactions included) and loads N
#    entities (default 2,000,000; the issue's figure is 50,000,000) of 10
#    properties (~245-byte stored values; bench/scale/load.lua) into P
#    partitions (default 10,000) of table `big`, with the fastest path a user
#    has over HTTP: `$batch` requests of 100 inserts over --conns keep-alive
#    connections (wrk -t1, bodies formatted in Lua). Then D entities (default N/10) into the one
#    partition `deep` of table `deep`. Reported: entities/s over the whole
#    load, the slowest and fastest whole second, the slowest batch round trip
#    (a write stall shows there), the server's CPU seconds (user + system, all
#    threads: requests, flushes, compactions) in total and per million
#    entities, tablestone_storage_write_stalls_total.
# 2. Stops it (SIGTERM) and reports bytes on disk per entity (du -sb).
# 3. Restarts on the loaded directory: startup = spawn to the first 200 of an
#    authenticated Query Tables (bench/js/startup.mjs, polled every 2 ms).
#    --drop-caches first empties the kernel's page cache (root only).
# 4. Cold point GETs: wrk -t1 -c<get-conns> of random keys over all N
#    entities (bench/scale/get_random.lua) for --get-seconds, --get-runs
#    times, each on a server restarted just before (empty caches); then as
#    many runs over the first 1,000 entities only (warm: cached after their
#    first read), which shows what the shared machine allows at that
#    concurrency. Each run is reported, and the median of the runs' rates and
#    percentiles: a single run's p99 on two shared cores moves by 2x.
# 5. Deep page: walks table `deep` in pages of 1000 and times the first page,
#    the page at 50% and at 90% (bench/js/drain.mjs --mode deep, median of 20).
# Throughout, bench/scale/sample.py records VmRSS every 0.2 s and the storage
# metrics every second; the report gives the maximum RSS per phase. The data
# directory is deleted at the end unless --keep is given (then <out>/data stays,
# for inspection or a rerun of the later steps; delete it yourself). --data DIR
# reruns steps 2-5 on a directory loaded by an earlier --keep run (with the
# same --count and --partitions; DIR is kept). Prints a summary and writes
# <out>/results.jsonl.
set -uo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
COUNT=2000000; PARTS=10000; DEEP=""; CONNS=16; GET_CONNS=32; GET_SECONDS=10; GET_RUNS=3
TS_BIN=""; BUILD_DIR=""; TS_ARGS=""; OUT=""; DROP=0; KEEP=0; REUSE=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tablestone) TS_BIN="$2"; shift ;;
    --build) BUILD_DIR="$2"; shift ;;
    --count) COUNT="$2"; shift ;;
    --partitions) PARTS="$2"; shift ;;
    --deep) DEEP="$2"; shift ;;
    --conns) CONNS="$2"; shift ;;
    --get-conns) GET_CONNS="$2"; shift ;;
    --get-seconds) GET_SECONDS="$2"; shift ;;
    --get-runs) GET_RUNS="$2"; shift ;;
    --data) REUSE="$2"; shift ;;
    --tablestone-args) TS_ARGS="$2"; shift ;;
    --drop-caches) DROP=1 ;;
    --keep) KEEP=1 ;;
    --out) OUT="$2"; shift ;;
    -h|--help) sed -n '2,42p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
DEEP="${DEEP:-$(( COUNT / 10 ))}"
[[ -z "$TS_BIN" ]] && TS_BIN="${BUILD_DIR:-$ROOT/build}/server/app/tablestone"
[[ -x "$TS_BIN" ]] || { echo "no tablestone binary at $TS_BIN" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is missing (bench/install-bench-deps.sh)" >&2; exit 1; }
OUT="${OUT:-$(mktemp -d /tmp/tablestone-scale.XXXXXX)}"
mkdir -p "$OUT"
DATA="$OUT/data"
if [[ -n "$REUSE" ]]; then
  [[ -d "$REUSE" ]] || { echo "--data $REUSE: no such directory" >&2; exit 1; }
  DATA="$(cd "$REUSE" && pwd)"; KEEP=1
fi
PORT=20502
URL="http://127.0.0.1:$PORT"
# Entities per partition, a multiple of the 100-insert batch (load.lua).
PSIZE=$(( ( (COUNT + PARTS - 1) / PARTS + 99) / 100 * 100 ))
SAS="$(/usr/bin/python3 "$BENCH_DIR/make_sas.py")"
SPID=""; SAMPLER=""
cleanup() {
  touch "$OUT/stop"
  if [[ -n "$SPID" ]] && kill "$SPID" 2>/dev/null; then while kill -0 "$SPID" 2>/dev/null; do sleep 0.05; done; fi
  [[ -n "$SAMPLER" ]] && wait "$SAMPLER" 2>/dev/null
  (( KEEP )) || rm -rf "$DATA"
}
trap cleanup EXIT
result() { echo "$1" >>"$OUT/results.jsonl"; echo "$1"; }
phase() { echo "$1" >"$OUT/phase"; }
sampler() {  # sampler PID: RSS + metrics until the process exits or $OUT/stop appears
  rm -f "$OUT/stop"
  /usr/bin/python3 "$BENCH_DIR/scale/sample.py" --pid "$1" --url "$URL" --out "$OUT/samples.jsonl" \
    --phase-file "$OUT/phase" --stop-file "$OUT/stop" &
  SAMPLER=$!
}
stop_server() {
  touch "$OUT/stop"; wait "$SAMPLER" 2>/dev/null; SAMPLER=""
  local t0; t0=$(date +%s.%N)
  # The restarted server is startup.mjs's orphan, not this shell's child: poll.
  kill -TERM "$SPID"; while kill -0 "$SPID" 2>/dev/null; do sleep 0.02; done; SPID=""
  python3 -c "import sys;print(round((float(sys.argv[2])-float(sys.argv[1]))*1000))" "$t0" "$(date +%s.%N)"
}
wait_up() {
  for _ in $(seq 3000); do
    kill -0 "$SPID" 2>/dev/null || { echo "server exited (see $OUT/server.log)" >&2; return 1; }
    [[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/devstoreaccount1/Tables?$SAS")" == 200 ]] && return 0
    sleep 0.02
  done
  return 1
}
: >"$OUT/results.jsonl"; : >"$OUT/samples.jsonl"
echo "# bench/scale: N=$COUNT in $PARTS partitions ($PSIZE each), deep partition $DEEP, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/env.txt"
echo "# binary $TS_BIN $TS_ARGS; out $OUT" | tee -a "$OUT/env.txt"

# ---- 1. bulk load ----
if [[ -z "$REUSE" ]]; then
phase load
# shellcheck disable=SC2086
"$TS_BIN" --tableHost 127.0.0.1 --tablePort "$PORT" -s -l "$DATA" $TS_ARGS >>"$OUT/server.log" 2>&1 &
SPID=$!
wait_up || exit 1
sampler "$SPID"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SPID/stat"; }  # the server's utime + stime, clock ticks
load_table() {  # load_table STEP TABLE COUNT [fixed PK]: prints the step's result line
  local step="$1" table="$2" n="$3" pk="${4:-}" t0 t1 out
  curl -s -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Accept: application/json;odata=nometadata' \
    -d "{\"TableName\":\"$table\"}" "$URL/devstoreaccount1/Tables?$SAS"
  rm -f "$OUT/$step.done"
  local c0; c0=$(cpu_ticks)
  t0=$(date +%s.%N)
  BENCH_WRK_DIR="$BENCH_DIR/wrk" BENCH_SAS="$SAS" BENCH_BASE="$URL" BENCH_TABLE="$table" BENCH_N="$n" \
    BENCH_PSIZE="$PSIZE" BENCH_PK_FIXED="$pk" BENCH_DONE_FILE="$OUT/$step.done" \
    wrk -t1 -c"$CONNS" -d3600s --timeout 60s -s "$BENCH_DIR/scale/load.lua" "$URL" >"$OUT/$step.wrk" 2>&1 &
  local wpid=$!
  while [[ ! -s "$OUT/$step.done" ]] && kill -0 "$wpid" 2>/dev/null; do sleep 0.05; done
  t1=$(date +%s.%N)
  local c1; c1=$(cpu_ticks)
  kill -INT "$wpid" 2>/dev/null; wait "$wpid"
  out=$(sed -n 's/^RESULT //p' "$OUT/$step.wrk")
  [[ -s "$OUT/$step.done" && -n "$out" ]] || { echo "$step failed (see $OUT/$step.wrk)" >&2; return 1; }
  python3 - "$step" "$n" "$t0" "$t1" "$OUT/$step.done" "$out" "$(( c1 - c0 ))" "$(getconf CLK_TCK)" <<'PY'
import json, sys
step, n, t0, t1, timeline, wrk = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], json.loads(sys.argv[6])
cpu_s = int(sys.argv[7]) / int(sys.argv[8])  # the server's user + system CPU during the step
per_s = [int(x) for x in open(timeline).read().strip().split(",") if x]
whole = per_s[1:-1] or per_s  # the first and last wall-clock seconds are partial
s = t1 - t0
print(json.dumps({"step": step, "loaded": n, "seconds": round(s, 2), "entities_per_s": round(n / s),
                  "min_per_s": min(whole), "max_per_s": max(whole), "failed_batches": wrk["non2xx"],
                  "server_cpu_s": round(cpu_s, 1), "server_cpu_s_per_million": round(cpu_s / n * 1e6, 2),
                  "batch_p99_ms": wrk["p99_us"] / 1000, "batch_max_ms": wrk["max_us"] / 1000}))
PY
}
LOAD=$(load_table load big "$COUNT") || exit 1
result "$LOAD"
phase load-deep
LOADD=$(load_table load-deep deep "$DEEP" deep) || exit 1
result "$LOADD"
phase idle-after-load
sleep 2
METRICS="$(curl -s "$URL/_tablestone/metrics")"
STALLS=$(echo "$METRICS" | awk '$1=="tablestone_storage_write_stalls_total"{print $2}')
result "{\"step\":\"stalls\",\"write_stalls_total\":${STALLS:-null}}"
STOP_MS=$(stop_server)
fi

# ---- 2. disk ----
BYTES=$(du -sb "$DATA" | cut -f1)
TOTAL=$(( COUNT + DEEP ))
result "{\"step\":\"disk\",\"bytes\":$BYTES,\"entities\":$TOTAL,\"bytes_per_entity\":$(( BYTES / TOTAL )),\"stop_ms\":${STOP_MS:-null}}"

# ---- 3. startup on the loaded directory ----
if (( DROP )); then sync; echo 3 >/proc/sys/vm/drop_caches || echo "cannot drop caches" >&2; fi
phase startup
# shellcheck disable=SC2086
ST=$(node "$BENCH_DIR/js/startup.mjs" --url "$URL" --probe "/devstoreaccount1/Tables?$SAS" --idle-ms 1000 --keep \
  --log "$OUT/server.log" -- "$TS_BIN" --tableHost 127.0.0.1 --tablePort "$PORT" -s -l "$DATA" $TS_ARGS) || { echo "restart failed" >&2; exit 1; }
SPID=$(echo "$ST" | python3 -c 'import json,sys;print(json.load(sys.stdin)["pid"])')
sampler "$SPID"
result "{\"step\":\"startup\",$(echo "$ST" | sed 's/^{//')"

# ---- 4. cold point GET ----
get_run() {  # get_run STEP RUN N: one wrk run of random GETs over the first N entities
  local out
  out=$(BENCH_WRK_DIR="$BENCH_DIR/wrk" BENCH_SAS="$SAS" BENCH_TABLE=big BENCH_N="$3" BENCH_PSIZE="$PSIZE" \
    wrk -t1 -c"$GET_CONNS" -d"${GET_SECONDS}s" --timeout 30s -s "$BENCH_DIR/scale/get_random.lua" "$URL" | sed -n 's/^RESULT //p')
  [[ -n "$out" ]] || { echo "$1 run $2 failed" >&2; return 1; }
  # GETs whose entity was not in memory, since this server started (read on
  # the short lane instead of the I/O thread; null before that metric existed).
  local handed
  handed=$(curl -s "$URL/_tablestone/metrics" | awk '$1=="tablestone_disk_hand_offs_total"{print $2}')
  result "{\"step\":\"$1\",\"run\":$2,\"conns\":$GET_CONNS,\"hand_offs\":${handed:-null},$(echo "$out" | sed 's/^{//')"
}
median_of() {  # median_of STEP: the median rate and percentiles of that step's runs
  python3 - "$OUT/results.jsonl" "$1" <<'PY'
import json, statistics, sys
runs = [r for r in map(json.loads, open(sys.argv[1])) if r.get("step") == sys.argv[2] and "run" in r]
med = lambda k: statistics.median(r[k] for r in runs)
print(json.dumps({"step": sys.argv[2] + "-median", "runs": len(runs),
                  "per_s": round(statistics.median(r["requests"] / r["duration_us"] * 1e6 for r in runs)),
                  "p50_us": med("p50_us"), "p90_us": med("p90_us"), "p99_us": med("p99_us"),
                  "p99_us_each": [r["p99_us"] for r in runs],
                  "hand_offs_each": [r.get("hand_offs") for r in runs], "non2xx": sum(r["non2xx"] for r in runs)}))
PY
}
for run in $(seq "$GET_RUNS"); do
  if (( run > 1 )); then  # a fresh process: empty block, entity and table caches
    stop_server >/dev/null
    phase restart
    # shellcheck disable=SC2086
    "$TS_BIN" --tableHost 127.0.0.1 --tablePort "$PORT" -s -l "$DATA" $TS_ARGS >>"$OUT/server.log" 2>&1 &
    SPID=$!
    wait_up || exit 1
    sampler "$SPID"
  fi
  phase get
  get_run cold-get "$run" "$COUNT" || exit 1
done
result "$(median_of cold-get)"

# The same wrk runs over the first 1,000 entities only (cached after their
# first read): what the machine allows at this concurrency, for comparison.
phase get-warm
for run in $(seq "$GET_RUNS"); do get_run warm-get "$run" 1000 || exit 1; done
result "$(median_of warm-get)"

# ---- 5. deep page ----
phase deep
DP=$(node "$BENCH_DIR/js/drain.mjs" --url "$URL" --table deep --mode deep --top 1000 --repeat 20)
result "{\"step\":\"deep-page\",$(echo "$DP" | sed 's/^{//')"
phase done
sleep 0.5
stop_server >/dev/null
result "{\"step\":\"rss\",$(/usr/bin/python3 "$BENCH_DIR/scale/sample.py" --summary "$OUT/samples.jsonl" | sed 's/^{//')"
