#!/usr/bin/env bash
# bench/ab.sh: a quick wall-clock A/B of tablestone binaries on loopback.
#
#   bench/ab.sh [--rounds N] [--duration S] [--port P] BINARY_A BINARY_B -- SCENARIO...
#
# For each round, for each binary in turn: start it pinned to CPU 0 with a
# fresh data directory, load 10,000 entities into partition `pt` of table
# `bench` (the JS loader, 16 connections), then run `wrk -t1 -c64` (pinned to
# CPU 1) for each scenario in the order given, printing req/s: get, insert,
# upsert, merge, batch (100 inserts per $batch, a fresh partition each run),
# page (first page of 1000 entities of partition pt), scan (a filter on a
# non-key property over the 10,000 entities, 8 connections) and getnew (point
# GET with "Connection: close": a new connection, over https:// a new TLS
# handshake, per request; 8 connections). tlsnew and tlsresume (binaries with
# --cert only, "-" otherwise): `openssl s_time` connecting over and over, one
# connection at a time, each with one point GET, with a full handshake
# each time (-new) or resuming the first connection's session (-reuse);
# connections/s. delete is not supported: it needs pre-loaded keys. Binaries alternate so that drift on a
# shared machine hits both. Every process is bounded by `timeout` and stopped
# on exit. A BINARY may carry extra server flags after commas, `{DATA}`
# standing for a fresh directory of that run, e.g.
# `build/server/app/tablestone,--trace,{DATA}/t.jsonl`: the same binary with
# and without a flag is then an A/B of the flag. `{CERT}` and `{KEY}` stand for
# a self-signed PEM pair made once per run; a BINARY with --cert is driven over
# https:// (wrk and the loader), e.g. `B,--cert,{CERT},--key,{KEY}` against `B`
# is HTTPS next to HTTP. Used for the round-4 figures in docs/benchmarks.md;
# the full comparison is bench/run.sh.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROUNDS=2
DURATION=3
PORT=20705
BINS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift ;;
    --duration) DURATION="$2"; shift ;;
    --port) PORT="$2"; shift ;;
    --) shift; break ;;
    *) BINS+=("$1") ;;
  esac
  shift
done
SCENARIOS=("$@")
if [[ ${#BINS[@]} -lt 1 || ${#SCENARIOS[@]} -lt 1 ]]; then
  sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
fi
for s in "${SCENARIOS[@]}"; do
  case "$s" in get|insert|upsert|merge|batch|page|scan|getnew|tlsnew|tlsresume) ;;
    *) echo "unknown scenario: $s" >&2; exit 2 ;; esac
done
command -v wrk >/dev/null || { echo "wrk is missing (scripts/install-deps.sh)" >&2; exit 2; }
[[ -d "$HERE/js/node_modules" ]] || { echo "bench/js/node_modules is missing: run bench/run.sh --smoke once" >&2; exit 2; }

SAS="$(/usr/bin/python3 "$HERE/make_sas.py")"
DATA="$(mktemp -d /tmp/tablestone-ab.XXXXXX)"
PID=""
cleanup() {
  [[ -n "$PID" ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -rf "$DATA"
}
trap cleanup EXIT
CERT="$DATA/tls/cert.pem" KEY="$DATA/tls/key.pem"
if [[ "${BINS[*]}" == *"{CERT}"* ]]; then
  mkdir -p "$DATA/tls"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$KEY" -out "$CERT" -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 || { echo "openssl failed" >&2; exit 1; }
fi

# s_time_rate URL tlsnew|tlsresume: connections/s of `openssl s_time` for DURATION seconds (wall
# clock, pinned to CPU 1), each connection one point GET; "-" for http:// or when it fails.
s_time_rate() {
  [[ $1 == https:* ]] || { echo -; return; }
  local mode=-new path="/devstoreaccount1/bench(PartitionKey='pt',RowKey='r0000001')?$SAS" t0 out n
  [[ $2 == tlsresume ]] && mode=-reuse
  t0=$(date +%s%N)
  out="$(timeout $((DURATION + 30)) taskset -c 1 openssl s_time -connect "${1#https://}" -www "$path" $mode \
    -time "$DURATION" 2>/dev/null | grep 'real seconds' | tail -1)"
  n="${out%% connections*}"
  [[ $n =~ ^[0-9]+$ ]] || { echo ERR; return; }
  echo $(( n * 1000000000 / ($(date +%s%N) - t0) ))
}

for round in $(seq "$ROUNDS"); do
  for bin in "${BINS[@]}"; do
    rm -rf "$DATA/d" "$DATA/extra"
    mkdir -p "$DATA/extra"
    IFS=, read -r -a spec <<<"$bin"
    flags=()
    for f in "${spec[@]:1}"; do f="${f//\{DATA\}/$DATA/extra}"; f="${f//\{CERT\}/$CERT}"; flags+=("${f//\{KEY\}/$KEY}"); done
    URL="http://127.0.0.1:$PORT"
    [[ " ${flags[*]} " == *" --cert "* ]] && URL="https://127.0.0.1:$PORT"
    timeout 600 taskset -c 0 "${spec[0]}" --tablePort "$PORT" -s -l "$DATA/d" "${flags[@]}" >/dev/null 2>&1 &
    PID=$!
    for _ in $(seq 100); do curl -sk -o /dev/null "$URL/" && break; sleep 0.05; done
    (cd "$HERE/js" && { [[ $URL != https:* ]] || export NODE_EXTRA_CA_CERTS="$CERT"; } && timeout 120 taskset -c 1 node loader.mjs --url "$URL" --table bench --count 10000 \
        --concurrency 16 --pk pt --quiet >/dev/null &&
      timeout 60 node loader.mjs --url "$URL" --table ins --count 0 --quiet >/dev/null) ||
      { echo "loading failed for $bin" >&2; exit 1; }
    line="round $round $bin:"
    for s in "${SCENARIOS[@]}"; do
      if [[ $s == tls* ]]; then
        line+=" $s $(s_time_rate "$URL" "$s")"
        continue
      fi
      table=bench pk=pt conns=64
      [[ $s == insert || $s == batch ]] && table=ins pk="ab-$round-$RANDOM"
      [[ $s == scan || $s == page || $s == getnew ]] && conns=8
      ops="$(cd "$HERE/wrk" && BENCH_BASE="$URL" BENCH_THREADS=1 BENCH_TABLE=$table BENCH_PK=$pk BENCH_N=10000 \
        BENCH_SAS="$SAS" BENCH_WRK_DIR=. timeout $((DURATION + 30)) taskset -c 1 \
        wrk -t1 -c$conns -d"${DURATION}s" --timeout 30s -s "$s.lua" "$URL" |
        awk '/Requests\/sec/ {ops = int($2)} /Non-2xx/ {err = 1} END {print (err ? "ERR" : ops)}')"
      line+=" $s $ops"
    done
    echo "$line"
    kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; PID=""
  done
done
