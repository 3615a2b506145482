#!/usr/bin/env bash
# Simulated cache misses per request under many kept-alive connections: what instruction counts
# (callgrind.sh, one connection) do not show and wall clock on a shared machine shows only through
# its noise. docs/benchmarks.md, "HTTPS as fast as HTTP".
#
# Usage: bench/profile/cachesim.sh BINARY http|https OUTDIR [SECONDS]
# Runs the server under callgrind with its cache simulation (L1i and L1d 32 KiB, 8-way, and the
# last level at this machine's L2, 512 KiB 8-way: a miss there goes to the shared L3 or memory);
# `wrk -t1` drives it with 64 connections (page: 8) for WARM (default 40) + SECONDS (default 20)
# seconds; the counters are zeroed WARM seconds in, after every connection's handshake (an ECDSA
# P-256 certificate keeps them short under valgrind), and dumped SECONDS later, so only the
# kept-alive steady state is counted. A BINARY whose name contains "floor" is
# bench_floor_server (as in cpu_per_request.sh), anything else tablestone with 1,000 entities.
# Prints requests counted (calls of a function run once per response) and Ir, I1 misses, D1 misses
# (read + write) and last-level misses per request, in all and by shared object.
# SCENARIO=get|page and EXTRA (more server flags) as cpu_per_request.sh. TOP=N: also the N functions with the most misses.
set -euo pipefail
BIN=$1; SCHEME=$2; OUT=$3; SECS=${4:-20}; PORT=${PORT:-20141}; SC=${SCENARIO:-get}; WARM=${WARM:-40}
HERE=$(cd "$(dirname "$0")" && pwd); BENCH=$(dirname "$HERE")
PY=/usr/bin/python3
rm -rf "$OUT"; mkdir -p "$OUT"
pid=
cleanup() { [[ -n $pid ]] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }; }
trap cleanup EXIT
TLS=() LOAD_TLS=()
if [[ $SCHEME == https ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$OUT/key.pem" -out "$OUT/cert.pem" -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
  TLS=(--cert "$OUT/cert.pem" --key "$OUT/key.pem") LOAD_TLS=(--tls)
fi
BODY=241 CONNS=64
[[ $SC == page ]] && BODY=241712 CONNS=8
floor=; [[ $(basename "$BIN") == *floor* ]] && floor=1
if [[ -n $floor ]]; then
  FLAGS=(--port "$PORT" --body-bytes $BODY "${TLS[@]}")
else
  FLAGS=(--tableHost 127.0.0.1 --tablePort "$PORT" -s -l "$OUT/data" --threads 1 "${TLS[@]}")
  "$BIN" "${FLAGS[@]}" >/dev/null 2>&1 & pid=$!
  for _ in $(seq 100); do curl -sk -o /dev/null "$SCHEME://127.0.0.1:$PORT/" && break; sleep 0.1; done
  $PY "$HERE/load.py" setup --n 1000 --port "$PORT" "${LOAD_TLS[@]}" >/dev/null
  kill "$pid"; wait "$pid" || true; pid=
fi
# Requests: calls of a function run once per request (COUNT, a regular expression on callee names).
COUNT=${COUNT:-'^tablestone::api::Dispatcher::Handle\('}
[[ -n $floor ]] && COUNT=${COUNT_FLOOR:-'^boost::beast::http::basic_parser<true>::put\('}
# shellcheck disable=SC2206
FLAGS+=(${EXTRA:-})
valgrind --tool=callgrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=524288,8,64 \
  --callgrind-out-file="$OUT/callgrind.out" "$BIN" "${FLAGS[@]}" >/dev/null 2>"$OUT/valgrind.log" & pid=$!
for _ in $(seq 300); do curl -sk -o /dev/null "$SCHEME://127.0.0.1:$PORT/" && break; sleep 0.2; done
SAS="$($PY "$BENCH/make_sas.py")"
(cd "$BENCH/wrk" && BENCH_BASE="$SCHEME://127.0.0.1:$PORT" BENCH_THREADS=1 BENCH_TABLE=prof BENCH_PK=pt \
  BENCH_N=1000 BENCH_SAS="$SAS" BENCH_WRK_DIR=. wrk -t1 -c$CONNS -d$((SECS + WARM + 2))s --timeout 60s -s "$SC.lua" \
  "$SCHEME://127.0.0.1:$PORT" >"$OUT/wrk.out" 2>&1) & wrk=$!
sleep "$WARM"
callgrind_control -z "$pid" >/dev/null
sleep "$SECS"
callgrind_control -d "$pid" >/dev/null
wait $wrk || true
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
dump=$(ls "$OUT"/callgrind.out.* | sort | head -1)
$PY "$HERE/cachesim_report.py" "$dump" "$COUNT" "${TOP:-0}"
