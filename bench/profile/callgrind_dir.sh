#!/usr/bin/env bash
# Instruction counts per request on a large directory kept by
# `bench/scale/run.sh --keep --count COUNT` (its <out>/data): what a point read
# or an insert costs once the table no longer fits the caches.
# Usage: bench/profile/callgrind_dir.sh BINARY DATA_DIR OUTDIR COUNT [server flags...]
# Runs the server under callgrind with one I/O thread on DATA_DIR (the inserts
# add entities to it; compare binaries on copies of one directory), warms up with 200 GETs, then for each kind (scale-get: 2,000 GETs of random
# keys; scale-insert: 40 $batch requests of 100 new keys between existing ones,
# bench/profile/load.py) zeroes the counters, runs and dumps. Prints Ir per
# request of the request threads only: compactions that the open resumes run
# in RocksDB's background threads and are subtracted.
# PROFILE_PORT: run two at once; PROFILE_KINDS: a subset of the kinds.
set -euo pipefail
BIN=$1; DATA=$2; OUT=$3; COUNT=$4; shift 4; PORT=${PROFILE_PORT:-20132}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
mkdir -p "$OUT"
valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" "$BIN" --tableHost 127.0.0.1 --tablePort "$PORT" -s \
  -l "$DATA" --threads 1 "$@" >"$OUT/valgrind.log" 2>&1 & vg=$!
trap 'kill -TERM $vg 2>/dev/null || true' EXIT  # also when a step fails
for _ in $(seq 600); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.2; done
$PY "$HERE/load.py" scale-get --n 200 --count "$COUNT" --port "$PORT" >/dev/null
for kind in ${PROFILE_KINDS:-scale-get scale-insert}; do
  n=2000; [ "$kind" = scale-insert ] && n=40
  callgrind_control -z $vg >/dev/null
  $PY "$HERE/load.py" "$kind" --n $n --count "$COUNT" --port "$PORT" >/dev/null
  callgrind_control -d "$kind" $vg >/dev/null
  f=$(ls -t "$OUT"/cg.out.* | head -1); mv "$f" "$OUT/$kind.out"
  ir=$(grep '^summary:' "$OUT/$kind.out" | awk '{print $2}')
  bg=$(callgrind_annotate --inclusive=yes --threshold=100 "$OUT/$kind.out" 2>/dev/null |
    awk '/ThreadPoolImpl::Impl::BGThread\(/ && $1 ~ /^[0-9,]+$/ && !n {gsub(",", "", $1); print $1; n = 1}')
  echo "$kind: $n requests, $ir Ir ($((${bg:-0})) in background threads), $(((ir - ${bg:-0}) / n)) Ir/request"
done
kill -TERM $vg; wait $vg || true
trap - EXIT
