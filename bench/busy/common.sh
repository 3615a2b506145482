# bench/busy/common.sh: what bench/busy/run.sh and trace.sh share (sourced).
# The caller sets LOOPS, URL, SAS and OUT; SPID is the server being run.
SPID=""
LOOP_PIDS=()

loops_start() {  # LOOPS CPU-bound loops at nice 0, in this session, at most 15 minutes each
  local i
  for ((i = 0; i < LOOPS; i++)); do
    nice -n 0 timeout 900 bash -c 'while :; do :; done' &
    LOOP_PIDS+=("$!")
  done
}
loops_stop() {
  local p
  for p in "${LOOP_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${LOOP_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  LOOP_PIDS=()
}
server_stop() {  # Azurite saves on SIGINT only; both stop on it
  [[ -n "$SPID" ]] || return 0
  kill -INT "$SPID" 2>/dev/null
  for _ in $(seq 300); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.05; done
  kill -KILL "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null
  SPID=""
}
wait_up() {  # until the server SPID answers Query Tables
  for _ in $(seq 1200); do
    kill -0 "$SPID" 2>/dev/null || { echo "server exited (see $OUT/server.log)" >&2; return 1; }
    [[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept: application/json;odata=nometadata' "$URL/devstoreaccount1/Tables?$SAS")" == 200 ]] && return 0
    sleep 0.05
  done
  return 1
}
cache_counts() {  # the server's scan-cache hits and misses so far, as JSON (tablestone only)
  curl -s --max-time 10 "$URL/_tablestone/metrics" | awk '
    /^tablestone_storage_scan_cache_hits_total / { h = $2 }
    /^tablestone_storage_scan_cache_misses_total / { m = $2 }
    END { printf "{\"hits\":%d,\"misses\":%d}\n", h, m }'
}
