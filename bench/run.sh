#!/usr/bin/env bash
# bench/run.sh: the side-by-side benchmark of tablestone, Azurite 3.35.0 and
# the HTTP floor (bench_floor_server), one after another in the same run, on
# loopback only; "https" is the same tablestone binary serving HTTPS (a
# self-signed RSA-2048 pair made for the run), next to its HTTP figures. Prints one Markdown report (ops/s, p50, p99, ratios, startup,
# RSS, disk, big-table figures) with the command next to every figure, and
# keeps the raw output under the results directory. Method: docs/benchmarks.md.
#
#   bench/run.sh [--smoke] [--duration S] [--reps N] [--servers tablestone,https,azurite,floor]
#                [--conns 1,64] [--batch-conns 1,32,64] [--big N] [--azurite-big N]
#                [--sdk-duration S] [--no-sdk] [--no-big] [--build DIR] [--tablestone BIN]
#                [--tablestone-args "..."] [--server-cpus 0] [--client-cpus 1]
#                [--wrk-threads 1] [--floor-threads N] [--out DIR] [--keep-data]
#
# --smoke: every scenario for ~1 s, once, small data sets, no thresholds
# (for CI); exits non-zero when a server does not start or a scenario fails.
# Every server, wrk and Node run is bounded by `timeout`; the EXIT trap stops
# every process this script started (by pid) and removes its data dirs.
set -uo pipefail

ORIG_ARGS="$*"
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
CACHE="$BENCH_DIR/.cache"
AZURITE_VERSION=3.35.0

# ---- options -----------------------------------------------------------------
SMOKE=0
DURATION=5
REPS=3
SERVERS="tablestone,https,azurite,floor"
CONNS="1,64"
BATCH_CONNS="1,32,64"
BIG=2000000          # tablestone big table; startup/RSS/disk are taken at BIG/2
AZURITE_BIG=100000   # Azurite loads ~5k entities/s here: 1M would take minutes
SDK_DURATION=3
DO_SDK=1
DO_BIG=1
BUILD_DIR="${TABLESTONE_BUILD:-}"
TS_BIN=""
TS_ARGS=""
SERVER_CPUS=0
CLIENT_CPUS=1
WRK_THREADS=1
FLOOR_THREADS=""
OUT=""
KEEP_DATA=0
PT_N=10000           # entities of partition bench/pt (GET, PUT, MERGE, page, drain)
SCAN_N=50000         # entities of table scan (filtered scan)
DRAIN_REPEAT=11     # drains measured (median), after DRAIN_WARMUP unmeasured ones
DRAIN_WARMUP=2
DRAIN_WARMUP_MS=1000  # ...and unmeasured drains continue until this much time has passed (Node's JIT)
DEEP_REPEAT=20
LOAD_CONC=16         # connections of the bulk loader
FLOOR_BODY=""        # body bytes of the floor's answer: set from tablestone's entity GET
IDLE_MS=2000         # wait after the first 200 before reading the idle RSS
SETTLE_S=2           # wait after a bulk load before reading the RSS

usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --smoke) SMOKE=1 ;;
    --duration) DURATION="$2"; shift ;;
    --reps) REPS="$2"; shift ;;
    --servers) SERVERS="$2"; shift ;;
    --conns) CONNS="$2"; shift ;;
    --batch-conns) BATCH_CONNS="$2"; shift ;;
    --big) BIG="$2"; shift ;;
    --azurite-big) AZURITE_BIG="$2"; shift ;;
    --sdk-duration) SDK_DURATION="$2"; shift ;;
    --no-sdk) DO_SDK=0 ;;
    --no-big) DO_BIG=0 ;;
    --build) BUILD_DIR="$2"; shift ;;
    --tablestone) TS_BIN="$2"; shift ;;
    --tablestone-args) TS_ARGS="$2"; shift ;;
    --server-cpus) SERVER_CPUS="$2"; shift ;;
    --client-cpus) CLIENT_CPUS="$2"; shift ;;
    --wrk-threads) WRK_THREADS="$2"; shift ;;
    --floor-threads) FLOOR_THREADS="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --keep-data) KEEP_DATA=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
if [[ $SMOKE == 1 ]]; then
  DURATION=1; REPS=1; SDK_DURATION=0.2; PT_N=1500; SCAN_N=3000; DRAIN_REPEAT=1; DRAIN_WARMUP=0; DRAIN_WARMUP_MS=0; DEEP_REPEAT=3
  BIG=20000; AZURITE_BIG=5000; CONNS=64; BATCH_CONNS=32; IDLE_MS=500; SETTLE_S=0.5
fi

STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="${OUT:-$CACHE/results/$STAMP}"
RAW="$OUT/raw"
DATA="$CACHE/data-$STAMP-$$"
RESULTS="$OUT/results.jsonl"
mkdir -p "$RAW" "$DATA"
: > "$RESULTS"
LOG="$OUT/run.log"
FAILURES=0

PY="$(command -v /usr/bin/python3 || command -v python3)"
log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$LOG" >&2; }
fail() { FAILURES=$((FAILURES + 1)); log "FAIL: $*"; }
# Appends one JSON object (built by python from key=value args) to results.
record() { "$PY" "$BENCH_DIR/report.py" --record "$RESULTS" "$@"; }

# ---- tools -------------------------------------------------------------------
for tool in wrk node taskset curl timeout; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is missing (bench/install-bench-deps.sh)" >&2; exit 2; }
done
AZURITE_BIN="$CACHE/azurite/node_modules/.bin/azurite-table"
if [[ ",$SERVERS," == *,azurite,* && ! -x "$AZURITE_BIN" ]]; then
  log "installing Azurite $AZURITE_VERSION into $CACHE/azurite (scratch, not a product dependency)"
  timeout 600 npm install --prefix "$CACHE/azurite" --no-audit --no-fund "azurite@$AZURITE_VERSION" >>"$LOG" 2>&1 \
    || { echo "run.sh: Azurite install failed (see $LOG)" >&2; exit 2; }
fi
if [[ ! -d "$BENCH_DIR/js/node_modules/@azure/data-tables" ]]; then
  log "installing bench/js dependencies (npm ci)"
  (cd "$BENCH_DIR/js" && timeout 600 npm ci --no-audit --no-fund >>"$LOG" 2>&1) \
    || { echo "run.sh: npm ci in bench/js failed (see $LOG)" >&2; exit 2; }
fi
if [[ -z "$BUILD_DIR" ]]; then
  for d in "$ROOT/build-bench" "$ROOT/build" "$ROOT"/build-*; do
    [[ -x "$d/server/app/tablestone" || -x "$d/bench/bench_floor_server" ]] && { BUILD_DIR="$d"; break; }
  done
fi
[[ -n "$BUILD_DIR" && -d "$BUILD_DIR" ]] && BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"
TS_BIN="${TS_BIN:-$BUILD_DIR/server/app/tablestone}"
FLOOR_BIN="$BUILD_DIR/bench/bench_floor_server"
NCPU_SERVER=$(taskset -c "$SERVER_CPUS" nproc)
FLOOR_THREADS="${FLOOR_THREADS:-$NCPU_SERVER}"
SAS="$("$PY" "$BENCH_DIR/make_sas.py")"
export BENCH_SAS="$SAS" BENCH_WRK_DIR="$BENCH_DIR/wrk"

declare -A PORT=([tablestone]=20002 [azurite]=20012 [floor]=20022 [https]=20032)
declare -A LABEL=([tablestone]=tablestone [azurite]="azurite $AZURITE_VERSION" [floor]=floor [https]="tablestone (HTTPS)")
declare -A SCHEME=([tablestone]=http [azurite]=http [floor]=http [https]=https)
TLS_CERT="$DATA/tls/cert.pem" TLS_KEY="$DATA/tls/key.pem"  # made by bench_https

# ---- process management --------------------------------------------------------
PIDS=()
SERVER_PID=""
SERVER_NAME=""
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -INT "$pid" 2>/dev/null; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  done
  [[ $KEEP_DATA == 1 ]] || rm -rf "$DATA"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

probe_path() {  # the first-200 probe: an authenticated Query Tables (floor: anything)
  case "$1" in floor) echo "/" ;; *) echo "/devstoreaccount1/Tables?$SAS" ;; esac
}

server_cmd() {  # server_cmd NAME DATADIR|"" -> prints the command words, one per line
  local name="$1" dir="$2" port="${PORT[$1]}"
  case "$name" in
    tablestone|https)
      printf '%s\n' taskset -c "$SERVER_CPUS" "$TS_BIN" --tableHost 127.0.0.1 --tablePort "$port" -s
      [[ $name == https ]] && printf '%s\n' --cert "$TLS_CERT" --key "$TLS_KEY"
      if [[ -n "$dir" ]]; then printf '%s\n' -l "$dir"; else printf '%s\n' --inMemoryPersistence; fi
      # shellcheck disable=SC2086
      [[ -n "$TS_ARGS" ]] && printf '%s\n' $TS_ARGS ;;
    azurite)
      printf '%s\n' taskset -c "$SERVER_CPUS" "$AZURITE_BIN" --tableHost 127.0.0.1 --tablePort "$port" --disableTelemetry
      if [[ -n "$dir" ]]; then printf '%s\n' --location "$dir"; else printf '%s\n' --inMemoryPersistence; fi ;;
    floor)
      printf '%s\n' taskset -c "$SERVER_CPUS" "$FLOOR_BIN" --port "$port" --threads "$FLOOR_THREADS" --body-bytes "$FLOOR_BODY" ;;
  esac
}

start_server() {  # start_server NAME DATADIR|"" ; sets SERVER_PID, returns 1 if no 200 within 60 s
  local name="$1" dir="$2" port="${PORT[$1]}"
  port_free "$port" || { fail "$name: port $port is busy"; return 1; }
  local -a cmd; mapfile -t cmd < <(server_cmd "$name" "$dir")
  log "start: ${cmd[*]}"
  "${cmd[@]}" >>"$RAW/$name-server.log" 2>&1 &
  SERVER_PID=$!
  SERVER_NAME="$name"
  PIDS+=("$SERVER_PID")
  local path; path="$(probe_path "$name")"
  for _ in $(seq 600); do
    alive "$SERVER_PID" || { fail "$name exited at startup (see $RAW/$name-server.log)"; SERVER_PID=""; return 1; }
    [[ "$(curl -sk -o /dev/null -w '%{http_code}' -H 'Accept: application/json;odata=nometadata' "${SCHEME[$name]}://127.0.0.1:$port$path")" == 200 ]] && return 0
    sleep 0.1
  done
  fail "$name: no 200 on $path within 60 s"; stop_server; return 1
}

# Azurite closes (and saves its Loki database) on SIGINT only; SIGTERM kills it.
stop_signal() { [[ $1 == azurite ]] && echo INT || echo TERM; }
stop_server() {  # graceful signal, wait up to 30 s, then SIGKILL
  [[ -n "$SERVER_PID" ]] || return 0
  kill -"$(stop_signal "$SERVER_NAME")" "$SERVER_PID" 2>/dev/null
  for _ in $(seq 300); do alive "$SERVER_PID" || break; sleep 0.1; done
  alive "$SERVER_PID" && { kill -KILL "$SERVER_PID" 2>/dev/null; log "warning: had to SIGKILL pid $SERVER_PID"; }
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=""
}

# True while pid runs (a zombie child of this shell does not count).
alive() { local st; st="$(ps -o stat= -p "$1" 2>/dev/null)" || return 1; [[ -n "$st" && $st != Z* ]]; }

rss_mb() { awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status" 2>/dev/null; }

node_tool() {  # node_tool SCRIPT ARGS... (bounded, pinned to the client CPUs)
  timeout 1200 taskset -c "$CLIENT_CPUS" node "$BENCH_DIR/js/$@"
}

# ---- wrk -------------------------------------------------------------------------
# run_wrk SERVER SCENARIO CONNS REP KEY=VAL... ; sets WRK_OPS (ops/s); records the result.
run_wrk() {
  local server="$1" scen="$2" conns="$3" rep="$4"; shift 4
  local threads=$(( WRK_THREADS < conns ? WRK_THREADS : conns ))
  local url="${SCHEME[$server]}://127.0.0.1:${PORT[$server]}"
  local envs=("BENCH_BASE=$url" "BENCH_THREADS=$threads" "$@")
  local cmd="taskset -c $CLIENT_CPUS wrk -t$threads -c$conns -d${DURATION}s --timeout 30s -s bench/wrk/$scen.lua $url"
  local raw="$RAW/$server-$scen-c$conns-r$rep.txt"
  env "${envs[@]}" timeout $(( ${DURATION%.*} + 120 )) \
    taskset -c "$CLIENT_CPUS" wrk -t"$threads" -c"$conns" -d"${DURATION}s" --timeout 30s \
    -s "$BENCH_DIR/wrk/$scen.lua" "$url" >"$raw" 2>&1
  local line; line="$(grep '^RESULT ' "$raw" | tail -1 | cut -d' ' -f2-)"
  WRK_OPS=0
  if [[ -z "$line" ]]; then fail "$server $scen c$conns: no wrk result (see $raw)"; return; fi
  record kind=wrk server="$server" scenario="$scen" conns="$conns" rep="$rep" \
    cmd="${envs[*]} BENCH_SAS=\$(bench/make_sas.py) BENCH_WRK_DIR=bench/wrk $cmd" json="$line"
  WRK_OPS="$("$PY" -c 'import json,sys; r=json.loads(sys.argv[1]); print(int(r["requests"]*1e6/max(1,r["duration_us"])))' "$line")"
  "$PY" -c 'import json,sys; r=json.loads(sys.argv[1]); sys.exit(1 if r["non2xx"] or r["socket_errors"] else 0)' "$line" \
    || fail "$server $scen c$conns rep$rep: errors in $raw: $line"
  # A slow server may complete nothing within a 1 s smoke run: not a failure.
  [[ $WRK_OPS == 0 ]] && log "warning: $server $scen c$conns: no request completed within ${DURATION}s"
}

load() {  # load SERVER TABLE COUNT LOADER-ARGS... ; records the load rate
  local server="$1" table="$2" count="$3"; shift 3
  local url="${SCHEME[$server]}://127.0.0.1:${PORT[$server]}"
  local out
  out="$(node_tool loader.mjs --url "$url" --table "$table" --count "$count" --concurrency "$LOAD_CONC" --quiet "$@" 2>>"$LOG")" \
    || { fail "$server: loading $count into $table failed"; return 1; }
  record kind=load server="$server" table="$table" \
    cmd="node bench/js/loader.mjs --url $url --table $table --count $count --concurrency $LOAD_CONC $*" json="$out"
}

# ---- one server: load, wrk, drains, SDK ------------------------------------------
drains() {  # drains SERVER URL REPEAT WARMUP WARMUP_MS SUFFIX: the partition drain and the filtered scan, recorded as what=partition/scan+SUFFIX
  local s="$1" url="$2" repeat="$3" warmup="$4" warmup_ms="$5" suffix="$6" out
  local opts="--repeat $repeat --warmup $warmup --warmup-ms $warmup_ms"
  # shellcheck disable=SC2086  # $opts is a list of flags
  out="$(node_tool drain.mjs --url "$url" --table bench --mode drain --filter "PartitionKey eq 'pt'" $opts)" \
    && record kind=drain server="$s" what="partition$suffix" cmd="node bench/js/drain.mjs --url $url --table bench --mode drain --filter \"PartitionKey eq 'pt'\" $opts" json="$out" \
    || fail "$s: partition drain$suffix"
  # shellcheck disable=SC2086
  out="$(node_tool drain.mjs --url "$url" --table scan --mode drain --filter "Num ge $((SCAN_N - 10))" $opts)" \
    && record kind=drain server="$s" what="scan$suffix" scanned="$SCAN_N" cmd="node bench/js/drain.mjs --url $url --table scan --mode drain --filter \"Num ge $((SCAN_N - 10))\" $opts" json="$out" \
    || fail "$s: filtered scan drain$suffix"
}

bench_server() {
  local s="$1" url="http://127.0.0.1:${PORT[$1]}"
  log "=== $s: load scenarios"
  start_server "$s" "$( [[ $s == tablestone ]] && echo "$DATA/$s-load" )" || return 1
  load "$s" bench "$PT_N" --pk pt || { stop_server; return 1; }
  load "$s" scan "$SCAN_N" --partition-size 1000 --pk-prefix s || { stop_server; return 1; }
  for t in ins del bat; do load "$s" "$t" 0 || { stop_server; return 1; }; done
  drains "$s" "$url" 1 0 0 _cold  # the first query of each kind after loading (tablestone: scan cache empty)

  # The entity GET answer (its body size sizes the floor's answer).
  local sizes
  sizes="$(curl -s -o /dev/null -w '%{size_download} %{size_header} %{http_code}' -H 'Accept: application/json;odata=nometadata' \
    "$url/devstoreaccount1/bench(PartitionKey='pt',RowKey='r0000001')?$SAS")"
  record kind=getsize server="$s" body_bytes="${sizes%% *}" header_bytes="$(cut -d' ' -f2 <<<"$sizes")" status="${sizes##* }" \
    cmd="curl -H 'Accept: application/json;odata=nometadata' '$url/devstoreaccount1/bench(PartitionKey=''pt'',RowKey=''r0000001'')?\$SAS'"
  if [[ ${sizes##* } == 200 && ( $s == tablestone || -z "$FLOOR_BODY" ) ]]; then FLOOR_BODY="${sizes%% *}"; fi

  local c rep ops
  for c in ${CONNS//,/ }; do
    for rep in $(seq "$REPS"); do
      run_wrk "$s" get "$c" "$rep" BENCH_TABLE=bench BENCH_PK=pt BENCH_N="$PT_N"
      local get_ops=$WRK_OPS
      run_wrk "$s" insert "$c" "$rep" BENCH_TABLE=ins BENCH_PK="ins-$STAMP-c$c-r$rep"
      # Delete needs pre-loaded keys: 3x what insert, or 2x what point GET,
      # managed in the same time, whichever is more (deletes can run faster
      # than inserts; running out shows up as 404s, and the run as failed).
      local rate=$(( WRK_OPS * 3 > get_ops * 2 ? WRK_OPS * 3 : get_ops * 2 ))
      local need=$(( rate * ${DURATION%.*} + 2000 ))
      (( need > 3000000 )) && need=3000000
      load "$s" del "$need" --pk "del-$STAMP-c$c-r$rep"
      run_wrk "$s" delete "$c" "$rep" BENCH_TABLE=del BENCH_PK="del-$STAMP-c$c-r$rep" BENCH_N="$need"
      run_wrk "$s" upsert "$c" "$rep" BENCH_TABLE=bench BENCH_PK=pt BENCH_N="$PT_N"
      run_wrk "$s" merge "$c" "$rep" BENCH_TABLE=bench BENCH_PK=pt BENCH_N="$PT_N"
      run_wrk "$s" page "$c" "$rep" BENCH_TABLE=bench BENCH_PK=pt
      run_wrk "$s" scan "$c" "$rep" BENCH_TABLE=scan BENCH_N="$SCAN_N"
    done
  done
  for c in ${BATCH_CONNS//,/ }; do
    for rep in $(seq "$REPS"); do
      run_wrk "$s" batch "$c" "$rep" BENCH_TABLE=bat BENCH_PK="bat-$STAMP-c$c-r$rep"
    done
  done
  if [[ $s == tablestone ]]; then  # a new connection per request, beside bench_https's
    for rep in $(seq "$REPS"); do run_wrk "$s" getnew 8 "$rep" BENCH_TABLE=bench BENCH_PK=pt BENCH_N="$PT_N"; done
  fi

  # Does the filtered scan answer in one response (no continuation)?
  local hdrs
  hdrs="$(curl -s -D - -o /dev/null -H 'Accept: application/json;odata=nometadata' \
    "$url/devstoreaccount1/scan()?\$filter=Num%20ge%20$((SCAN_N - 10))&$SAS" | tr -d '\r' | grep -ci '^x-ms-continuation')"
  record kind=scancheck server="$s" continuation_headers="$hdrs"

  log "=== $s: drains"
  drains "$s" "$url" "$DRAIN_REPEAT" "$DRAIN_WARMUP" "$DRAIN_WARMUP_MS" ""

  if [[ $DO_SDK == 1 ]]; then
    log "=== $s: JS SDK"
    local sdkcmd="node bench/js/sdk_bench.mjs --url $url --duration $SDK_DURATION --concurrency 1,32 --n $PT_N --scan-n $SCAN_N"
    if node_tool sdk_bench.mjs --url "$url" --duration "$SDK_DURATION" --concurrency 1,32 --n "$PT_N" --scan-n "$SCAN_N" \
        >"$RAW/$s-sdk.jsonl" 2>>"$LOG"; then
      while read -r line; do record kind=sdk server="$s" cmd="$sdkcmd" json="$line"; done <"$RAW/$s-sdk.jsonl"
      grep -q '"errors":[1-9]' "$RAW/$s-sdk.jsonl" && fail "$s: SDK errors, see $RAW/$s-sdk.jsonl"
    else
      fail "$s: SDK bench failed (see $LOG)"
    fi
  fi
  record kind=rss server="$s" what=after_load_scenarios rss_mb="$(rss_mb "$SERVER_PID")"
  stop_server
}

# ---- startup, RSS, disk, big table -------------------------------------------------
startup() {  # startup SERVER DIR ENTITIES
  local s="$1" dir="$2" n="$3" url="http://127.0.0.1:${PORT[$1]}"
  local -a cmd; mapfile -t cmd < <(server_cmd "$s" "$dir")
  local out
  out="$(timeout 200 taskset -c "$CLIENT_CPUS" node "$BENCH_DIR/js/startup.mjs" --url "$url" --probe "$(probe_path "$s")" --idle-ms "$IDLE_MS" \
    --timeout-ms 120000 --stop-signal "SIG$(stop_signal "$s")" --log "$RAW/$s-server.log" -- "${cmd[@]}")" \
    || { fail "$s: startup with $n entities: $out"; return 1; }
  record kind=startup server="$s" entities="$n" \
    cmd="node bench/js/startup.mjs --url $url --probe '/devstoreaccount1/Tables?\$SAS' --idle-ms $IDLE_MS -- ${cmd[*]}" json="$out"
}

big_server() {
  local s="$1" n="$2" url="http://127.0.0.1:${PORT[$1]}"
  local half=$(( n / 2 ))
  [[ $s == azurite ]] && half=$n   # Azurite: one size only (see docs/benchmarks.md)
  log "=== $s: startup empty"
  mkdir -p "$DATA/$s-empty"
  startup "$s" "$DATA/$s-empty" 0
  local empty_bytes; empty_bytes="$(du -sb "$DATA/$s-empty" | cut -f1)"

  log "=== $s: big table, $half entities"
  local dir="$DATA/$s-big"
  mkdir -p "$dir"
  start_server "$s" "$dir" || return 1
  load "$s" big "$half" --partition-size 10000 --pk-prefix p || { stop_server; return 1; }
  sleep "$SETTLE_S"
  record kind=rss server="$s" what=loaded entities="$half" rss_mb="$(rss_mb "$SERVER_PID")"
  local t0; t0=$(date +%s%N)
  stop_server
  record kind=stop server="$s" entities="$half" cmd="kill -$(stop_signal "$s") <pid>; wait for exit" stop_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  local bytes; bytes="$(du -sb "$dir" | cut -f1)"
  record kind=disk server="$s" entities="$half" bytes="$bytes" empty_bytes="$empty_bytes" cmd="du -sb <data dir> after a clean stop"
  startup "$s" "$dir" "$half"

  start_server "$s" "$dir" || return 1
  if (( n > half )); then
    load "$s" big "$(( n - half ))" --start "$half" --partition-size 10000 --pk-prefix p || { stop_server; return 1; }
  else
    n=$half
  fi
  log "=== $s: deep page and filtered scan over $n entities"
  local out
  out="$(node_tool drain.mjs --url "$url" --table big --mode deep --repeat "$DEEP_REPEAT")" \
    && record kind=deep server="$s" entities="$n" cmd="node bench/js/drain.mjs --url $url --table big --mode deep --repeat $DEEP_REPEAT" json="$out" \
    || fail "$s: deep page test"
  out="$(node_tool drain.mjs --url "$url" --table big --mode drain --filter "Num eq -1" --repeat 3)" \
    && record kind=drain server="$s" what=bigscan scanned="$n" cmd="node bench/js/drain.mjs --url $url --table big --mode drain --filter \"Num eq -1\" --repeat 3" json="$out" \
    || fail "$s: big filtered scan"
  record kind=rss server="$s" what=big_after_queries entities="$n" rss_mb="$(rss_mb "$SERVER_PID")"
  stop_server
}

# The same binary over HTTPS: keep-alive point GET and page (as bench_server), a new connection per
# request (wrk getnew: a TLS handshake each time), and handshakes alone with openssl s_time, one
# connection at a time, each with one point GET: full (-new) and resumed (-reuse).
bench_https() {
  local s=https url="https://127.0.0.1:${PORT[https]}"
  log "=== https: tablestone over TLS"
  mkdir -p "$DATA/tls"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TLS_KEY" -out "$TLS_CERT" -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 >>"$LOG" 2>&1 || { fail "https: openssl req failed"; return 1; }
  start_server "$s" "$DATA/$s-load" || return 1
  NODE_EXTRA_CA_CERTS="$TLS_CERT" load "$s" bench "$PT_N" --pk pt || { stop_server; return 1; }
  local c rep mode out t0 n
  for c in ${CONNS//,/ }; do
    for rep in $(seq "$REPS"); do
      run_wrk "$s" get "$c" "$rep" BENCH_TABLE=bench BENCH_PK=pt BENCH_N="$PT_N"
      run_wrk "$s" page "$c" "$rep" BENCH_TABLE=bench BENCH_PK=pt
    done
  done
  local path="/devstoreaccount1/bench(PartitionKey='pt',RowKey='r0000001')?$SAS"
  for rep in $(seq "$REPS"); do
    run_wrk "$s" getnew 8 "$rep" BENCH_TABLE=bench BENCH_PK=pt BENCH_N="$PT_N"
    for mode in new reuse; do
      t0=$(date +%s%N)
      out="$(timeout $(( ${DURATION%.*} + 60 )) taskset -c "$CLIENT_CPUS" openssl s_time -connect "127.0.0.1:${PORT[$s]}" \
        -www "$path" "-$mode" -time "${DURATION%.*}" 2>>"$LOG" | grep 'real seconds' | tail -1)"
      n="${out%% connections*}"
      [[ $n =~ ^[0-9]+$ ]] || { fail "https: openssl s_time -$mode: $out"; continue; }
      record kind=handshake server="$s" mode="$mode" rep="$rep" connections="$n" \
        per_s="$(( n * 1000000000 / ($(date +%s%N) - t0) ))" \
        cmd="taskset -c $CLIENT_CPUS openssl s_time -connect 127.0.0.1:${PORT[$s]} -www '/devstoreaccount1/bench(PartitionKey=''pt'',RowKey=''r0000001'')?\$SAS' -$mode -time ${DURATION%.*}"
    done
  done
  stop_server
}

bench_floor() {
  # Without a measured entity GET (tablestone and Azurite not run), ~300 bytes.
  FLOOR_BODY="${FLOOR_BODY:-300}"
  log "=== floor (body $FLOOR_BODY bytes, $FLOOR_THREADS threads)"
  [[ -x "$FLOOR_BIN" ]] || { fail "floor: $FLOOR_BIN not built (ninja -C <build> bench_floor_server)"; return 1; }
  start_server floor "" || return 1
  record kind=floorinfo server=floor body_bytes="$FLOOR_BODY" threads="$FLOOR_THREADS"
  local c rep
  for c in ${CONNS//,/ }; do
    for rep in $(seq "$REPS"); do run_wrk floor get "$c" "$rep" BENCH_TABLE=bench BENCH_PK=pt BENCH_N="$PT_N" >/dev/null; done
  done
  # The filtered-scan command against the floor: one request and its fixed answer, i.e. what the
  # Node client and HTTP cost before any server work (a floor under the query timings).
  local url="http://127.0.0.1:${PORT[floor]}" out
  out="$(node_tool drain.mjs --url "$url" --table scan --mode drain --filter "Num ge $((SCAN_N - 10))" --repeat "$DRAIN_REPEAT" --warmup "$DRAIN_WARMUP" --warmup-ms "$DRAIN_WARMUP_MS")" \
    && record kind=drain server=floor what=scan cmd="node bench/js/drain.mjs --url $url --table scan --mode drain --filter \"Num ge $((SCAN_N - 10))\" --repeat $DRAIN_REPEAT --warmup $DRAIN_WARMUP --warmup-ms $DRAIN_WARMUP_MS" json="$out" \
    || fail "floor: drain command"
  stop_server
}

# ---- main ------------------------------------------------------------------------------
# One function, read whole before it runs, so editing this file during a run
# cannot derail the run.
main() {
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "wrk: $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2); node: $(node --version); azurite: $AZURITE_VERSION"
  echo "tablestone: $TS_BIN ($( [[ -x $TS_BIN ]] && echo present || echo missing))"
  echo "pinning: servers on CPU $SERVER_CPUS, wrk (-t$WRK_THREADS) and Node clients on CPU $CLIENT_CPUS"
  echo "wrk runs: ${DURATION}s x $REPS reps (median), conns $CONNS, batch conns $BATCH_CONNS; SDK ${SDK_DURATION}s per op"
  echo "command: bench/run.sh ${ORIG_ARGS:-}"
} >"$OUT/env.txt"
record kind=meta smoke="$SMOKE" duration="$DURATION" reps="$REPS" big="$BIG" azurite_big="$AZURITE_BIG" \
  pt_n="$PT_N" scan_n="$SCAN_N" server_cpus="$SERVER_CPUS" client_cpus="$CLIENT_CPUS" wrk_threads="$WRK_THREADS" \
  floor_threads="$FLOOR_THREADS" server_ncpu="$NCPU_SERVER" env="$(cat "$OUT/env.txt")"
log "results in $OUT"

T_START=$(date +%s)
for s in tablestone azurite; do
  [[ ",$SERVERS," == *,$s,* ]] || continue
  if [[ $s == tablestone && ! -x "$TS_BIN" ]]; then fail "tablestone: $TS_BIN not built"; continue; fi
  bench_server "$s"
  if [[ $DO_BIG == 1 ]]; then big_server "$s" "$( [[ $s == tablestone ]] && echo "$BIG" || echo "$AZURITE_BIG" )"; fi
done
if [[ ",$SERVERS," == *,https,* ]]; then
  if [[ -x "$TS_BIN" ]]; then bench_https; else fail "https: $TS_BIN not built"; fi
fi
[[ ",$SERVERS," == *,floor,* ]] && bench_floor
record kind=meta_end seconds=$(( $(date +%s) - T_START )) failures="$FAILURES" load_end="$(cut -d" " -f1-3 /proc/loadavg)"

"$PY" "$BENCH_DIR/report.py" "$RESULTS" | tee "$OUT/report.md"
log "report: $OUT/report.md ($(( $(date +%s) - T_START )) s, $FAILURES failures)"
[[ $FAILURES == 0 ]]
}
main; exit $?
