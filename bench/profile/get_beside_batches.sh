#!/usr/bin/env bash
# The latency of a sporadic point GET beside a flood of change sets: the server pinned to CPU 0
# with one I/O thread, `wrk -t1 -c64` on CPU 1 sending bench/wrk/batch.lua ($batch of 100 inserts)
# for the whole run, and a client that opens a new connection every GAP seconds (default 1.5: more
# than PlacementPolicy::kPointRequestWindow, so each GET is the first point request after a quiet
# window) and times one GET on it. Prints each GET's milliseconds (connect excluded).
# Usage: bench/profile/get_beside_batches.sh BINARY [GETS=8] [GAP=1.5] [PORT=20871]
set -euo pipefail
BIN=$1; GETS=${2:-8}; GAP=${3:-1.5}; PORT=${4:-20871}
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
W=$(mktemp -d /tmp/get_beside_batches.XXXXXX)
pid= wrk_pid=
trap '[[ -n $wrk_pid ]] && kill $wrk_pid 2>/dev/null; [[ -n $pid ]] && { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; rm -rf "$W"' EXIT
taskset -c 0 "$BIN" --tableHost 127.0.0.1 --tablePort $PORT -s -l "$W/data" --threads 1 >/dev/null 2>&1 & pid=$!
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:$PORT/ && break; sleep 0.1; done
$PY "$HERE/callgrind/fixed_load.py" setup --port $PORT --n 1000 >/dev/null
$PY "$HERE/callgrind/fixed_load.py" setup --port $PORT --n 0 --table ins >/dev/null
SAS="$($PY "$HERE/make_sas.py")"
seconds=$(awk -v g="$GAP" -v n="$GETS" 'BEGIN {printf "%d", g * n + 4}')
(cd "$HERE/wrk" && BENCH_BASE="http://127.0.0.1:$PORT" BENCH_THREADS=1 BENCH_TABLE=ins BENCH_PK="gb-$RANDOM" \
  BENCH_N=1000 BENCH_SAS="$SAS" BENCH_WRK_DIR=. exec timeout $((seconds + 30)) taskset -c 1 wrk -t1 -c64 \
  -d"${seconds}s" --timeout 30s -s batch.lua "http://127.0.0.1:$PORT" >"$W/wrk.out" 2>&1) & wrk_pid=$!
sleep 2
$PY - $PORT "$SAS" "$GETS" "$GAP" <<'EOF'
import http.client, sys, time
port, sas, gets, gap = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
times, status = [], set()
for i in range(gets):
    time.sleep(gap)
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.connect()
    t = time.perf_counter()
    c.request("GET", f"/devstoreaccount1/prof(PartitionKey='pt',RowKey='r{i:07d}')?{sas}",
              headers={"Accept": "application/json;odata=nometadata", "x-ms-version": "2019-02-02"})
    r = c.getresponse()
    r.read()
    times.append((time.perf_counter() - t) * 1000)
    status.add(r.status)
    c.close()
print("GET ms:", " ".join(f"{x:.1f}" for x in times), "| median", f"{sorted(times)[len(times) // 2]:.1f}",
      "| statuses", sorted(status))
EOF
wait $wrk_pid || true
wrk_pid=
awk '/Requests\/sec/ {print "batches/s beside:", $2}' "$W/wrk.out"
