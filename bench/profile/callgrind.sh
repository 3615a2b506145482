#!/usr/bin/env bash
# Instruction counts per request of tablestone under callgrind (repeatable on a
# noisy machine). Usage: bench/profile/callgrind.sh BINARY OUTDIR [N]
# Loads 1000 entities natively, restarts the server under callgrind with one
# I/O thread, then for each kind (get, insert, page) zeroes the counters,
# runs N requests (page: N/20) over one keep-alive connection and dumps.
# Kinds: get insert upsert merge page by default; PROFILE_KINDS="batch" (or any
# list of load.py's kinds) instead. batch: N/20 \$batch requests of 100 inserts;
# its Ir/request / 100 is the bulk-load cost per entity.
# Prints Ir per request; annotate with callgrind_annotate --inclusive=yes.
# PROFILE_FLAGS: extra server flags for the measured run, e.g. "--trace /tmp/t.jsonl"
# (split on spaces; callgrind counts every thread, so a writer thread's work is included).
# PROFILE_TLS=1: the server runs with a self-signed RSA-2048 pair made in OUTDIR
# and every request goes over https:// (TLS 1.3; PROFILE_TLS=1.2 for TLS 1.2),
# so the same binary with and without it is the cost of TLS per request.
# PROFILE_STEADY=1: the counters are zeroed after the connection is open and has
# carried 20 point GETs (load.py --hold), so a kind's Ir/request is the kept-alive
# connection's steady state, without the connection's (TLS) handshake.
# PROFILE_FLOOR=1: BINARY is bench_floor_server (started with --port, --threads 1
# and, with PROFILE_TLS, --cert/--key; nothing is loaded; PROFILE_FLAGS such as
# "--body-bytes 241712" give its one response the size of the request compared).
set -euo pipefail
BIN=$1; OUT=$2; N=${3:-2000}; PORT=${PROFILE_PORT:-20102}  # PROFILE_PORT: run two at once
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
rm -rf "$OUT"; mkdir -p "$OUT"
TLS_FLAGS=() LOAD_TLS=() SCHEME=http
if [[ -n "${PROFILE_TLS:-}" ]]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$OUT/key.pem" -out "$OUT/cert.pem" -days 1 \
    -subj /CN=127.0.0.1 >/dev/null 2>&1
  TLS_FLAGS=(--cert "$OUT/cert.pem" --key "$OUT/key.pem") LOAD_TLS=(--tls) SCHEME=https
  [[ $PROFILE_TLS == 1.2 ]] && LOAD_TLS+=(--tls12)
fi
SERVER_FLAGS=(--tableHost 127.0.0.1 --tablePort $PORT -s -l "$OUT/data")
if [[ -n "${PROFILE_FLOOR:-}" ]]; then
  SERVER_FLAGS=(--port $PORT)
else
  "$BIN" "${SERVER_FLAGS[@]}" "${TLS_FLAGS[@]}" >/dev/null 2>&1 & pid=$!
  for _ in $(seq 100); do curl -sk -o /dev/null $SCHEME://127.0.0.1:$PORT/ && break; sleep 0.1; done
  $PY "$HERE/load.py" setup --n 1000 --port $PORT "${LOAD_TLS[@]}" >/dev/null
  $PY "$HERE/load.py" setup --n 0 --port $PORT --table scan "${LOAD_TLS[@]}" >/dev/null
  kill -TERM $pid; wait $pid || true
fi
valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" "$BIN" "${SERVER_FLAGS[@]}" \
  --threads 1 "${TLS_FLAGS[@]}" ${PROFILE_FLAGS:-} >"$OUT/valgrind.log" 2>&1 & vg=$!
for _ in $(seq 300); do curl -sk -o /dev/null $SCHEME://127.0.0.1:$PORT/ && break; sleep 0.2; done
$PY "$HERE/load.py" get --n 20 --port $PORT "${LOAD_TLS[@]}" >/dev/null
for kind in ${PROFILE_KINDS:-get insert upsert merge page}; do
  n=$N; [ $kind = page ] || [ $kind = batch ] && n=$((N / 20))
  if [[ -n "${PROFILE_STEADY:-}" ]]; then
    rm -f "$OUT/hold.ready" "$OUT/hold.go"
    $PY "$HERE/load.py" $kind --n $n --port $PORT "${LOAD_TLS[@]}" --hold "$OUT/hold" >/dev/null & ld=$!
    while [[ ! -e "$OUT/hold.ready" ]]; do kill -0 $ld 2>/dev/null || break; sleep 0.05; done
    callgrind_control -z $vg >/dev/null
    touch "$OUT/hold.go"
    wait $ld
  else
    callgrind_control -z $vg >/dev/null
    $PY "$HERE/load.py" $kind --n $n --port $PORT "${LOAD_TLS[@]}" >/dev/null
  fi
  callgrind_control -d $kind $vg >/dev/null
  f=$(ls -t "$OUT"/cg.out.* | head -1); mv "$f" "$OUT/$kind.out"
  ir=$(grep '^summary:' "$OUT/$kind.out" | awk '{print $2}')
  echo "$kind: $n requests, $ir Ir, $((ir / n)) Ir/request"
done
kill -TERM $vg; wait $vg || true
