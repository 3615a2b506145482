#!/usr/bin/env bash
# CPU time of the server per cold drain, which (unlike the wall clock of
# bench/cold/run.sh) holds on a shared, loaded machine. Usage:
#   bench/profile/cold_cpu.sh BINARY [N] [REPS] [DRAINS]
# Loads N entities (default 1000000; bench/js/loader.mjs --shape edm12, N/10000
# partitions, at least 5) once and stops the server (a clean stop flushes).
# Then REPS times (default 3): copies that directory, starts the server on it
# pinned to CPU 0, and runs DRAINS (default 2) drains of
# `$filter=Rating eq 5 and Age eq 41` (bench/cold/scan.py, one at a time),
# printing per drain the CPU milliseconds of all the server's threads
# (/proc/PID/task/*/schedstat, including background work within 0.3 s after
# the drain) and its minor page faults, then the run's peak RSS.
# Extra environment for the measured server: COLD_CPU_ENV="VAR=value ...".
set -euo pipefail
BIN=$1; N=${2:-1000000}; REPS=${3:-3}; DRAINS=${4:-2}; PORT=${PROFILE_PORT:-20122}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mktemp -d /tmp/tablestone-cold-cpu.XXXXXX)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$OUT"' EXIT
up() { for _ in $(seq 200); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0; sleep 0.05; done; return 1; }
cpu() { cat /proc/"$pid"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s / 1e5}'; }
faults() { awk '{print $10}' /proc/"$pid"/stat; }

P=$(( N / 10000 > 5 ? N / 10000 : 5 ))
"$BIN" --tableHost 127.0.0.1 --tablePort $PORT -s -l "$OUT/template" >/dev/null 2>&1 & pid=$!
up
node "$HERE/../js/loader.mjs" --url "http://127.0.0.1:$PORT" --table cold --count "$N" \
  --partition-size $(( (N + P - 1) / P )) --pk-prefix c --shape edm12 --quiet >/dev/null
kill -INT $pid; wait $pid || true
for r in $(seq "$REPS"); do
  rm -rf "$OUT/run"; cp -a "$OUT/template" "$OUT/run"
  # shellcheck disable=SC2086
  env ${COLD_CPU_ENV:-} taskset -c 0 "$BIN" --tableHost 127.0.0.1 --tablePort $PORT -s -l "$OUT/run" \
    >/dev/null 2>&1 & pid=$!
  up; sleep 0.5
  line="run $r:"
  for d in $(seq "$DRAINS"); do
    c0=$(cpu); f0=$(faults)
    taskset -c 1 python3 "$HERE/../cold/scan.py" --port $PORT --table cold --drains 1 >/dev/null
    sleep 0.3
    c1=$(cpu); f1=$(faults)
    line+=" drain $d $(awk -v a="$c0" -v b="$c1" 'BEGIN {printf "%.1f", (b - a) / 10}') ms CPU, $((f1 - f0)) faults;"
  done
  echo "$line peak RSS $(awk '/VmHWM/ {print $2}' /proc/$pid/status) kB"
  kill -INT $pid; wait $pid || true
done
