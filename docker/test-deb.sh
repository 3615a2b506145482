#!/usr/bin/env bash
# Builds the Debian package with CPack and proves it:
#   1. inspection: package name/version/arch, the runtime Depends, the file list (bin/tablestone and the
#      default config under /usr/share/tablestone), and that every shared library the binary needs is
#      owned by an installed package named in Depends (ldd + dpkg -S);
#   2. `dpkg -x` into a scratch directory: the extracted binary prints its version, serves
#      GET /_tablestone/health on a free port with the shipped default config, and exits 0 on SIGTERM;
#   3. optional (TABLESTONE_DEB_CONTAINER=1): `apt-get install ./tablestone_*.deb` in a bare
#      debian:bookworm-slim container, then the installed /usr/bin/tablestone serves the health route.
#      (docker/test-image.sh --prebuilt does the same install as part of the image build.)
#
# Usage: bash docker/test-deb.sh [BUILD_DIR]
#   BUILD_DIR  an already configured and built tree (default: build/, built with scripts/build.sh)
# Environment: CONTAINER_CLI (see test-image.sh), TABLESTONE_DEB_OUT (where the .deb goes; default a
#   temporary directory, removed at the end unless set)
# Output: one line per check, then "deb-test: N passed, N failed".
set -uo pipefail

ROOT="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel 2>/dev/null ||
        (cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd))"
cd "$ROOT"
PY=/usr/bin/python3
BUILD_DIR="${1:-$ROOT/build}"

log() { echo "[deb-test] $*"; }
PASSED=0 FAILED=0
pass() { PASSED=$((PASSED + 1)); log "PASS $*"; }
fail() { FAILED=$((FAILED + 1)); log "FAIL $*"; }
finish() { echo "deb-test: $PASSED passed, $FAILED failed"; exit $(( FAILED > 0 ? 1 : 0 )); }

WORK="$(mktemp -d /tmp/tablestone-deb-test.XXXXXX)"
OUT="${TABLESTONE_DEB_OUT:-$WORK/out}"
SERVER_PID=""
CONTAINER=""
cleanup() {
  [[ -n "$SERVER_PID" ]] && kill -KILL "$SERVER_PID" 2>/dev/null
  [[ -n "$CONTAINER" ]] && "$CLI" rm -f "$CONTAINER" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
health() {  # health PORT -> 0 when GET /_tablestone/health is 200
  "$PY" - "$1" <<'EOF' 2>/dev/null
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=2)
c.request("GET", "/_tablestone/health")
sys.exit(0 if c.getresponse().status == 200 else 1)
EOF
}

# ---- build the package ----------------------------------------------------------------------------
if [[ ! -f "$BUILD_DIR/CPackConfig.cmake" ]]; then
  log "configuring and building $BUILD_DIR"
  TABLESTONE_TARGETS=tablestone bash scripts/build.sh Release "$BUILD_DIR" -- \
    -DTABLESTONE_BUILD_TESTS=OFF -DTABLESTONE_BUILD_BENCH=OFF || { fail "build"; finish; }
fi
mkdir -p "$OUT"
if (cd "$BUILD_DIR" && cpack -G DEB -B "$OUT") >"$WORK/cpack.log" 2>&1; then
  rm -rf "$OUT/_CPack_Packages"
  DEB="$(ls "$OUT"/tablestone_*.deb | head -1)"
  pass "cpack -G DEB -> $(basename "$DEB") ($(du -k "$DEB" | cut -f1) KiB)"
else
  cat "$WORK/cpack.log"; fail "cpack"; finish
fi

# ---- 1. inspection --------------------------------------------------------------------------------
dpkg-deb -I "$DEB" | sed 's/^/    /'
depends="$(dpkg-deb -f "$DEB" Depends)"
[[ "$(dpkg-deb -f "$DEB" Package)" == tablestone ]] && pass "Package: tablestone" || fail "package name"
contents="$(dpkg-deb -c "$DEB" | awk '{print $6}')"
for f in ./usr/bin/tablestone ./usr/share/tablestone/tablestone.json ./usr/share/tablestone/tablestone.schema.json; do
  grep -qx "$f" <<<"$contents" && pass "contains $f" || fail "missing $f"
done
if grep -qE '^\./(usr/)?etc/|^\./usr/local/' <<<"$contents"; then fail "files outside /usr/{bin,share}"; else
  pass "no files in /etc, /usr/etc or /usr/local"; fi

dpkg -x "$DEB" "$WORK/root"
BIN="$WORK/root/usr/bin/tablestone"
if file "$BIN" 2>/dev/null | grep -q 'not stripped'; then fail "binary not stripped"; else pass "binary is stripped"; fi
# Every shared library must come from a package the Depends line names.
ldd_out="$(ldd "$BIN")"
if grep -q 'not found' <<<"$ldd_out"; then fail "unresolved libraries: $(grep 'not found' <<<"$ldd_out")"; fi
uncovered=()
# Depends as bare package names: "libc6 (>= 2.34), a | b" -> libc6 a b
read -r -a dep_names <<<"$(sed -E 's/\([^)]*\)//g; s/[,|]/ /g' <<<"$depends")"
for lib in $(awk '/=>/ {print $3}' <<<"$ldd_out"); do
  pkg="$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -1 | cut -d: -f1)"
  [[ -z "$pkg" ]] && pkg="$(dpkg -S "$lib" 2>/dev/null | head -1 | cut -d: -f1)"
  # The package itself or a virtual package it provides (libspdlog1.10 provides libspdlog1.10-fmt9).
  names=" $pkg $(dpkg-query -W -f='${Provides}' "$pkg" 2>/dev/null | sed -E 's/\([^)]*\)//g; s/,/ /g') "
  covered=0
  for dep in "${dep_names[@]}"; do [[ "$names" == *" $dep "* ]] && covered=1; done
  (( covered )) || uncovered+=("$lib (${pkg:-no package})")
done
# The allocator is part of the product's speed (CMakeLists.txt, TABLESTONE_MALLOC): the packaged binary
# must use jemalloc, not silently fall back to glibc's malloc.
if grep -q 'libjemalloc' <<<"$ldd_out"; then pass "linked with jemalloc"; else fail "not linked with jemalloc: $ldd_out"; fi
if (( ${#uncovered[@]} == 0 )); then pass "every linked library is covered by Depends: $depends"
else fail "libraries not covered by Depends: ${uncovered[*]}"; fi

# ---- 2. run the extracted binary ------------------------------------------------------------------
if "$BIN" --version | grep -q '^tablestone '; then pass "tablestone --version: $("$BIN" --version)"; else fail "--version"; fi
PORT="$(free_port)"
"$BIN" --config "$WORK/root/usr/share/tablestone/tablestone.json" --tablePort "$PORT" -l "$WORK/data" -s \
  >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
ok=0
for _ in $(seq 1 120); do
  if health "$PORT"; then ok=1; break; fi
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.25
done
if (( ok )); then pass "extracted binary serves GET /_tablestone/health on 127.0.0.1:$PORT (shipped config)"
else cat "$WORK/server.log"; fail "health route of the extracted binary"; fi
kill -TERM "$SERVER_PID" 2>/dev/null
wait "$SERVER_PID"; rc=$?; SERVER_PID=""
(( rc == 0 )) && pass "SIGTERM -> exit 0" || fail "SIGTERM -> exit $rc"

# ---- 3. apt install in a bare container -----------------------------------------------------------
if [[ "${TABLESTONE_DEB_CONTAINER:-0}" == 1 ]]; then
  CLI="${CONTAINER_CLI:-}"
  if [[ -z "$CLI" ]]; then
    if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then CLI=docker; else CLI=podman; fi
  fi
  ENV_SH="${TABLESTONE_CONTAINER_ENV:-$ROOT/../shared/tools/container-env.sh}"
  [[ -f "$ENV_SH" ]] || ENV_SH=/work/shared/tools/container-env.sh
  if [[ "$(basename "$CLI")" == podman && -z "${CONTAINERS_CONF:-}" && -f "$ENV_SH" ]]; then
    eval "$(sh "$ENV_SH")"
  fi
  PORT="$(free_port)"
  CONTAINER="tablestone-deb-test-$$"
  if "$CLI" run -d --name "$CONTAINER" --network host -v "$OUT:/deb:ro" debian:bookworm-slim bash -c "
      set -e
      apt-get update -q >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /deb/$(basename "$DEB") >/tmp/apt.log
      echo installed
      exec tablestone --config /usr/share/tablestone/tablestone.json --tablePort $PORT -l /tmp/data -s" >/dev/null; then
    ok=0
    for _ in $(seq 1 600); do
      if health "$PORT"; then ok=1; break; fi
      [[ "$("$CLI" inspect --format '{{.State.Running}}' "$CONTAINER")" == true ]] || break
      sleep 0.5
    done
    if (( ok )); then pass "apt-get install ./$(basename "$DEB") on bare bookworm; /usr/bin/tablestone serves health"
    else "$CLI" logs "$CONTAINER" 2>&1 | tail -30; fail "apt install + run in a container"; fi
    "$CLI" stop -t 20 "$CONTAINER" >/dev/null 2>&1
    code="$("$CLI" inspect --format '{{.State.ExitCode}}' "$CONTAINER")"
    [[ "$code" == 0 ]] && pass "installed server: SIGTERM -> exit 0" || fail "installed server exit code $code"
  else
    fail "could not start a $CLI container"
  fi
fi

finish
