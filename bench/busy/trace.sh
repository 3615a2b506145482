#!/usr/bin/env bash
# bench/busy/trace.sh: who a query waits for on a busy machine (issue 37).
# With one CPU-bound loop per core at nice 0: loads N entities into a fresh
# tablestone, records the scheduler's switches and wake-ups (`perf record -a
# -k CLOCK_MONOTONIC -e sched:sched_switch,sched:sched_wakeup`) while
# bench/cold/scan.py drains `$filter=Rating eq 5 and Age eq 41`, and prints,
# for the server's threads, within each drain's window (scan.py's "window"):
# the CPU time each ran (with its nice value), the time it was runnable but
# not running (it waited for a core), the time it slept, and every sleep
# longer than --min-sleep-ms with the thread that ended it.
#   --phase restart (default)  restarts the server on the loaded directory and
#                              drains twice: the first and second drain after a
#                              restart (the restores)
#   --phase load               drains once right after the load, on the same
#                              server (the warm builds of the loaded partitions);
#                              the recording covers the load's last seconds too
#   --phase get                restarts and drains twice as run.sh does, then
#                              records 5 s of wrk point GETs (-c8) instead of
#                              the drains; a thread's waits for a core are
#                              listed with who held it when it got the core
# A query that waits for the scan cache's builder shows as a sleep of a query
# thread ended by the builder (the thread that is not rocksdb:*, tablestone's
# I/O thread or a lane's).
#
#   bench/busy/trace.sh --tablestone BIN [--phase restart|load|get] [--count 50000]
#                       [--loops N] [--min-sleep-ms 2] [--out DIR]
#                       [--tablestone-args "..."]
#
# Needs perf and the sched tracepoints (root, or kernel.perf_event_paranoid
# <= -1). Every process is bounded by `timeout`; the EXIT trap stops them.
# Loopback only. About 30 s.
set -uo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TS_BIN=""; COUNT=50000; LOOPS="$(nproc)"; OUT=""; TS_ARGS=""; PHASE=restart; MIN_SLEEP_MS=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tablestone) TS_BIN="$2"; shift ;;
    --phase) PHASE="$2"; shift ;;
    --count) COUNT="$2"; shift ;;
    --loops) LOOPS="$2"; shift ;;
    --min-sleep-ms) MIN_SLEEP_MS="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --tablestone-args) TS_ARGS="$2"; shift ;;
    -h|--help) sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ -x "$TS_BIN" ]] || { echo "--tablestone BIN is required" >&2; exit 2; }
[[ "$PHASE" =~ ^(restart|load|get)$ ]] || { echo "--phase is restart, load or get" >&2; exit 2; }
[[ "$MIN_SLEEP_MS" =~ ^[0-9]+$ ]] || { echo "--min-sleep-ms is a whole number" >&2; exit 2; }
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
  [[ -n "$PERF_PID" ]] && kill -INT "$PERF_PID" 2>/dev/null
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
perf_start() {  # records until perf_stop (at most 120 s)
  timeout -s INT 120 perf record -q -a -k CLOCK_MONOTONIC -e sched:sched_switch -e sched:sched_wakeup \
    -o "$OUT/perf.data" 2>"$OUT/perf.err" &
  PERF_PID=$!
  sleep 0.3
}
perf_stop() { kill -INT "$PERF_PID" 2>/dev/null; wait "$PERF_PID"; PERF_PID=""; }
load() {
  timeout 300 node "$BENCH_DIR/js/loader.mjs" --url "$URL" --table cold --count "$COUNT" \
    --partition-size $(( (COUNT + 4) / 5 )) --pk-prefix c --shape edm12 --quiet >&2
}

loops_start
server_start || exit 1
pid="$SPID"
if [[ $PHASE == load ]]; then
  # The last seconds of the load are recorded too: the warm builds start
  # warm_after_write after a partition's last write, before the drain.
  perf_start
  load || exit 1
  timeout 120 python3 "$BENCH_DIR/cold/scan.py" --port "$PORT" --table cold --drains 1 | tee "$OUT/scan.json"
  echo "scan cache after the drain: $(cache_counts)"
elif [[ $PHASE == get ]]; then
  load || exit 1
  server_stop
  server_start || exit 1
  pid="$SPID"
  timeout 120 python3 "$BENCH_DIR/cold/scan.py" --port "$PORT" --table cold --drains 2 >/dev/null
  perf_start
  start=$(python3 -c 'import time; print(time.monotonic())')
  (cd "$BENCH_DIR/wrk" && BENCH_BASE="$URL" BENCH_THREADS=1 BENCH_TABLE=cold BENCH_PK=c000000 \
    BENCH_N=$(( (COUNT + 4) / 5 )) BENCH_SAS="$SAS" BENCH_WRK_DIR=. timeout 65 \
    wrk -t1 -c8 -d5s --timeout 30s -s get.lua "$URL" 2>&1 | sed -n 's/^RESULT //p') | tee "$OUT/wrk.json"
  end=$(python3 -c 'import time; print(time.monotonic())')
  echo "{\"window\": [[$start, $end]]}" >"$OUT/scan.json"
else
  load || exit 1
  server_stop
  server_start || exit 1
  pid="$SPID"
  perf_start
  timeout 120 python3 "$BENCH_DIR/cold/scan.py" --port "$PORT" --table cold --drains 2 | tee "$OUT/scan.json"
  echo "scan cache after the drains: $(cache_counts)"
fi
sleep 0.1
perf_stop
server_stop
perf script -i "$OUT/perf.data" -F comm,pid,tid,time,event,trace 2>/dev/null >"$OUT/sched.txt"

python3 - "$OUT/sched.txt" "$pid" "$OUT/scan.json" "$MIN_SLEEP_MS" <<'PY'
import collections, json, re, sys
path, pid, scan_path, min_sleep = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]) / 1000
events = []
for line in open(path):
    m = re.match(r'\s*(.+?)\s+(\d+)/(\d+)\s+([\d.]+):\s+(\S+):\s+(.*)', line)
    if m:
        events.append((float(m[4]), int(m[2]), int(m[3]), m[5], m[6]))
if not events:
    sys.exit("no sched events recorded (perf permissions?)")
windows = json.loads(open(scan_path).read())["window"]
ours = {tid for _, p, tid, _, _ in events if p == pid}
names, prio = {}, {}
for t, p, tid, ev, tr in events:
    if ev == 'sched:sched_switch':
        prev = int(re.search(r'prev_pid=(\d+)', tr)[1])
        if prev in ours:
            names[prev] = re.search(r'prev_comm=(.+?) prev_pid', tr)[1]
            prio[prev] = int(re.search(r'prev_prio=(\d+)', tr)[1])
label = lambda x: f"{names.get(x, '?')}/{x} nice {prio.get(x, 120) - 120}" if x else "a timer or another process"

def analyse(lo, hi):
    # state per thread: 'run' (on a CPU), 'ready' (runnable, waiting for one),
    # 'sleep'; the time spent in each within [lo, hi].
    state, since = {}, {}
    spent = collections.defaultdict(collections.Counter)
    sleeps = []
    waits = collections.defaultdict(list)  # thread -> [(ms runnable before it ran, who it took the core from)]
    def enter(x, s, t, took_from=None):
        if x in state:
            a = max(since[x], lo); b = min(t, hi)
            if b > a: spent[x][state[x]] += b - a
            if state[x] == 'ready' and s == 'run' and t > lo:
                waits[x].append(((t - since[x]) * 1000, took_from))
        state[x], since[x] = s, t
    for t, p, tid, ev, tr in events:
        if t > hi: break
        if ev == 'sched:sched_switch':
            prev = int(re.search(r'prev_pid=(\d+)', tr)[1])
            nxt = int(re.search(r'next_pid=(\d+)', tr)[1])
            if prev in ours:
                enter(prev, 'ready' if re.search(r'prev_state=R', tr) else 'sleep', t)
            if nxt in ours:
                held = re.search(r'prev_comm=(.+?) prev_pid=(\d+)', tr)
                enter(nxt, 'run', t, label(int(held[2])) if int(held[2]) in ours else held[1])
        elif ev == 'sched:sched_wakeup':
            woken = int(re.search(r' pid=(\d+)', tr)[1])
            if woken in ours and state.get(woken) == 'sleep':
                if t - since[woken] > min_sleep and t > lo:
                    sleeps.append((since[woken], t, woken, tid if p == pid else None))
                enter(woken, 'ready', t)
    for x in list(state):
        enter(x, state[x], hi)
    return spent, sleeps, waits

for i, (lo, hi) in enumerate(windows):
    spent, sleeps, waits = analyse(lo, hi)
    print(f"drain {i + 1}: {(hi - lo) * 1000:.1f} ms (from {lo:.3f} s)")
    print("  thread: ms running / runnable, waiting for a core / asleep")
    for x in sorted(spent, key=lambda x: -spent[x]['run']):
        s = spent[x]
        if s['run'] + s['ready'] < 0.0001: continue
        print(f"  {label(x)}: {s['run'] * 1000:.1f} / {s['ready'] * 1000:.1f} / {s['sleep'] * 1000:.1f}")
    print(f"  sleeps longer than {min_sleep * 1000:.0f} ms ending in the drain (start-end s from the drain's start, thread, woken by):")
    for s, e, w, k in sleeps:
        print(f"    {s - lo:+.3f}..{e - lo:+.3f} ({(e - s) * 1000:.1f} ms) {label(w)} <- {label(k)}")
    print("  waits for a core (count, p50 / p99 / max ms; for waits over 1 ms, whom the core was taken from):")
    for x in sorted(waits, key=lambda x: -sum(w for w, _ in waits[x])):
        ms = sorted(w for w, _ in waits[x])
        pick = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]
        held = collections.Counter(k for w, k in waits[x] if w > 1)
        top = ", ".join(f"{k} {n}" for k, n in held.most_common(4))
        print(f"    {label(x)}: {len(ms)}, {pick(0.5):.2f} / {pick(0.99):.2f} / {ms[-1]:.2f}; {top}")
PY
