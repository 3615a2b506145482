#!/usr/bin/env bash
# bench/ab.sh: a quick wall-clock A/B of tablestone binaries on loopback.
#
#   bench/ab.sh [--rounds N] [--duration S] [--warmup S] [--no-settle] [--threads] [--port P]
#               BINARY_A BINARY_B -- SCENARIO...
#
# For each round, for each binary in turn: start it pinned to CPU 0 with a
# fresh data directory, load 10,000 entities into partition `pt` of table
# `bench` (the JS loader, 16 connections), then run `wrk -t1 -c64` (pinned to
# CPU 1) for each scenario in the order given, printing req/s: get, insert,
# upsert, merge, batch (100 inserts per $batch, a fresh partition each run),
# page (first page of 1000 entities of partition pt), scan (a filter on a
# non-key property over the 10,000 entities, 8 connections) and getnew (point
# GET with "Connection: close": a new connection, over https:// a new TLS
# handshake, per request; 8 connections). tlsnew and tlsresume (binaries with
# --cert only, "-" otherwise): `openssl s_time` connecting over and over, one
# connection at a time, each with one point GET, with a full handshake
# each time (-new) or resuming the first connection's session (-reuse);
# connections/s. delete is not supported: it needs pre-loaded keys. Binaries alternate so that drift on a
# shared machine hits both. Every process is bounded by `timeout` and stopped
# on exit. A BINARY may carry extra server flags after commas, `{DATA}`
# standing for a fresh directory of that run, e.g.
# `build/server/app/tablestone,--trace,{DATA}/t.jsonl`: the same binary with
# and without a flag is then an A/B of the flag. `{CERT}` and `{KEY}` stand for
# a self-signed PEM pair made once per run; a BINARY with --cert is driven over
# https:// (wrk and the loader), e.g. `B,--cert,{CERT},--key,{KEY}` against `B`
# is HTTPS next to HTTP. Used for the round-4 figures in docs/benchmarks.md;
# the full comparison is bench/run.sh.
#
# The floor: a BINARY named *floor_server* (`ninja -C build-test bench_floor_server`)
# is started with `--port P` and its flags, loads nothing and runs the get
# scenario only ("-" for the others), so `bench/ab.sh TABLESTONE FLOOR -- get`
# is "GET as a fraction of the floor" (issue 37). `FLOOR,--cert,{CERT},--key,{KEY}`
# is the TLS floor, driven over https:// as tablestone is.
#
# What is measured (docs/benchmarks.md, "bench/ab.sh: measuring the server"):
# before each scenario the server is let settle (its CPU use below 2% of a core
# for 0.3 s: RocksDB's flushes and compactions, the scan cache's builds done;
# --no-settle skips it), the scenario runs unmeasured for --warmup seconds
# (default 1; 0 for none: the first pages of a fresh server, its cache builds
# and their placement happen there), the server settles again, and then the
# measured window runs. Besides req/s each round prints the server's CPU time
# per request over the measured window (/proc/PID/task/*/schedstat: every
# thread of the server but RocksDB's flush and compaction threads, whose work
# depends on when a flush falls in the window) and, for CPU 0, how much of the
# window the server used ("busy", every thread: below 100% the server was not
# the bottleneck, or lost its core), how much other work ran there ("other":
# other processes, the host's steal) and RocksDB's background CPU per
# request. At the end a summary gives, per scenario and binary, the median of
# the rounds with their min-max and spread, how many rounds other work
# disturbed (5% or more of CPU 0), and the ratio to the first binary of both
# figures. Read a ratio from CPU per request: it does not count the time the
# server waited for its core, which req/s does. --threads
# also prints, per scenario, each server thread that ran 1% of the window:
# its scheduling policy and nice, CPU and run-queue wait per request, and
# voluntary/involuntary context switches per request (how a request's work is
# spread over threads and how often it changes hands).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROUNDS=2
DURATION=3
WARMUP=1
SETTLE=1
THREADS=0
PORT=20705
BINS=()
usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --warmup) WARMUP="$2"; shift ;;
    --no-settle) SETTLE=0 ;;
    --threads) THREADS=1 ;;
    --port) PORT="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) BINS+=("$1") ;;
  esac
  shift
done
SCENARIOS=("$@")
if [[ ${#BINS[@]} -lt 1 || ${#SCENARIOS[@]} -lt 1 ]]; then
  usage
  exit 2
fi
for v in "$ROUNDS" "$DURATION" "$WARMUP" "$PORT"; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "--rounds, --duration, --warmup and --port take whole numbers: $v" >&2; exit 2; }
done
[[ $ROUNDS -ge 1 && $DURATION -ge 1 ]] || { echo "--rounds and --duration must be at least 1" >&2; exit 2; }
for s in "${SCENARIOS[@]}"; do
  case "$s" in get|insert|upsert|merge|batch|page|scan|getnew|tlsnew|tlsresume) ;;
    *) echo "unknown scenario: $s" >&2; exit 2 ;; esac
done
command -v wrk >/dev/null || { echo "wrk is missing (scripts/install-deps.sh)" >&2; exit 2; }
is_floor() { [[ $(basename "$1") == *floor_server* ]]; }
needs_loader=0
for bin in "${BINS[@]}"; do is_floor "${bin%%,*}" || needs_loader=1; done
if [[ $needs_loader == 1 && ! -d "$HERE/js/node_modules" ]]; then
  echo "bench/js/node_modules is missing: run bench/run.sh --smoke once" >&2; exit 2
fi

SAS="$(/usr/bin/python3 "$HERE/make_sas.py")"
DATA="$(mktemp -d /tmp/tablestone-ab.XXXXXX)"
PID="" SERVER=""
cleanup() {
  [[ -n "$PID" ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -rf "$DATA"
}
trap cleanup EXIT
CERT="$DATA/tls/cert.pem" KEY="$DATA/tls/key.pem"
if [[ "${BINS[*]}" == *"{CERT}"* ]]; then
  mkdir -p "$DATA/tls"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$KEY" -out "$CERT" -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 || { echo "openssl failed" >&2; exit 1; }
fi
TICK_NS=$((1000000000 / $(getconf CLK_TCK)))

# s_time_rate URL tlsnew|tlsresume: connections/s of `openssl s_time` for DURATION seconds (wall
# clock, pinned to CPU 1), each connection one point GET; "-" for http:// or when it fails.
s_time_rate() {
  [[ $1 == https:* ]] || { echo -; return; }
  local mode=-new path="/devstoreaccount1/bench(PartitionKey='pt',RowKey='r0000001')?$SAS" t0 out n
  [[ $2 == tlsresume ]] && mode=-reuse
  t0=$(date +%s%N)
  out="$(timeout $((DURATION + 30)) taskset -c 1 openssl s_time -connect "${1#https://}" -www "$path" $mode \
    -time "$DURATION" 2>/dev/null | grep 'real seconds' | tail -1)"
  n="${out%% connections*}"
  [[ $n =~ ^[0-9]+$ ]] || { echo ERR; return; }
  echo $(( n * 1000000000 / ($(date +%s%N) - t0) ))
}

# CPU time (ns) of the server's threads so far: "ALL ROCKSDB", ROCKSDB being RocksDB's own flush and
# compaction threads (named rocksdb:*), whose work depends on when a flush falls in the window.
server_cpu_ns() {
  local t comm run all=0 bg=0
  for t in /proc/"$SERVER"/task/*; do
    { read -r comm <"$t/comm" && read -r run _ <"$t/schedstat"; } 2>/dev/null || continue
    all=$((all + run))
    [[ $comm == rocksdb:* ]] && bg=$((bg + run))
  done
  echo "$all $bg"
}
# Ticks CPU 0 spent busy (everything but idle and iowait) so far.
core0_busy_ticks() { awk '$1 == "cpu0" {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }

# Per thread of the server: "tid comm policy nice cpu-ns wait-ns voluntary involuntary" switches.
thread_stats() {
  local t comm run wait pol nice vol inv
  for t in /proc/"$SERVER"/task/*; do
    { read -r comm <"$t/comm" && read -r run wait _ <"$t/schedstat" &&
      read -r pol nice < <(sed 's/.*) //' "$t/stat" | awk '{print $39, $17}') &&
      vol=$(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status") &&
      inv=$(awk '/^nonvoluntary_ctxt_switches/ {print $2}' "$t/status"); } 2>/dev/null || continue
    echo "${t##*/} ${comm// /_} $pol $nice $run $wait $vol $inv"
  done | sort
}

# settle: returns once the server used less than 2% of a core in each of 3 windows of 100 ms in a
# row; 1 if it did not within 20 s.
settle() {
  [[ $SETTLE == 1 ]] || return 0
  local quiet=0 prev now t0=$SECONDS
  read -r prev _ < <(server_cpu_ns)
  while (( quiet < 3 )); do
    (( SECONDS - t0 >= 20 )) && return 1
    sleep 0.1
    read -r now _ < <(server_cpu_ns)
    if (( now - prev < 2000000 )); then quiet=$((quiet + 1)); else quiet=0; fi
    prev=$now
  done
}

# run_wrk SCENARIO SECONDS OUTFILE: one wrk run of a scenario against URL.
run_wrk() {
  local s=$1 table=bench pk=pt conns=64
  [[ $s == insert || $s == batch ]] && table=ins pk="ab-$round-$RANDOM$RANDOM"
  [[ $s == scan || $s == page || $s == getnew ]] && conns=8
  (cd "$HERE/wrk" && BENCH_BASE="$URL" BENCH_THREADS=1 BENCH_TABLE=$table BENCH_PK=$pk BENCH_N=10000 \
    BENCH_SAS="$SAS" BENCH_WRK_DIR=. timeout $(($2 + 30)) taskset -c 1 \
    wrk -t1 -c$conns -d"$2s" --timeout 30s -s "$s.lua" "$URL" >"$3" 2>&1)
}

# measure SCENARIO: sets OPS (req/s, ERR or -), CPU (the server's µs per request but RocksDB's
# background threads), CORE (CPU 0: the server's share of the window, other work's, RocksDB's µs per
# request).
measure() {
  local s=$1 out="$DATA/wrk.out" cpu0 cpu1 bg0 bg1 core0 core1 t0 t1 requests duration
  OPS=- CPU=- CORE=- OTHER=-
  if [[ $s == tls* ]]; then OPS="$(s_time_rate "$URL" "$s")"; return; fi
  if [[ $FLOOR == 1 && $s != get ]]; then return; fi
  settle || echo "round $round $bin: the server was still busy after 20 s before $s" >&2
  if [[ $WARMUP -gt 0 ]]; then
    run_wrk "$s" "$WARMUP" "$out"
    settle || echo "round $round $bin: the server was still busy 20 s after the warm-up of $s" >&2
  fi
  [[ $THREADS == 1 ]] && thread_stats >"$DATA/threads.0"
  read -r cpu0 bg0 < <(server_cpu_ns); core0=$(core0_busy_ticks) t0=$(date +%s%N)
  run_wrk "$s" "$DURATION" "$out"
  read -r cpu1 bg1 < <(server_cpu_ns); core1=$(core0_busy_ticks) t1=$(date +%s%N)
  [[ $THREADS == 1 ]] && thread_stats >"$DATA/threads.1"
  OPS="$(awk '/Requests\/sec/ {ops = int($2)} /Non-2xx/ {err = 1} END {print (err ? "ERR" : ops)}' "$out")"
  requests=$(sed -n 's/^RESULT .*"requests":\([0-9]*\).*/\1/p' "$out")
  duration=$(sed -n 's/^RESULT .*"duration_us":\([0-9]*\).*/\1/p' "$out")
  if [[ ${requests:-0} -gt 0 && ${duration:-0} -gt 0 ]]; then
    CPU=$(awk -v c=$((cpu1 - cpu0 - (bg1 - bg0))) -v n="$requests" 'BEGIN {printf "%.1f", c / n / 1000}')
    CORE=$(awk -v c=$((cpu1 - cpu0)) -v g=$((bg1 - bg0)) -v n="$requests" -v d="$duration" \
      -v b=$(((core1 - core0) * TICK_NS)) -v w=$((t1 - t0)) \
      'BEGIN {o = (b - c) / w; if (o < 0) o = 0
              printf "busy %d%% other %d%% rocksdb %.1fus", 100 * c / (d * 1000) + 0.5, 100 * o + 0.5, g / n / 1000}')
    OTHER=$(awk -v c=$((cpu1 - cpu0)) -v b=$(((core1 - core0) * TICK_NS)) -v w=$((t1 - t0)) \
      'BEGIN {o = (b - c) / w; printf "%d", (o > 0 ? 100 * o + 0.5 : 0)}')
    if [[ $THREADS == 1 ]]; then
      # Threads of both snapshots that ran 1% of the window; policy 0 SCHED_OTHER, 3 SCHED_BATCH.
      join "$DATA/threads.0" "$DATA/threads.1" | awk -v n="$requests" -v w=$((t1 - t0)) -v head="round $round $bin $s" '
        $12 - $5 >= w / 100 {
          printf "%s: thread %s %s policy %s nice %s: cpu %.1fus wait %.1fus switches %.2f/%.2f per request\n",
            head, $1, $2, $10, $11, ($12 - $5) / n / 1000, ($13 - $6) / n / 1000, ($14 - $7) / n, ($15 - $8) / n }'
    fi
  fi
}

# A server's bound: its load, then per scenario two settles (20 s at most each), the warm-up and the window.
LIFETIME=$((300 + ${#SCENARIOS[@]} * (DURATION + WARMUP + 60)))
RESULTS="$DATA/results"  # "binary-index scenario-index req/s cpu-us other-%" per round
: >"$RESULTS"
for round in $(seq "$ROUNDS"); do
  for i in "${!BINS[@]}"; do
    bin="${BINS[$i]}"
    rm -rf "$DATA/d" "$DATA/extra"
    mkdir -p "$DATA/extra"
    IFS=, read -r -a spec <<<"$bin"
    flags=()
    for f in "${spec[@]:1}"; do f="${f//\{DATA\}/$DATA/extra}"; f="${f//\{CERT\}/$CERT}"; flags+=("${f//\{KEY\}/$KEY}"); done
    URL="http://127.0.0.1:$PORT"
    [[ " ${flags[*]} " == *" --cert "* ]] && URL="https://127.0.0.1:$PORT"
    # Another server on the port (another bench/ab.sh run) would answer for this one.
    if curl -sk -o /dev/null "$URL/"; then echo "port $PORT is in use: pass --port" >&2; exit 2; fi
    FLOOR=0
    if is_floor "${spec[0]}"; then
      FLOOR=1
      timeout "$LIFETIME" taskset -c 0 "${spec[0]}" --port "$PORT" "${flags[@]}" >/dev/null 2>&1 &
    else
      timeout "$LIFETIME" taskset -c 0 "${spec[0]}" --tablePort "$PORT" -s -l "$DATA/d" "${flags[@]}" >/dev/null 2>&1 &
    fi
    PID=$!
    for _ in $(seq 100); do curl -sk -o /dev/null "$URL/" && break; sleep 0.05; done
    SERVER="$(pgrep -P "$PID" | head -1)"  # `timeout`'s child: the server itself
    [[ -n "$SERVER" ]] || { echo "$bin did not start" >&2; exit 1; }
    if [[ $FLOOR == 0 ]]; then
      (cd "$HERE/js" && { [[ $URL != https:* ]] || export NODE_EXTRA_CA_CERTS="$CERT"; } && timeout 120 taskset -c 1 node loader.mjs --url "$URL" --table bench --count 10000 \
          --concurrency 16 --pk pt --quiet >/dev/null &&
        timeout 60 node loader.mjs --url "$URL" --table ins --count 0 --quiet >/dev/null) ||
        { echo "loading failed for $bin" >&2; exit 1; }
    fi
    line="round $round $bin:" cpu_line="round $round $bin cpu_us/req:" core_line="round $round $bin cpu0:"
    for j in "${!SCENARIOS[@]}"; do
      s="${SCENARIOS[$j]}"
      measure "$s"
      line+=" $s $OPS" cpu_line+=" $s $CPU" core_line+=" $s: $CORE;"
      echo "$i $j $OPS $CPU $OTHER" >>"$RESULTS"
    done
    echo "$line"
    echo "$cpu_line"
    echo "$core_line"
    kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; PID="" SERVER=""
  done
done

# The summary: medians over the rounds, min-max and spread ((max - min) / median), and the ratio
# to the first binary: req/s B ÷ A, CPU per request A ÷ B (both > 1 when B is faster).
echo
echo "medians of $ROUNDS rounds (min-max, spread); disturbed: rounds in which other work took 5% or more"
echo "of CPU 0; ratios to [0]: req/s [i]/[0], CPU per request [0]/[i]"
for i in "${!BINS[@]}"; do echo "  [$i] ${BINS[$i]}"; done
awk -v nbins=${#BINS[@]} -v scen="${SCENARIOS[*]}" '
  function median(list,   a, n, t, j, k) {
    n = split(list, a, " ")
    for (j = 2; j <= n; j++) { t = a[j]; for (k = j - 1; k >= 1 && a[k] > t; k--) a[k + 1] = a[k]; a[k + 1] = t }
    lo = a[1]; hi = a[n]
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function describe(list, fmt,   m) {
    if (list == "") { med = ""; return "-" }
    m = median(list); med = m
    return sprintf(fmt " (" fmt "-" fmt ", %d%%)", m, lo, hi, m > 0 ? 100 * (hi - lo) / m + 0.5 : 0)
  }
  $3 ~ /^[0-9]+$/ { ops[$1, $2] = ops[$1, $2] " " $3 }
  $4 ~ /^[0-9.]+$/ { cpu[$1, $2] = cpu[$1, $2] " " $4 }
  $5 ~ /^[0-9]+$/ { rounds[$1, $2]++; if ($5 >= 5) busy[$1, $2]++ }
  END {
    printf "%-9s %-4s %-28s %-30s %-9s %s\n", "scenario", "bin", "req/s", "server CPU us/req", "disturbed", "ratio req/s, CPU"
    ns = split(scen, sc, " ")
    for (j = 1; j <= ns; j++) {
      s = sc[j]
      for (i = 0; i < nbins; i++) {
        o = describe(ops[i, j - 1], "%d"); mo[i] = med
        c = describe(cpu[i, j - 1], "%.1f"); mc[i] = med
        r = ""
        if (i > 0) {
          r = (mo[0] != "" && mo[i] != "" && mo[0] > 0) ? sprintf("%.2f", mo[i] / mo[0]) : "-"
          r = r ", " ((mc[0] != "" && mc[i] != "" && mc[i] > 0) ? sprintf("%.2f", mc[0] / mc[i]) : "-")
        }
        q = rounds[i, j - 1] ? sprintf("%d/%d", busy[i, j - 1], rounds[i, j - 1]) : "-"
        printf "%-9s [%d]  %-28s %-30s %-9s %s\n", s, i, o, c, q, r
      }
    }
  }' "$RESULTS"
