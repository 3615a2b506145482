#!/usr/bin/env bash
# Thread hops per request under load: which of the server's threads wakes which, and who switches
# to whom on its core, per request. The server runs pinned to CPU 0 with one I/O thread (so one
# short-lane thread), `wrk -t1 -c64` pinned to CPU 1 runs one bench/wrk scenario (the bench/ab.sh
# set-up), and `perf record` takes the scheduler's sched_switch and sched_wakeup events on CPU 0
# for SECONDS. Printed, per request: switches by (thread that left the CPU -> thread that took
# it, and whether the one that left was still runnable: preempted), wake-ups by (waker -> woken)
# and the total. A thread hop shows as a wake-up, and, on one core, as a switch there and back.
# Usage: bench/profile/hops.sh BINARY [SCENARIO=batch] [SECONDS=2] [PORT=20861]
# EXTRA="--flag value" adds server flags. Needs perf with the sched tracepoints, wrk, python3.
set -euo pipefail
BIN=$1; KIND=${2:-batch}; SECS=${3:-2}; PORT=${4:-20861}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
W=$(mktemp -d /tmp/hops.XXXXXX)
pid=
trap '[[ -n $pid ]] && { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; rm -rf "$W"' EXIT
taskset -c 0 "$BIN" --tableHost 127.0.0.1 --tablePort $PORT -s -l "$W/data" --threads 1 ${EXTRA:-} \
  >"$W/server.log" 2>&1 & pid=$!
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:$PORT/ && break; sleep 0.1; done
$PY "$HERE/../callgrind/fixed_load.py" setup --port $PORT --n 1000 >/dev/null
$PY "$HERE/../callgrind/fixed_load.py" setup --port $PORT --n 0 --table ins >/dev/null
SAS="$($PY "$HERE/../make_sas.py")"
table=prof pk=pt
[[ $KIND == insert || $KIND == batch ]] && table=ins pk="hops-$RANDOM$RANDOM"
run() {
  (cd "$HERE/../wrk" && BENCH_BASE="http://127.0.0.1:$PORT" BENCH_THREADS=1 BENCH_TABLE=$table BENCH_PK=$pk \
    BENCH_N=1000 BENCH_SAS="$SAS" BENCH_WRK_DIR=. timeout $(($1 + 30)) taskset -c 1 wrk -t1 -c64 -d"$1"s \
    --timeout 30s -s "$KIND.lua" "http://127.0.0.1:$PORT")
}
run 1 >/dev/null  # warm
run $((SECS + 2)) >"$W/wrk.out" &
wrk_pid=$!
sleep 1
perf record -q -o "$W/perf.data" -a ${STACKS:+-g} -e sched:sched_switch -e sched:sched_wakeup -- sleep "$SECS" 2>/dev/null
wait $wrk_pid
rate=$(awk '/Requests\/sec/ {print $2}' "$W/wrk.out")
perf script -i "$W/perf.data" -F comm,tid,cpu,event,trace 2>/dev/null >"$W/events.txt"
[[ -n ${STACKS:-} ]] && perf script -i "$W/perf.data" -F comm,tid,cpu,event,trace,ip,sym 2>/dev/null >"$W/stacks.txt" && cp "$W/stacks.txt" /tmp/hops-stacks.txt
$PY - "$W/events.txt" "$rate" "$SECS" "$pid" <<'EOF'
import collections, re, sys
path, rate, secs, server = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
import os
tids = {t: open(f"/proc/{server}/task/{t}/comm").read().strip() for t in os.listdir(f"/proc/{server}/task")}
requests = rate * secs
def name(comm, tid):
    return tids.get(tid, "other:" + comm) if tid in tids else "other"
switches, wakeups = collections.Counter(), collections.Counter()
for line in open(path):
    m = re.match(r"\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+(sched:\S+):\s+(.*)", line)
    if not m: continue
    comm, tid, cpu, event, trace = m.groups()
    if event == "sched:sched_switch":
        if cpu != "000": continue
        f = re.search(r"prev_comm=(.*?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)", trace)
        if not f: continue
        a, b = name(f[1], f[2]), name(f[4], f[5])
        if a == "other" and b == "other": continue
        switches[(a, b, "preempted" if f[3] in ("R", "R+") else "slept")] += 1
    else:
        f = re.search(r"comm=(.*?) pid=(\d+)", trace)
        if not f: continue
        a, b = name(comm, tid), name(f[1], f[2])
        if b == "other": continue
        wakeups[(a, b)] += 1
print(f"{requests:.0f} requests ({rate:.0f}/s over {secs:.0f} s), per request:")
print("switches on CPU 0 (left -> took, how the one that left went):")
for (a, b, how), n in switches.most_common(12):
    print(f"  {n / requests:7.3f}  {a} -> {b} ({how})")
print(f"  {sum(switches.values()) / requests:7.3f}  in all")
print("wake-ups of the server's threads (waker -> woken):")
for (a, b), n in wakeups.most_common(12):
    print(f"  {n / requests:7.3f}  {a} -> {b}")
print(f"  {sum(wakeups.values()) / requests:7.3f}  in all")
EOF
