#!/usr/bin/env bash
# bench/callgrind/write_path.sh: what one point request costs the server, per binary, side by side.
#
#   bench/callgrind/write_path.sh [--n N] [--conns C] [--seconds S] [--kinds "K..."] [--out DIR]
#                                 [--port P] [--no-callgrind] [--no-native] [--cache-sim] BIN [BIN...]
#
# For each BIN (a tablestone binary; `BIN,--flag,value` adds server flags, as bench/ab.sh):
#  1. A fresh data directory in DIR/<i>: table `prof` with 1,000 entities in partition pt and an
#     empty table `ins`, loaded natively.
#  2. Instructions (callgrind, every thread of the server): the server restarts under
#     valgrind --tool=callgrind with one I/O thread, is warmed (200 GETs and 200 inserts), then for
#     each kind the counters are zeroed, N requests run over C connections at once
#     (bench/callgrind/fixed_load.py, a separate process: none of the client's work is counted;
#     batch: N/20 $batch requests of 100 inserts) and the counters are dumped to DIR/<i>/<kind>.out.
#     Printed: Ir per request of the whole server, and without the background threads whose work
#     depends on timing (RocksDB's flushes and compactions, the scan cache's builder): the request
#     path (I/O thread, lanes, log writer).
#  3. Waits (native, the server pinned to CPU 0 and wrk to CPU 1 as in bench/ab.sh): for each kind
#     wrk -t1 -c64 runs S seconds with bench/wrk's scripts while `perf stat -p` counts the server's
#     context switches, futex calls and CPU time; printed per request. Instruction counts do not
#     show a thread hop, a lost wakeup or a wait; these do. (Wall-clock throughput is not printed:
#     on a shared machine it is noise; bench/ab.sh is the wall-clock A/B.)
#  --cache-sim: callgrind also simulates the caches (valgrind's model of this CPU's L1 and last
#     level; this VM has no hardware counters) and prints data-cache misses per request of the
#     whole server, L1 (D1mr + D1mw) and last level (DLmr + DLmw): the memory a request touches,
#     which instructions do not show. About twice as slow.
# Kinds: get insert upsert merge batch (default all). Defaults: N 2000, C 16, S 2.
# Annotate one dump: callgrind_annotate --inclusive=yes DIR/<i>/insert.out | head -60
# Needs valgrind (callgrind_control, callgrind_annotate), perf, wrk, python3.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
N=2000 CONNS=16 SECONDS_NATIVE=2 KINDS="get insert upsert merge batch" OUT="" PORT=20731
CALLGRIND=1 NATIVE=1 CACHE_SIM=0
BINS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --n) N="$2"; shift ;;
    --conns) CONNS="$2"; shift ;;
    --seconds) SECONDS_NATIVE="$2"; shift ;;
    --kinds) KINDS="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --port) PORT="$2"; shift ;;
    --no-callgrind) CALLGRIND=0 ;;
    --no-native) NATIVE=0 ;;
    --cache-sim) CACHE_SIM=1 ;;
    -h|--help) sed -n '2,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) BINS+=("$1") ;;
  esac
  shift
done
[[ ${#BINS[@]} -ge 1 ]] || { sed -n '2,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }
for k in $KINDS; do
  case "$k" in get|insert|upsert|merge|batch) ;; *) echo "unknown kind: $k" >&2; exit 2 ;; esac
done
for tool in python3 curl; do command -v $tool >/dev/null || { echo "$tool is missing" >&2; exit 2; }; done
if [[ $CALLGRIND == 1 ]]; then
  command -v valgrind >/dev/null && command -v callgrind_control >/dev/null ||
    { echo "valgrind is missing (apt-get install valgrind)" >&2; exit 2; }
fi
if [[ $NATIVE == 1 ]]; then
  command -v wrk >/dev/null || { echo "wrk is missing (scripts/install-deps.sh)" >&2; exit 2; }
  perf stat -e context-switches -- true >/dev/null 2>&1 || { echo "perf stat does not work here (--no-native)" >&2; exit 2; }
fi
[[ -n "$OUT" ]] || OUT="$(mktemp -d /tmp/tablestone-writepath.XXXXXX)"
mkdir -p "$OUT"
PY=/usr/bin/python3
LOAD=("$PY" "$HERE/fixed_load.py")
SAS="$("$PY" "$HERE/../make_sas.py")"
URL="http://127.0.0.1:$PORT"
PID=""
cleanup() { [[ -n "$PID" ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; }
trap cleanup EXIT

# Functions whose inclusive cost is background work (their threads' entry points).
BACKGROUND='rocksdb::ThreadPoolImpl::Impl::BGThread\(|ScanCacheBuilder::Run\(|RocksEngine::RunBuilder\(|RocksEngine::RunWarmer\('

wait_up() {
  for _ in $(seq "$1"); do curl -s -o /dev/null "$URL/" && return 0; sleep 0.2; done
  echo "the server did not answer on $URL" >&2; return 1
}
stop() { [[ -n "$PID" ]] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; PID=""; }
requests_of() { if [[ $1 == batch ]]; then echo $((N / 20)); else echo "$N"; fi; }

declare -A IR IRPATH CS FUTEX CPU D1 DLL
CG_ARGS=()
[[ $CACHE_SIM == 1 ]] && CG_ARGS=(--cache-sim=yes)
for i in "${!BINS[@]}"; do
  IFS=, read -r -a spec <<<"${BINS[$i]}"
  bin="${spec[0]}" flags=("${spec[@]:1}")
  dir="$OUT/$i"
  rm -rf "$dir"; mkdir -p "$dir"
  [[ -x "$bin" ]] || { echo "not an executable: $bin" >&2; exit 2; }
  echo "[$i] ${BINS[$i]}" >&2
  server=("$bin" --tableHost 127.0.0.1 --tablePort "$PORT" -s -l "$dir/data" --threads 1 "${flags[@]}")
  "${server[@]}" >"$dir/setup.log" 2>&1 & PID=$!
  wait_up 100 || exit 1
  "${LOAD[@]}" setup --port "$PORT" --n 1000 >/dev/null || exit 1
  "${LOAD[@]}" setup --port "$PORT" --n 0 --table ins >/dev/null || exit 1
  stop

  if [[ $CALLGRIND == 1 ]]; then
    valgrind --tool=callgrind "${CG_ARGS[@]}" --callgrind-out-file="$dir/cg.out" "${server[@]}" >"$dir/valgrind.log" 2>&1 & PID=$!
    wait_up 600 || exit 1
    "${LOAD[@]}" get --port "$PORT" --n 200 --conns "$CONNS" >/dev/null || exit 1
    "${LOAD[@]}" insert --port "$PORT" --n 200 --conns "$CONNS" --table ins --tag 1 >/dev/null || exit 1
    for kind in $KINDS; do
      n=$(requests_of "$kind") table=prof
      [[ $kind == insert || $kind == batch ]] && table=ins
      callgrind_control -z "$PID" >/dev/null 2>&1
      "${LOAD[@]}" "$kind" --port "$PORT" --n "$n" --conns "$CONNS" --table "$table" >/dev/null || exit 1
      callgrind_control -d "$kind" "$PID" >/dev/null 2>&1
      f=$(ls -t "$dir"/cg.out.* | head -1); mv "$f" "$dir/$kind.out"
      total=$(awk '/^summary:/ {print $2}' "$dir/$kind.out")
      background=$(callgrind_annotate --inclusive=yes --threshold=100 "$dir/$kind.out" 2>/dev/null |
        grep -E "$BACKGROUND" | awk '{gsub(",", "", $1); s += $1} END {print s + 0}')
      IR[$i,$kind]=$((total / n))
      if [[ $CACHE_SIM == 1 ]]; then
        # Summed by the names on the dump's events: line (per request, one decimal).
        misses() {
          awk -v n="$n" -v a="$1" -v b="$2" '/^events:/ {for (f = 2; f <= NF; ++f) col[$f] = f}
            /^summary:/ {printf "%.1f", ($(col[a]) + $(col[b])) / n}' "$dir/$kind.out"
        }
        D1[$i,$kind]=$(misses D1mr D1mw)
        DLL[$i,$kind]=$(misses DLmr DLmw)
      fi
      IRPATH[$i,$kind]=$(((total - background) / n))
    done
    stop
  fi

  if [[ $NATIVE == 1 ]]; then
    taskset -c 0 "${server[@]}" >"$dir/native.log" 2>&1 & PID=$!
    wait_up 100 || exit 1
    "${LOAD[@]}" get --port "$PORT" --n 200 --conns "$CONNS" >/dev/null || exit 1
    for kind in $KINDS; do
      table=prof pk=pt
      [[ $kind == insert || $kind == batch ]] && table=ins pk="wp-$i-$RANDOM"
      result="$dir/$kind.wrk" counts="$dir/$kind.perf"
      (cd "$HERE/../wrk" && BENCH_BASE="$URL" BENCH_THREADS=1 BENCH_TABLE=$table BENCH_PK=$pk BENCH_N=1000 \
        BENCH_SAS="$SAS" BENCH_WRK_DIR=. perf stat -x, -o "$counts" \
          -e context-switches,syscalls:sys_enter_futex,task-clock -p "$PID" -- \
          timeout $((SECONDS_NATIVE + 30)) taskset -c 1 wrk -t1 -c64 -d"${SECONDS_NATIVE}s" --timeout 30s \
          -s "$kind.lua" "$URL" >"$result" 2>&1)
      requests=$(sed -n 's/^RESULT .*"requests":\([0-9]*\).*/\1/p' "$result")
      grep -q '"non2xx":0,"socket_errors":0' "$result" || { echo "wrk $kind: errors (see $result)" >&2; exit 1; }
      [[ ${requests:-0} -gt 0 ]] || { echo "wrk $kind: no requests (see $result)" >&2; exit 1; }
      per() { awk -F, -v ev="$1" -v n="$requests" -v scale="$2" '$3 == ev {printf "%.2f", $1 * scale / n}' "$counts"; }
      CS[$i,$kind]=$(per context-switches 1)
      FUTEX[$i,$kind]=$(per syscalls:sys_enter_futex 1)
      CPU[$i,$kind]=$(per task-clock 1000)  # task-clock is in ms: µs per request
    done
    stop
  fi
done

echo
echo "Per request (batch: per \$batch of 100 inserts); dumps and logs in $OUT"
for i in "${!BINS[@]}"; do echo "  [$i] ${BINS[$i]}"; done
header="kind"
for i in "${!BINS[@]}"; do
  [[ $CALLGRIND == 1 ]] && header+=" | [$i] Ir | [$i] Ir path"
  [[ $CACHE_SIM == 1 ]] && header+=" | [$i] D1 miss | [$i] LL miss"
  [[ $NATIVE == 1 ]] && header+=" | [$i] cs | [$i] futex | [$i] CPU us"
done
[[ $CALLGRIND == 1 && ${#BINS[@]} -gt 1 ]] && for i in "${!BINS[@]}"; do [[ $i -gt 0 ]] && header+=" | path [$i]/[0]"; done
echo "$header"
for kind in $KINDS; do
  line="$kind"
  for i in "${!BINS[@]}"; do
    [[ $CALLGRIND == 1 ]] && line+=" | ${IR[$i,$kind]} | ${IRPATH[$i,$kind]}"
    [[ $CACHE_SIM == 1 ]] && line+=" | ${D1[$i,$kind]} | ${DLL[$i,$kind]}"
    [[ $NATIVE == 1 ]] && line+=" | ${CS[$i,$kind]} | ${FUTEX[$i,$kind]} | ${CPU[$i,$kind]}"
  done
  if [[ $CALLGRIND == 1 && ${#BINS[@]} -gt 1 ]]; then
    for i in "${!BINS[@]}"; do
      [[ $i -gt 0 ]] && line+=" | $(awk -v a="${IRPATH[$i,$kind]}" -v b="${IRPATH[0,$kind]}" 'BEGIN {printf "%.3f", a / b}')"
    done
  fi
  echo "$line"
done
