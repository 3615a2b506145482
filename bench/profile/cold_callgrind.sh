#!/usr/bin/env bash
# Instructions per scanned row of the uncached (cold) filtered scan, under
# callgrind (repeatable on a noisy machine). Usage:
#   bench/profile/cold_callgrind.sh BINARY OUTDIR [N]
# Loads N (default 50000) entities of 12 properties (bench/js/loader.mjs
# --shape edm12, 5 partitions) natively, restarts the server under callgrind
# with one I/O thread (and no page time budget: under callgrind it would cut
# the scan into pages), then runs `$filter=Rating eq 5 and Age eq 41` three
# times over one connection (bench/cold/scan.py), zeroing the counters before
# and dumping after each: scan1 = first after the restart, scan2 = the second
# (cache admission), scan3 = warm. Prints Ir per scanned row of each: the
# whole process (HTTP, JSON, filter, RocksDB) divided by N.
# CG_TOGGLE='*RocksEngine::ScanPage*' counts the storage scan alone (no HTTP,
# JSON, nor the cache builds that run on other threads meanwhile).
# CG_DRAINS=6 runs six drains (scan1..scan6; the later ones warm) instead of three.
# Annotate: callgrind_annotate --inclusive=yes OUTDIR/scan1.out | head -60
set -euo pipefail
BIN=$1; OUT=$2; N=${3:-50000}; PORT=${PROFILE_PORT:-20112}
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$OUT"; mkdir -p "$OUT"
"$BIN" --tableHost 127.0.0.1 --tablePort $PORT -s -l "$OUT/data" >/dev/null 2>&1 & pid=$!
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:$PORT/ && break; sleep 0.1; done
node "$HERE/../js/loader.mjs" --url http://127.0.0.1:$PORT --table cold --count "$N" \
  --partition-size $(( (N + 4) / 5 )) --pk-prefix c --shape edm12 --quiet >/dev/null
kill -TERM $pid; wait $pid || true
TOGGLE=(); [[ -n "${CG_TOGGLE:-}" ]] && TOGGLE=(--collect-atstart=no "--toggle-collect=$CG_TOGGLE")
TABLESTONE_QUERY_PAGE_MS=600000 valgrind --tool=callgrind "${TOGGLE[@]}" --callgrind-out-file="$OUT/cg.out" "$BIN" --tableHost 127.0.0.1 --tablePort $PORT -s \
  -l "$OUT/data" --threads 1 >"$OUT/valgrind.log" 2>&1 & vg=$!
for _ in $(seq 300); do curl -s -o /dev/null http://127.0.0.1:$PORT/ && break; sleep 0.2; done
for kind in $(seq -f 'scan%g' "${CG_DRAINS:-3}"); do
  callgrind_control -z $vg >/dev/null
  python3 "$HERE/../cold/scan.py" --port $PORT --table cold --drains 1 >"$OUT/$kind.json"
  callgrind_control -d $kind $vg >/dev/null
  f=$(ls -t "$OUT"/cg.out.* | head -1); mv "$f" "$OUT/$kind.out"
  ir=$(grep '^summary:' "$OUT/$kind.out" | awk '{print $2}')
  echo "$kind: $N rows scanned, $ir Ir, $((ir / N)) Ir/row ($(cat "$OUT/$kind.json"))"
done
kill -TERM $vg; wait $vg || true
