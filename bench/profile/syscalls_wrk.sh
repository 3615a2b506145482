#!/usr/bin/env bash
# System calls per point GET under load: `strace -c` on every thread of the server while
# `wrk -t1 -c64` runs bench/wrk/get.lua (the get scenario of bench/ab.sh), server on CPU 0 and
# wrk on CPU 1. Unlike syscalls.sh (one connection, one request at a time, where every read
# after an answer finds nothing yet) this shows what a loaded server does per request: how many
# reads fail with EAGAIN, how often it sleeps in epoll_wait.
# Usage: bench/profile/syscalls_wrk.sh BINARY [PORT] [SECONDS]
# A BINARY whose name contains "floor" is bench_floor_server (--body-bytes 241, nothing loaded);
# otherwise tablestone with 1,000 entities loaded by load.py. EXTRA="--flag value" adds server
# flags. strace slows the server several-fold: read the counts, not the rate.
set -euo pipefail
BIN=$1; PORT=${2:-20851}; SECS=${3:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
W=$(mktemp -d /tmp/syscalls_wrk.XXXXXX)
pid=
trap '[[ -n $pid ]] && { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; rm -rf "$W"' EXIT
if [[ $BIN == *floor* ]]; then
  taskset -c 0 "$BIN" --port $PORT --body-bytes 241 ${EXTRA:-} >/dev/null 2>&1 & pid=$!
else
  taskset -c 0 "$BIN" --tableHost 127.0.0.1 --tablePort $PORT -s -l "$W/data" --threads 1 ${EXTRA:-} \
    >/dev/null 2>&1 & pid=$!
fi
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:$PORT/ && break; sleep 0.1; done
[[ $BIN == *floor* ]] || $PY "$HERE/load.py" setup --n 1000 --port $PORT >/dev/null
SAS="$($PY "$HERE/../make_sas.py")"
run() {
  (cd "$HERE/../wrk" && BENCH_BASE="http://127.0.0.1:$PORT" BENCH_THREADS=1 BENCH_TABLE=prof BENCH_PK=pt \
    BENCH_N=1000 BENCH_SAS="$SAS" BENCH_WRK_DIR=. timeout 60 taskset -c 1 wrk -t1 -c64 -d"$1"s --timeout 30s \
    -s get.lua "http://127.0.0.1:$PORT")
}
run 1 >/dev/null
attach=()
for t in /proc/$pid/task/*; do attach+=(-p "${t##*/}"); done
strace -c -o "$W/strace.txt" "${attach[@]}" 2>/dev/null & st=$!
sleep 0.5  # strace attaches to every thread
run "$SECS" >"$W/wrk.out"
kill -INT $st; wait $st || true
n=$(awk '/requests in/ {print $1}' "$W/wrk.out")
echo "$(basename "$BIN"): $n requests"
awk -v n=$n 'NR > 2 && $4 ~ /^[0-9]+$/ && $NF != "total" {
  printf "  %-16s %6.3f/request, failed %6.3f/request\n", $NF, $4 / n, ($5 ~ /^[0-9]+$/ ? $5 : 0) / n }' \
  "$W/strace.txt" | sort -k2 -nr | head -8
