#!/usr/bin/env bash
# Builds the tablestone image, starts it, and proves it: health route and HEALTHCHECK, PID 1 as uid 10002,
# no missing shared library, the Python and JS SDK end-to-end suites run against the container, data
# written before `stop` is there after a restart on the same volume, and `stop` is a clean SIGTERM exit.
# Removes its containers, volume and (unless TABLESTONE_IMAGE_KEEP=1) the image at the end.
#
# Usage: bash docker/test-image.sh [--prebuilt DEB]
#   (default)       build the `runtime` target: the whole project is compiled inside the image build
#                   with scripts/install-deps.sh + scripts/build.sh (slow: a full Release compile)
#   --prebuilt DEB  build the `runtime-prebuilt` target from an existing tablestone_*.deb (what CI does:
#                   scripts/test.sh stage `image` packs the binary it has just built with CPack)
#
# Environment:
#   CONTAINER_CLI            docker or podman (default: docker if its daemon answers, else podman)
#   TABLESTONE_IMAGE_TAG     image name (default tablestone:test-image)
#   TABLESTONE_IMAGE_PORT    port the container listens on (default: a free port)
#   TABLESTONE_IMAGE_NET     host (default: --network host, the server listens on the port itself)
#                            or publish (-p 127.0.0.1:PORT:10002; for Docker Desktop)
#   TABLESTONE_IMAGE_JOBS    compile jobs inside the image build (default 2)
#   TABLESTONE_IMAGE_KEEP=1  keep the image afterwards
#   TABLESTONE_IMAGE_SUITES  e2e suites to run: "python js" (default), or "" for none
#   TABLESTONE_IMAGE_DROPIN=0  skip the drop-in checks for Azurite's harnesses (docker/test-dropin.sh)
# With podman, the sandbox setup script ../shared/tools/container-env.sh (beside the repository) is
# sourced when present: it installs and configures Podman and provides a local debian:bookworm-slim.
#
# Output: one line per check, then "image-test: N passed, N failed" (e2e tests count one each).
set -uo pipefail

ROOT="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel 2>/dev/null ||
        (cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd))"
cd "$ROOT"
PY=/usr/bin/python3  # Debian's interpreter, which has azure.data.tables
KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

prebuilt=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prebuilt) prebuilt="${2:?--prebuilt needs a .deb}"; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "test-image.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

log() { echo "[image-test] $*"; }
PASSED=0 FAILED=0
pass() { PASSED=$((PASSED + 1)); log "PASS $*"; }
fail() { FAILED=$((FAILED + 1)); log "FAIL $*"; }
finish() { echo "image-test: $PASSED passed, $FAILED failed"; exit $(( FAILED > 0 ? 1 : 0 )); }

# ---- container engine -----------------------------------------------------------------------------
CLI="${CONTAINER_CLI:-}"
if [[ -z "$CLI" ]]; then
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then CLI=docker; else CLI=podman; fi
fi
# Beside the checkout; a clone elsewhere (a CI scratch directory) falls back to
# the workspace's copy, or TABLESTONE_CONTAINER_ENV names it.
ENV_SH="${TABLESTONE_CONTAINER_ENV:-$ROOT/../shared/tools/container-env.sh}"
[[ -f "$ENV_SH" ]] || ENV_SH=/work/shared/tools/container-env.sh
if [[ "$(basename "$CLI")" == podman && -z "${CONTAINERS_CONF:-}" && -f "$ENV_SH" ]]; then
  log "setting up podman with $ENV_SH"
  env_out="$(sh "$ENV_SH")" || { fail "container-env.sh failed"; finish; }
  eval "$env_out"
fi
if ! command -v "$CLI" >/dev/null 2>&1; then fail "no container CLI '$CLI'"; finish; fi
IS_PODMAN=0; [[ "$(basename "$CLI")" == podman ]] && IS_PODMAN=1

TAG="${TABLESTONE_IMAGE_TAG:-tablestone:test-image}"
NET="${TABLESTONE_IMAGE_NET:-host}"
PORT="${TABLESTONE_IMAGE_PORT:-$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}"
RUN_ID="$$-$RANDOM"
VOLUME="tablestone-test-$RUN_ID"
NAME="tablestone-test-$RUN_ID"
WORK="$(mktemp -d /tmp/tablestone-image-test.XXXXXX)"

# The drop-in checks for Azurite's harnesses (issue 33): dropin_checks, dropin_cleanup.
source "$ROOT/docker/test-dropin.sh"

cleanup() {
  dropin_cleanup
  "$CLI" rm -f "$NAME" >/dev/null 2>&1
  "$CLI" volume rm -f "$VOLUME" >/dev/null 2>&1
  [[ "${TABLESTONE_IMAGE_KEEP:-0}" == 1 ]] || "$CLI" rmi -f "$TAG" >/dev/null 2>&1
  [[ -n "$prebuilt" ]] && rm -rf "$ROOT/docker/dist"
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'log interrupted; exit 130' INT TERM

# ---- build ----------------------------------------------------------------------------------------
build_args=(build -f docker/Dockerfile -t "$TAG" --build-arg "TABLESTONE_JOBS=${TABLESTONE_IMAGE_JOBS:-2}")
# Podman's default OCI image format has no HEALTHCHECK; the Docker format keeps it.
(( IS_PODMAN )) && build_args+=(--format docker)
if [[ -n "$prebuilt" ]]; then
  [[ -f "$prebuilt" ]] || { fail "no such package: $prebuilt"; finish; }
  cp "$prebuilt" "$WORK/" && rm -rf docker/dist && mkdir -p docker/dist && cp "$WORK/$(basename "$prebuilt")" docker/dist/
  build_args+=(--target runtime-prebuilt)
  log "building $TAG from $(basename "$prebuilt") with $CLI"
else
  build_args+=(--target runtime)
  log "building $TAG from source with $CLI (full compile)"
fi
t0=$SECONDS
if "$CLI" "${build_args[@]}" . >"$WORK/build.log" 2>&1; then
  pass "image build ($((SECONDS - t0))s)"
else
  tail -40 "$WORK/build.log"; fail "image build"; finish
fi
size="$("$CLI" image inspect --format '{{.Size}}' "$TAG" 2>/dev/null || echo 0)"
log "image size: $((size / 1024 / 1024)) MiB ($size bytes)"

# ---- helpers --------------------------------------------------------------------------------------
# Podman without systemd prints errors about timers for the HEALTHCHECK; they are harmless (the
# probe is run explicitly below), so run's stderr goes to a log shown only on failure.
start_container() {
  local rc
  if [[ "$NET" == publish ]]; then
    "$CLI" run -d --name "$NAME" -p "127.0.0.1:$PORT:10002" -v "$VOLUME:/data" "$TAG" >/dev/null 2>"$WORK/run.err"
  else
    "$CLI" run -d --name "$NAME" --network host -v "$VOLUME:/data" "$TAG" --tablePort "$PORT" \
      >/dev/null 2>"$WORK/run.err"
  fi
  rc=$?
  (( rc == 0 )) || cat "$WORK/run.err"
  return $rc
}

# Waits until GET /_tablestone/health answers 200 from the host.
wait_healthy() {
  local deadline=$((SECONDS + ${1:-60}))
  while (( SECONDS < deadline )); do
    if "$PY" - "$PORT" <<'EOF' 2>/dev/null; then return 0; fi
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=2)
c.request("GET", "/_tablestone/health")
sys.exit(0 if c.getresponse().status == 200 else 1)
EOF
    [[ "$("$CLI" inspect --format '{{.State.Running}}' "$NAME" 2>/dev/null)" == true ]] || return 1
    sleep 0.5
  done
  return 1
}

CONN="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$KEY;TableEndpoint=http://127.0.0.1:$PORT/devstoreaccount1;"

# Writes (mode=write) or checks (mode=check) the persistence sample through the Python SDK.
persistence() {
  "$PY" - "$CONN" "$1" <<'EOF'
import datetime, sys, uuid
from azure.data.tables import TableServiceClient, EdmType, EntityProperty
conn, mode = sys.argv[1], sys.argv[2]
table = TableServiceClient.from_connection_string(conn).get_table_client("imagepersistence")
expected = {
    "PartitionKey": "p'1", "RowKey": "r ü'1",
    "Text": "survives a restart", "Count": 42, "Big": EntityProperty(2**40, EdmType.INT64),
    "Ratio": 0.25, "Flag": True, "When": datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc),
    "Id": uuid.UUID("01234567-89ab-cdef-0123-456789abcdef"), "Blob": b"\x00\x01\xfe",
}
if mode == "write":
    table.create_table()
    table.create_entity(expected)
    for i in range(200):
        table.upsert_entity({"PartitionKey": "bulk", "RowKey": "%04d" % i, "N": i})
    sys.exit(0)
got = table.get_entity("p'1", "r ü'1")
problems = []
for k, v in expected.items():
    want = v.value if isinstance(v, EntityProperty) else v
    have = got.get(k)
    have = have.value if isinstance(have, EntityProperty) else have
    if k == "When":
        have = have.replace(tzinfo=datetime.timezone.utc) if have.tzinfo is None else have
    if have != want:
        problems.append("%s: %r != %r" % (k, have, want))
rows = [e["N"] for e in table.query_entities("PartitionKey eq 'bulk'")]
if rows != list(range(200)):
    problems.append("bulk partition has %d rows" % len(rows))
if problems:
    print("\n".join(problems)); sys.exit(1)
EOF
}

# ---- run and inspect ------------------------------------------------------------------------------
"$CLI" volume create "$VOLUME" >/dev/null || { fail "volume create"; finish; }
if ! start_container; then fail "container start"; finish; fi
if wait_healthy 60; then pass "health route answers on 127.0.0.1:$PORT"; else
  "$CLI" logs "$NAME" 2>&1 | tail -30; fail "health route"; finish
fi

if (( IS_PODMAN )); then
  if "$CLI" healthcheck run "$NAME" >/dev/null 2>&1; then pass "HEALTHCHECK probe (podman healthcheck run)"
  else fail "HEALTHCHECK probe"; fi
else
  status=""
  for _ in $(seq 1 60); do
    status="$("$CLI" inspect --format '{{.State.Health.Status}}' "$NAME" 2>/dev/null)"
    [[ "$status" == healthy ]] && break; sleep 1
  done
  if [[ "$status" == healthy ]]; then pass "HEALTHCHECK status healthy"; else fail "HEALTHCHECK status '$status'"; fi
fi

# The image starts as root (as Azurite's does) and its entrypoint drops to uid 10002 before the server
# runs (docker/entrypoint.sh): the server's own real, effective, saved and file-system uids are 10002.
uid="$("$CLI" exec "$NAME" sed -n 's/^Uid:[[:space:]]*//p' /proc/1/status 2>/dev/null | tr -s '[:space:]' ' ')"
if [[ "$uid" == "10002 10002 10002 10002 " ]]; then pass "server (PID 1) runs as uid 10002 after a root start"
else fail "server runs as uid '$uid'"; fi
pid1="$("$CLI" exec "$NAME" cat /proc/1/cmdline 2>/dev/null | tr '\0' ' ')"
if [[ "$pid1" == /usr/bin/tablestone* ]]; then pass "tablestone is PID 1 ($pid1)"; else fail "PID 1 is '$pid1'"; fi
ldd_out="$("$CLI" exec "$NAME" ldd /usr/bin/tablestone 2>&1)"
if grep -q 'libc.so.6 =>' <<<"$ldd_out" && ! grep -q 'not found' <<<"$ldd_out"; then
  pass "no missing shared libraries"
else echo "$ldd_out"; fail "shared libraries missing (or ldd failed)"; fi
if "$CLI" exec "$NAME" sh -c '! command -v c++ && ! command -v cmake && ! command -v curl' >/dev/null 2>&1; then
  pass "no compiler, cmake or curl in the runtime image"
else fail "build tools found in the runtime image"; fi

# ---- SDK end-to-end suites against the container --------------------------------------------------
export TABLESTONE_E2E_CONNECTION_STRING="$CONN"
for suite in ${TABLESTONE_IMAGE_SUITES-python js}; do
  case "$suite" in
    python)
      xml="$WORK/pytest.xml"
      timeout 900 "$PY" -m pytest -q -p no:cacheprovider --junitxml="$xml" "$ROOT/tests/e2e/python" \
        >"$WORK/pytest.log" 2>&1
      rc=$?
      tail -5 "$WORK/pytest.log"
      if [[ -f "$xml" ]]; then
        read -r p f s < <("$PY" - "$xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
t = f = s = 0
for su in suites:
    t += int(su.get("tests", 0)); s += int(su.get("skipped", 0))
    f += int(su.get("failures", 0)) + int(su.get("errors", 0))
print(t - f - s, f, s)
EOF
)
        PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
        log "python e2e against the image: $p passed, $f failed, $s skipped (exit $rc)"
        (( rc != 0 && f == 0 )) && fail "pytest exited with $rc"
      else
        fail "pytest produced no report (exit $rc)"
      fi
      ;;
    js)
      timeout 900 node "$ROOT/tests/e2e/js/run.js" >"$WORK/js.log" 2>&1
      rc=$?
      line="$(grep -E '^js-e2e: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$WORK/js.log" | tail -1)"
      if [[ -n "$line" ]]; then
        read -r p f s < <(sed -E 's/^js-e2e: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$line")
        PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
        log "js e2e against the image: $p passed, $f failed, $s skipped (exit $rc)"
        (( f > 0 )) && grep -E 'FAIL|not ok|✗' "$WORK/js.log" | head -20
        (( rc != 0 && f == 0 )) && fail "node runner exited with $rc"
      else
        tail -20 "$WORK/js.log"; fail "js runner produced no summary (exit $rc)"
      fi
      ;;
    *) fail "unknown suite '$suite'" ;;
  esac
done

# ---- persistence across stop/start on the same volume ---------------------------------------------
if persistence write; then pass "wrote persistence sample"; else fail "write persistence sample"; fi
t0=$SECONDS
"$CLI" stop -t 30 "$NAME" >/dev/null 2>&1
code="$("$CLI" inspect --format '{{.State.ExitCode}}' "$NAME" 2>/dev/null)"
# The log is read whole first: with pipefail, `logs | grep -q` fails whenever grep exits at its match
# before the CLI has written everything (SIGPIPE), which made this check flaky. A few tries in case
# the log reaches the CLI late.
for _ in 1 2 3 4 5; do
  stop_log="$("$CLI" logs "$NAME" 2>&1)"
  grep -q 'received SIGTERM' <<<"$stop_log" && break
  sleep 0.5
done
if [[ "$code" == 0 ]] && grep -q 'received SIGTERM' <<<"$stop_log"; then
  pass "docker stop: SIGTERM, clean exit 0 in $((SECONDS - t0))s"
else
  "$CLI" logs "$NAME" 2>&1 | tail -10; fail "stop: exit code '$code'"
fi
"$CLI" rm -f "$NAME" >/dev/null 2>&1
if start_container && wait_healthy 60; then pass "restarted on the same volume"; else
  "$CLI" logs "$NAME" 2>&1 | tail -30; fail "restart"; finish
fi
if persistence check; then pass "data written before stop is there after restart"; else fail "data after restart"; fi
"$CLI" stop -t 30 "$NAME" >/dev/null 2>&1

[[ "${TABLESTONE_IMAGE_DROPIN:-1}" == 1 ]] && dropin_checks
finish
