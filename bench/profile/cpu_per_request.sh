#!/usr/bin/env bash
# Server CPU time per request under wrk, by shared object and symbol: the wall-clock companion of
# callgrind.sh (instructions) and syscalls.sh, for what instructions do not show (cache misses,
# allocator paths, the kernel). docs/benchmarks.md, "HTTPS as fast as HTTP".
#
# Usage: bench/profile/cpu_per_request.sh BINARY http|https [SECONDS]
# A BINARY whose name contains "floor" runs as bench_floor_server (--body-bytes 241, page: 241712);
# anything else as tablestone (--threads 1) with 1,000 entities loaded by load.py. The server is
# pinned to CPU 0 and `wrk -t1` to CPU 1 (get: 64 connections, page: 8); a 2 s wrk run warms it,
# then the server's utime+stime over a SECONDS (default 4) run is divided by the requests served.
# Prints one line: scenario, scheme, binary, req/s, server µs per request.
# Environment:
#   SCENARIO=get|page    the wrk script (bench/wrk/*.lua); default get
#   PORT=N               default 20131
#   EXTRA="--flag v"     more server flags
#   CERT=ec              an ECDSA P-256 certificate instead of RSA-2048 (handshakes cost a third)
#   PERF=1               also `perf record -e cpu-clock` on the server during the run: µs per request
#                        by shared object
#   PERF_SYM=N           and the N busiest symbols (µs per request)
#   PERF_DSO=REGEX       and every symbol of the shared objects matching REGEX (e.g. 'ssl|crypto')
#   PERF_CALLERS=SYMBOL  and who calls SYMBOL (records call graphs with DWARF unwinding, which
#                        adds its own cost to the CPU figure: read it for the split, not the total)
# wrk's handshakes (64 full RSA-2048 ones with https) fall inside the measured seconds: ~1.1 ms
# each, so their share per request depends on the request rate; libcrypto's bignum and
# elliptic-curve symbols are theirs.
set -euo pipefail
BIN=$1; SCHEME=$2; SECS=${3:-4}; PORT=${PORT:-20131}; SC=${SCENARIO:-get}
HERE=$(cd "$(dirname "$0")" && pwd); BENCH=$(dirname "$HERE")
PY=/usr/bin/python3
W=$(mktemp -d /tmp/cpu_per_request.XXXXXX)
pid=
cleanup() { [[ -n $pid ]] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }; rm -rf "$W"; }
trap cleanup EXIT
TLS=() LOAD_TLS=()
if [[ $SCHEME == https ]]; then
  key=(-newkey rsa:2048)
  [[ ${CERT:-} == ec ]] && key=(-newkey ec -pkeyopt ec_paramgen_curve:P-256)
  openssl req -x509 "${key[@]}" -nodes -keyout "$W/key.pem" -out "$W/cert.pem" -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
  TLS=(--cert "$W/cert.pem" --key "$W/key.pem") LOAD_TLS=(--tls)
fi
BODY=241 CONNS=64
[[ $SC == page ]] && BODY=241712 CONNS=8
# shellcheck disable=SC2086
if [[ $(basename "$BIN") == *floor* ]]; then
  taskset -c 0 "$BIN" --port "$PORT" --body-bytes $BODY "${TLS[@]}" ${EXTRA:-} >/dev/null 2>&1 & pid=$!
else
  taskset -c 0 "$BIN" --tableHost 127.0.0.1 --tablePort "$PORT" -s -l "$W/data" --threads 1 "${TLS[@]}" \
    ${EXTRA:-} >/dev/null 2>&1 & pid=$!
fi
for _ in $(seq 100); do curl -sk -o /dev/null "$SCHEME://127.0.0.1:$PORT/" && break; sleep 0.1; done
[[ $(basename "$BIN") == *floor* ]] || $PY "$HERE/load.py" setup --n 1000 --port "$PORT" "${LOAD_TLS[@]}" >/dev/null
SAS="$($PY "$BENCH/make_sas.py")"
run() {
  (cd "$BENCH/wrk" && BENCH_BASE="$SCHEME://127.0.0.1:$PORT" BENCH_THREADS=1 BENCH_TABLE=prof BENCH_PK=pt \
    BENCH_N=1000 BENCH_SAS="$SAS" BENCH_WRK_DIR=. /usr/bin/time -f '%e %U %S' -o "$W/wrk.time" taskset -c 1 wrk -t1 -c$CONNS -d"$1"s --timeout 30s -s "$SC.lua" \
    "$SCHEME://127.0.0.1:$PORT")
}
run 2 >/dev/null
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
rec=
if [[ -n ${PERF:-} ]]; then
  graph=()
  [[ -n ${PERF_CALLERS:-} ]] && graph=(--call-graph dwarf,16384)
  perf record -F 4999 -e cpu-clock "${graph[@]}" -o "$W/perf.data" -p "$pid" >/dev/null 2>&1 & rec=$!
  sleep 0.2
fi
s0=$(cpu)
run "$SECS" >"$W/wrk.out"
s1=$(cpu)
[[ -n $rec ]] && { kill -INT $rec; wait $rec || true; }
n=$(awk '/requests in/ {print $1}' "$W/wrk.out")
us=$(echo "($s1 - $s0) * (1000000 / $(getconf CLK_TCK)) / $n" | bc -l)
# Utilizations: a server well below 1.0 CPU was not the bottleneck (wrk, or the machine's other load).
server_util=$(echo "($s1 - $s0) / $(getconf CLK_TCK) / $SECS" | bc -l)
wrk_util=$(awk '{printf "%.2f", ($2 + $3) / $1}' "$W/wrk.time")
printf '%s %s %s req/s %s server_us/req %.1f server_cpu %.2f wrk_cpu %s %s\n' "$SC" "$SCHEME" "$(basename "$BIN")" \
  "$(awk '/Requests\/sec/ {print $2}' "$W/wrk.out")" "$us" "$server_util" "$wrk_util" \
  "$(grep -E 'Non-2xx|errors' "$W/wrk.out" | tr '\n' ' ')"
[[ -z $rec ]] && exit 0
report() { perf report -i "$W/perf.data" --no-children --stdio -g none "$@" 2>/dev/null | grep '%' | grep -v '^#'; }
report --sort dso | awk -v us="$us" '{sub("%", "", $1); printf "  %-24s %7.2f us\n", $2, $1 * us / 100}'
per_sym() { awk -v us="$us" '{p = $1; sub("%", "", p); $1 = ""; printf "  %7.2f us %s\n", p * us / 100, substr($0, 1, 150)}'; }
if [[ -n ${PERF_SYM:-} ]]; then echo "top symbols:"; report --sort dso,sym | head -"$PERF_SYM" | per_sym || true; fi
if [[ -n ${PERF_DSO:-} ]]; then
  echo "symbols of /${PERF_DSO}/:"
  report --sort dso,sym | awk -v re="$PERF_DSO" '$2 ~ re' | head -"${PERF_SYM:-40}" | per_sym || true
fi
if [[ -n ${PERF_CALLERS:-} ]]; then
  echo "callers of ${PERF_CALLERS}:"
  perf report -i "$W/perf.data" --no-children --stdio -G --symbol-filter="$PERF_CALLERS" 2>/dev/null |
    grep -v '^#' | grep -v '^$' | head -80 || true
fi
