#!/usr/bin/env bash
# bench/data_tools.sh: the data tools of issue 16 at scale (docs/benchmarks.md, "Data tools").
#
#   bench/data_tools.sh [--entities N] [--seed-entities M] [--azurite A] [BINARY]
#
# Generates an export file of N entities (default 1,000,000) in one table over 1,000 partitions,
# about 120 bytes of properties each, then times, printing entities/s or ms per step:
#   import-offline  the file into a fresh data directory (no server)
#   export-offline  that directory to a file
#   snapshot-offline  `tablestone snapshot --location` of it
#   export-remote   from a server started on that directory
#   import-remote   the file into a second, empty server
#   copy            server -> a third, empty server (4 batches in flight)
#   snapshot-admin  POST /_tablestone/snapshot on the first server
#   reset-admin     POST /_tablestone/reset of the first server (one table of N entities)
#   seed            startup with --seed of a file of M entities (default 100,000) until healthy
#   azurite         copy of A entities (default 100,000, over 1,000 partitions) tablestone -> Azurite
#                   -> a fresh tablestone, then the three exports compared line by line; needs
#                   Azurite (bench/install-bench-deps.sh), `--azurite 0` skips it. Exits 1 on a mismatch.
# Servers listen on free loopback ports; everything is removed at the end.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
N=1000000
M=100000
A=100000
BIN="$HERE/../build/server/app/tablestone"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --entities) N="$2"; shift ;;
    --seed-entities) M="$2"; shift ;;
    --azurite) A="$2"; shift ;;
    *) BIN="$1" ;;
  esac
  shift
done
BIN="$(realpath "$BIN")"
W="$(mktemp -d /tmp/tablestone-databench.XXXXXX)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
conn() { echo "AccountName=devstoreaccount1;AccountKey=$KEY;TableEndpoint=http://127.0.0.1:$1/devstoreaccount1"; }
now() { date +%s.%N; }
wait_healthy() { until curl -sf "http://127.0.0.1:$1/_tablestone/health" >/dev/null; do sleep 0.01; done; }
start() {  # start PORT DIR [flags...]
  local port="$1" dir="$2"; shift 2
  "$BIN" --tablePort "$port" -l "$dir" -s "$@" >"$W/server-$port.log" 2>&1 &
  PIDS+=($!)
  wait_healthy "$port"
}
rate() { python3 -c "import sys;n=int(sys.argv[1]);s=float(sys.argv[2]);print(f'{sys.argv[3]:18s} {n:>9d} entities {s:7.2f} s  {n/s:>9.0f} entities/s')" "$@"; }
ms() { python3 -c "import sys;print(f'{sys.argv[2]:18s} {float(sys.argv[1])*1000:9.1f} ms')" "$@"; }

gen() {  # gen FILE TABLE COUNT
  python3 - "$@" <<'PY'
import json, sys
path, table, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = lambda o: json.dumps(o, separators=(",", ":"))
with open(path, "w") as f:
    f.write(d({"@format": "tablestone-export", "@version": 1, "@table": table, "@source": "devstoreaccount1"}) + "\n")
    parts = 1000
    per = (n + parts - 1) // parts
    count = 0
    for p in range(parts):
        for r in range(per):
            if count == n:
                break
            i = p * per + r
            f.write(d({"PartitionKey": "p%04d" % p, "RowKey": "r%08d" % i, "Name": "entity %d" % i,
                       "Count@odata.type": "Edm.Int64", "Count": str(i * 7919),
                       "Price@odata.type": "Edm.Double", "Price": i / 7.0,
                       "When@odata.type": "Edm.DateTime", "When": "2024-05-06T07:08:09.1234567Z",
                       "Flag@odata.type": "Edm.Boolean", "Flag": i % 2 == 0}) + "\n")
            count += 1
    f.write(d({"@end": table, "@entities": count}) + "\n")
PY
}

echo "generating $N entities..."
gen "$W/big.jsonl" bench "$N"
gen "$W/seed.jsonl" seeded "$M"

t0=$(now); "$BIN" import --toLocation "$W/d1" --in "$W/big.jsonl" 2>/dev/null; t1=$(now)
rate "$N" "$(echo "$t1 - $t0" | bc)" import-offline
t0=$(now); "$BIN" export --fromLocation "$W/d1" --out "$W/off.jsonl" 2>/dev/null; t1=$(now)
rate "$N" "$(echo "$t1 - $t0" | bc)" export-offline
t0=$(now); "$BIN" snapshot --location "$W/d1" --to "$W/snap-off" 2>/dev/null; t1=$(now)
ms "$(echo "$t1 - $t0" | bc)" snapshot-offline

P1=$(free_port); start "$P1" "$W/d1" --adminApi --snapshotDir "$W"
t0=$(now); "$BIN" export --from "$(conn "$P1")" --out "$W/remote.jsonl" 2>/dev/null; t1=$(now)
rate "$N" "$(echo "$t1 - $t0" | bc)" export-remote
# The generated file is Python's text (100000.0); tablestone writes the same value as 1e+05.
cmp -s "$W/remote.jsonl" "$W/off.jsonl" || echo "WARNING: remote and offline exports differ"

P2=$(free_port); mkdir -p "$W/d2"; start "$P2" "$W/d2"
t0=$(now); "$BIN" import --to "$(conn "$P2")" --in "$W/big.jsonl" 2>/dev/null; t1=$(now)
rate "$N" "$(echo "$t1 - $t0" | bc)" import-remote

P3=$(free_port); mkdir -p "$W/d3"; start "$P3" "$W/d3"
t0=$(now); "$BIN" copy --from "$(conn "$P1")" --to "$(conn "$P3")" --progress none 2>/dev/null; t1=$(now)
rate "$N" "$(echo "$t1 - $t0" | bc)" copy

# Servers 2 and 3 are done; their compaction of a million fresh entities would compete with the
# timed admin steps below for the two cores and the disk.
kill "${PIDS[1]}" "${PIDS[2]}"; wait "${PIDS[1]}" "${PIDS[2]}" 2>/dev/null || true

"$BIN" snapshot --from "$(conn "$P1")" --to "$W/snap-admin" --json | python3 -c 'import json,sys;print("%-18s %9.1f ms (server side)" % ("snapshot-admin", json.load(sys.stdin)["ms"]))'
"$BIN" reset --from "$(conn "$P1")" | python3 -c 'import json,sys;print("%-18s %9.1f ms (server side)" % ("reset-admin", json.load(sys.stdin)["ms"]))'

P4=$(free_port); mkdir -p "$W/d4"
t0=$(now); start "$P4" "$W/d4" --seed "$W/seed.jsonl"; t1=$(now)
echo "$(ms "$(echo "$t1 - $t0" | bc)" "seed ($M)") (process start to healthy)"

AZ="$HERE/.cache/azurite/node_modules/.bin/azurite-table"
if (( A > 0 )) && [[ -x "$AZ" ]]; then
  kill "${PIDS[0]}" "${PIDS[3]}"; wait "${PIDS[0]}" "${PIDS[3]}" 2>/dev/null || true
  gen "$W/az.jsonl" azcopy "$A"
  P5=$(free_port); mkdir -p "$W/d5"; start "$P5" "$W/d5"
  "$BIN" import --to "$(conn "$P5")" --in "$W/az.jsonl" 2>/dev/null
  PA=$(free_port)
  "$AZ" --tableHost 127.0.0.1 --tablePort "$PA" --inMemoryPersistence --silent --disableTelemetry >"$W/azurite.log" 2>&1 &
  PIDS+=($!)
  until curl -s -o /dev/null "http://127.0.0.1:$PA/devstoreaccount1/Tables"; do sleep 0.2; done
  t0=$(now); "$BIN" copy --from "$(conn "$P5")" --to "$(conn "$PA")" --progress none 2>/dev/null; t1=$(now)
  rate "$A" "$(echo "$t1 - $t0" | bc)" copy-to-azurite
  P6=$(free_port); mkdir -p "$W/d6"; start "$P6" "$W/d6"
  t0=$(now); "$BIN" copy --from "$(conn "$PA")" --to "$(conn "$P6")" --progress none 2>/dev/null; t1=$(now)
  rate "$A" "$(echo "$t1 - $t0" | bc)" copy-from-azurite
  for p in "$P5" "$PA" "$P6"; do "$BIN" export --from "$(conn "$p")" --out "$W/az-$p.jsonl" 2>/dev/null; done
  if cmp -s "$W/az-$P5.jsonl" "$W/az-$PA.jsonl" && cmp -s "$W/az-$P5.jsonl" "$W/az-$P6.jsonl"; then
    echo "azurite round trip: $(($(wc -l <"$W/az-$P6.jsonl") - 2)) entities, the three exports identical"
  else
    echo "azurite round trip: MISMATCH between the exports"; exit 1
  fi
elif (( A > 0 )); then
  echo "azurite: skipped (not installed: bash bench/install-bench-deps.sh)"
fi
