#!/usr/bin/env bash
# bench/busy/trace.sh: who a query waits for on a busy machine (issue 37).
# With one CPU-bound loop per core at nice 0: loads N entities into a fresh
# tablestone, restarts it, records the scheduler's switches and wake-ups
# (`perf record -a -e sched:sched_switch,sched:sched_wakeup`, 6 s) while
# bench/cold/scan.py drains `$filter=Rating eq 5 and Age eq 41` twice, and
# prints, for the server's threads: the CPU time each ran in the window (with
# its nice value) and every sleep longer than 50 ms with the thread that
# ended it. A query that waits for the scan cache's builder shows as a sleep
# of a query thread ended by the builder (the thread at nice 19 that is not
# rocksdb:*).
#
#   bench/busy/trace.sh --tablestone BIN [--count 50000] [--loops N] [--out DIR]
#                       [--tablestone-args "..."]
#
# Needs perf and the sched tracepoints (root, or kernel.perf_event_paranoid
# <= -1). Every process is bounded by `timeout`; the EXIT trap stops them.
# Loopback only. About 30 s.
set -uo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TS_BIN=""; COUNT=50000; LOOPS="$(nproc)"; OUT=""; TS_ARGS=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tablestone) TS_BIN="$2"; shift ;;
    --count) COUNT="$2"; shift ;;
    --loops) LOOPS="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --tablestone-args) TS_ARGS="$2"; shift ;;
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ -x "$TS_BIN" ]] || { echo "--tablestone BIN is required" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf is missing" >&2; exit 2; }
(( LOOPS >= 0 && LOOPS <= 64 )) || { echo "--loops must be 0..64" >&2; exit 2; }
OUT="${OUT:-$(mktemp -d /tmp/tablestone-busy-trace.XXXXXX)}"
mkdir -p "$OUT"
PORT=20404
URL="http://127.0.0.1:$PORT"
SAS="$(python3 "$BENCH_DIR/make_sas.py")"
PERF_PID=""
# shellcheck source=bench/busy/common.sh
source "$BENCH_DIR/busy/common.sh"
cleanup() {
  [[ -n "$PERF_PID" ]] && kill "$PERF_PID" 2>/dev/null
  loops_stop
  server_stop
  rm -rf "$OUT/data"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
server_start() {  # the server itself (not a `timeout` wrapper): perf reports its pid
  # shellcheck disable=SC2086
  "$TS_BIN" --tableHost 127.0.0.1 --tablePort "$PORT" -s -l "$OUT/data" $TS_ARGS >>"$OUT/server.log" 2>&1 &
  SPID=$!
  wait_up
}

loops_start
server_start || exit 1
timeout 300 node "$BENCH_DIR/js/loader.mjs" --url "$URL" --table cold --count "$COUNT" --partition-size $(( (COUNT + 4) / 5 )) \
  --pk-prefix c --shape edm12 --quiet >&2 || exit 1
server_stop
server_start || exit 1
pid="$SPID"
timeout 30 perf record -q -a -e sched:sched_switch -e sched:sched_wakeup -o "$OUT/perf.data" -- sleep 6 2>"$OUT/perf.err" &
PERF_PID=$!
sleep 0.3
timeout 120 python3 "$BENCH_DIR/cold/scan.py" --port "$PORT" --table cold --drains 2 | tee "$OUT/scan.json"
wait "$PERF_PID"; PERF_PID=""
server_stop
perf script -i "$OUT/perf.data" -F comm,pid,tid,time,event,trace 2>/dev/null >"$OUT/sched.txt"

python3 - "$OUT/sched.txt" "$pid" <<'PY'
import collections, re, sys
path, pid = sys.argv[1], int(sys.argv[2])
events = []
for line in open(path):
    m = re.match(r'\s*(.+?)\s+(\d+)/(\d+)\s+([\d.]+):\s+(\S+):\s+(.*)', line)
    if m:
        events.append((float(m[4]), int(m[2]), int(m[3]), m[5], m[6]))
if not events:
    sys.exit("no sched events recorded (perf permissions?)")
t0 = events[0][0]
ours = {tid for _, p, tid, _, _ in events if p == pid}
names, prio = {}, {}
run_start, sleep_start = {}, {}
cpu_ms = collections.Counter()
sleeps = []
for t, p, tid, ev, tr in events:
    t -= t0
    if ev == 'sched:sched_switch':
        prev = int(re.search(r'prev_pid=(\d+)', tr)[1])
        nxt = int(re.search(r'next_pid=(\d+)', tr)[1])
        if prev in ours:
            prio[prev] = int(re.search(r'prev_prio=(\d+)', tr)[1])
            names[prev] = re.search(r'prev_comm=(.+?) prev_pid', tr)[1]
            if prev in run_start:
                cpu_ms[prev] += (t - run_start.pop(prev)) * 1000
            if not re.search(r'prev_state=R', tr):
                sleep_start[prev] = t
        if nxt in ours:
            run_start[nxt] = t
    elif ev == 'sched:sched_wakeup':
        woken = int(re.search(r' pid=(\d+)', tr)[1])
        if woken in ours and woken in sleep_start:
            sleeps.append((sleep_start.pop(woken), t, woken, tid if p == pid else None))
label = lambda x: f"{names.get(x, '?')}/{x} nice {prio.get(x, 120) - 120}" if x else "a timer or another process"
print("CPU time of the server's threads in the window (ms):")
for x in sorted(cpu_ms, key=lambda x: -cpu_ms[x]):
    print(f"  {label(x)}: {cpu_ms[x]:.1f}")
print("sleeps longer than 50 ms (from-to s, thread, woken by):")
for s, e, w, k in sleeps:
    if e - s > 0.05:
        print(f"  {s:.3f}-{e:.3f} ({(e - s) * 1000:.0f} ms) {label(w)} <- {label(k)}")
PY
