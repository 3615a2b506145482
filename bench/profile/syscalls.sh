#!/usr/bin/env bash
# System calls per request of tablestone (strace -c), the companion of
# callgrind.sh. Usage: bench/profile/syscalls.sh BINARY OUTDIR [N]
# Loads 1000 entities, then for each kind attaches `strace -c` to every thread
# of the running server, runs N requests (page: N/20) over one keep-alive
# connection with load.py, detaches and prints the calls per request (total
# and the busiest few); the full table is OUTDIR/<kind>.txt.
# PROFILE_KINDS as in callgrind.sh (default: get page). PROFILE_TLS=1 (or 1.2):
# over https://, as in callgrind.sh.
set -euo pipefail
BIN=$1; OUT=$2; N=${3:-2000}; PORT=${PROFILE_PORT:-20103}
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
"$BIN" --tableHost 127.0.0.1 --tablePort $PORT -s -l "$OUT/data" --threads 1 "${TLS_FLAGS[@]}" \
  >/dev/null 2>&1 & pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sk -o /dev/null $SCHEME://127.0.0.1:$PORT/ && break; sleep 0.1; done
$PY "$HERE/load.py" setup --n 1000 --port $PORT "${LOAD_TLS[@]}" >/dev/null
$PY "$HERE/load.py" get --n 20 --port $PORT "${LOAD_TLS[@]}" >/dev/null
for kind in ${PROFILE_KINDS:-get page}; do
  n=$N; [ $kind = page ] || [ $kind = batch ] && n=$((N / 20))
  attach=()
  for t in /proc/$pid/task/*; do attach+=(-p "${t##*/}"); done
  strace -c -o "$OUT/$kind.txt" "${attach[@]}" 2>/dev/null & st=$!
  sleep 1  # strace attaches to every thread
  $PY "$HERE/load.py" $kind --n $n --port $PORT "${LOAD_TLS[@]}" >/dev/null
  kill -TERM $st; wait $st || true
  total=$(awk '$NF == "total" {print $4}' "$OUT/$kind.txt")
  top=$(awk 'NR > 2 && $1 ~ /^[0-9.]+$/ && $NF != "total" {print $NF, ($4 ~ /^[0-9]+$/ ? $4 : 0)}' "$OUT/$kind.txt" |
    sort -k2 -nr | head -5 | awk -v n=$n '{printf "%s %.2f, ", $1, $2 / n}')
  echo "$kind: $n requests, $total syscalls, $(awk -v t=$total -v n=$n 'BEGIN {printf "%.2f", t / n}')/request (${top%, })"
done
