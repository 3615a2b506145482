#!/usr/bin/env bash
# bench/container/start.sh: time from `podman run` to the first answered Table request, tablestone's
# image against Azurite 3.35.0's built the same way (bench/container/Dockerfile.azurite: the same
# local Debian base, Node from Debian, `npm install azurite@3.35.0`), each started with its default
# command (Azurite's image's: all three services on 0.0.0.0, data in /data) and its Table port
# published on 127.0.0.1 through Podman's bridge network. Prints the median, min and max of N runs
# and the images' sizes, as Markdown (docs/benchmarks.md, "Container start").
#
#   bench/container/start.sh --tablestone IMAGE [--azurite IMAGE] [--runs 10]
#
# "Answered" means a List Tables call signed with the account key returned 200 (the SDK's own
# request, retries off, polled every 10 ms; the SDK is imported before the clock starts). Each run
# uses a fresh container and a fresh anonymous volume, removed afterwards. The Azurite image is
# built from Dockerfile.azurite when --azurite is not given and it does not exist yet (needs npm's
# registry). Podman comes from ../shared/tools/container-env.sh, as in docker/test-image.sh.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY=/usr/bin/python3
TABLESTONE_IMAGE="" AZURITE_IMAGE="localhost/azurite-bench:3.35.0" RUNS=10
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tablestone) TABLESTONE_IMAGE="$2"; shift 2 ;;
    --azurite) AZURITE_IMAGE="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "start.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$TABLESTONE_IMAGE" ]] || { echo "start.sh: --tablestone IMAGE is required" >&2; exit 2; }

ENV_SH="${TABLESTONE_CONTAINER_ENV:-$ROOT/../shared/tools/container-env.sh}"
[[ -f "$ENV_SH" ]] || ENV_SH=/work/shared/tools/container-env.sh
if [[ -z "${CONTAINERS_CONF:-}" && -f "$ENV_SH" ]]; then eval "$(sh "$ENV_SH")"; fi
WORK="$(mktemp -d /tmp/tablestone-container-bench.XXXXXX)"
CURRENT=""
cleanup() { [[ -n "$CURRENT" ]] && podman rm -f -v "$CURRENT" >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT
BRIDGE_CONF="$WORK/containers.conf"
if [[ -n "${CONTAINERS_CONF:-}" ]]; then
  sed -E 's/^netns *= *"host"/netns = "bridge"/' "$CONTAINERS_CONF" >"$BRIDGE_CONF"
else
  printf '[containers]\nnetns = "bridge"\n' >"$BRIDGE_CONF"
fi

if ! podman image exists "$AZURITE_IMAGE"; then
  echo "building $AZURITE_IMAGE from bench/container/Dockerfile.azurite" >&2
  # The host's CA bundle goes in too, in case npm's registry is reached through an intercepting proxy.
  podman build --format docker -f "$HERE/Dockerfile.azurite" -t "$AZURITE_IMAGE" \
    -v /etc/ssl/certs/ca-certificates.crt:/run/host-ca.crt:ro --build-arg HOST_CA=/run/host-ca.crt \
    "$HERE" >"$WORK/build.log" 2>&1 ||
    { tail -20 "$WORK/build.log"; exit 1; }
fi

# One run: prints milliseconds from `podman run` to the first 200 of List Tables.
one_run() {
  local image="$1" port name="bench-start-$$-$RANDOM"
  port="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  CURRENT="$name"
  "$PY" - "$image" "$name" "$port" "$BRIDGE_CONF" <<'PYEOF'
import os, subprocess, sys, time
from azure.data.tables import TableServiceClient
image, name, port, conf = sys.argv[1:5]
key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
cs = ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;"
      "TableEndpoint=http://127.0.0.1:%s/devstoreaccount1;" % (key, port))
client = TableServiceClient.from_connection_string(cs, retry_total=0, connection_timeout=1, read_timeout=5)
env = dict(os.environ, CONTAINERS_CONF=conf)
t0 = time.monotonic()
subprocess.Popen(["podman", "run", "-d", "--name", name, "-p", "127.0.0.1:%s:10002" % port, image],
                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = t0 + 60
while time.monotonic() < deadline:
    try:
        list(client.list_tables())
        print("%.0f" % ((time.monotonic() - t0) * 1000))
        sys.exit(0)
    except Exception:
        time.sleep(0.01)
sys.exit(1)
PYEOF
  local rc=$?
  podman rm -f -v "$name" >/dev/null 2>&1
  CURRENT=""
  return $rc
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

echo "| image | size (MB) | start to first answered List Tables, median of $RUNS (ms) | min | max |"
echo "|---|---|---|---|---|"
for image in "$TABLESTONE_IMAGE" "$AZURITE_IMAGE"; do
  : >"$WORK/times"
  one_run "$image" >/dev/null 2>&1  # first start after build: warms the page cache, not counted
  for _ in $(seq 1 "$RUNS"); do
    ms="$(one_run "$image")" || { echo "start.sh: $image did not answer within 60 s" >&2; exit 1; }
    echo "$ms" >>"$WORK/times"
  done
  size="$(podman image inspect --format '{{.Size}}' "$image")"
  printf '| %s | %.1f | %s | %s | %s |\n' "$image" "$(echo "$size / 1000000" | bc -l)" "$(median <"$WORK/times")" \
    "$(sort -n "$WORK/times" | head -1)" "$(sort -n "$WORK/times" | tail -1)"
done
