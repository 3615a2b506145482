#!/usr/bin/env bash
# README command 2: install dependencies, build, and run every test stage; print a summary and
# finish with the plain line "N passed, N failed". Exits non-zero if anything failed.
#
# Stages are shell functions named stage_<name> (dashes in the name become underscores) and run in
# the order of DEFAULT_STAGES. To add a stage: write stage_<name>, make it call `record PASSED FAILED`
# (or `record_failure "why"`), return non-zero on failure, and append its name to DEFAULT_STAGES.
#
# Environment:
#   TABLESTONE_TEST_STAGES   space/comma-separated stage list (default: all of DEFAULT_STAGES)
#   TABLESTONE_TEST_BUILD    build type for the test build (default RelWithDebInfo)
#   TABLESTONE_TEST_BUILD_DIR  build directory (default build-test/)
#   TABLESTONE_E2E_CONNECTION_STRING  run the e2e suites against that endpoint instead of a fresh server
#   TABLESTONE_BIN           run the e2e suites against this binary instead of building one
#   TABLESTONE_E2E_TARGET    "azurite" to skip tests of behaviour Azurite is known to get wrong
#   TABLESTONE_SKIP_DEPS=1   do not run scripts/install-deps.sh
#   TABLESTONE_UI_SHOTS      where the ui stage saves its screenshots (default: the work dir)
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

DEFAULT_STAGES=(headers unit e2e-python e2e-js e2e-legacy e2e-atom e2e-dotnet e2e-localhost ui image reliability fuzz asan)

USER_BIN="${TABLESTONE_BIN:-}"  # e2e against an existing binary (skips the build for those stages)
BUILD_TYPE="${TABLESTONE_TEST_BUILD:-RelWithDebInfo}"
BUILD_DIR="${TABLESTONE_TEST_BUILD_DIR:-$ROOT/build-test}"
SERVER_BIN="$BUILD_DIR/server/app/tablestone"
PY=/usr/bin/python3  # Debian's interpreter: it has azure.data.tables (a pyenv python3 may not)

WORK="$(mktemp -d /tmp/tablestone-test.XXXXXX)"
# The e2e harnesses write the pid of every server they start here, so a trap can stop leftovers.
export TABLESTONE_E2E_PIDDIR="$WORK/pids"
mkdir -p "$TABLESTONE_E2E_PIDDIR"

cleanup() {
  local f pid
  for f in "$TABLESTONE_E2E_PIDDIR"/*.pid; do
    [[ -f "$f" ]] || continue
    pid="$(cat "$f" 2>/dev/null || true)"
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
      echo "[test] stopping leftover server pid $pid" >&2
      kill -TERM "$pid" 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "[test] interrupted"; exit 130' INT TERM

# ---- bookkeeping ---------------------------------------------------------------------------------
TOTAL_PASSED=0
TOTAL_FAILED=0
SUMMARY=()
CUR_PASSED=0
CUR_FAILED=0
CUR_NOTE=""

record() { CUR_PASSED=$((CUR_PASSED + $1)); CUR_FAILED=$((CUR_FAILED + $2)); }
record_failure() { CUR_FAILED=$((CUR_FAILED + 1)); CUR_NOTE="$*"; echo "[test] FAILURE: $*"; }
note() { CUR_NOTE="$*"; }
# Names of failed tests, printed again after the summary: CI keeps only the tail of a run's output,
# and a failure must be identifiable from it.
FAILED_NAMES=()
failed_names() {  # failed_names PREFIX < NAMES: one failed test a line
  local name
  while IFS= read -r name; do [[ -n "$name" ]] && FAILED_NAMES+=("$1: $name"); done
}
tap_failed_names() {  # tap_failed_names LOG PREFIX: the TAP "not ok" tests in LOG (node --test)
  failed_names "$2" < <(sed -nE 's/^[[:space:]]*not ok [0-9]+ - (.*)$/\1/p' "$1")
}
ctest_failed_names() {  # ctest_failed_names LOG PREFIX: the tests ctest lists as FAILED in LOG
  failed_names "$2" < <(sed -n '/^The following tests FAILED:/,/^[^[:space:]]/s/^[[:space:]]\+[0-9]\+ - //p' "$1")
}

# ---- shared helpers ------------------------------------------------------------------------------
BUILD_DONE=""
# Builds the test configuration once; later calls return the first result.
ensure_build() {
  if [[ -z "$BUILD_DONE" ]]; then
    # The RelWithDebInfo test build is CMakePresets.json's `relwithdebinfo` (-O2 -g1: line tables are
    # enough for a backtrace with file and line, and compile faster than full -g); another build
    # type goes through scripts/build.sh.
    local ok=0
    if [[ "$BUILD_TYPE" == RelWithDebInfo ]]; then
      echo "[build] preset relwithdebinfo in $BUILD_DIR"
      timeout 1800 bash -c 'cmake --preset relwithdebinfo -B "$1" >/dev/null &&
        cmake --build "$1" --parallel "$2"' _ "$BUILD_DIR" "${TABLESTONE_JOBS:-$(nproc)}" && ok=1
    else
      timeout 1800 bash "$ROOT/scripts/build.sh" "$BUILD_TYPE" "$BUILD_DIR" && ok=1
    fi
    if (( ok == 1 )); then
      BUILD_DONE=ok
    else
      BUILD_DONE=failed
    fi
  fi
  [[ "$BUILD_DONE" == ok ]]
}

# Makes sure an e2e stage has a target: an external endpoint, a binary given in TABLESTONE_BIN,
# or the freshly built server binary.
ensure_e2e_target() {
  if [[ -n "${TABLESTONE_E2E_CONNECTION_STRING:-}" ]]; then
    return 0
  fi
  if [[ -n "${USER_BIN:-}" ]]; then
    [[ -x "$USER_BIN" ]] && return 0
    record_failure "TABLESTONE_BIN is not executable: $USER_BIN"; return 1
  fi
  if ! ensure_build; then record_failure "build failed"; return 1; fi
  if [[ ! -x "$SERVER_BIN" ]]; then record_failure "server binary missing: $SERVER_BIN"; return 1; fi
  export TABLESTONE_BIN="$SERVER_BIN"
}

# ---- stages --------------------------------------------------------------------------------------
# headers: no include reaches up a floor (scripts/check-layers.sh, and its test
# tests/scripts/check_layers_test.sh), and every header of protocol/, storage/ and server/ compiles on
# its own (scripts/check-headers.sh); about a minute on 2 cores, no build needed.
stage_headers() {
  local log="$WORK/headers.log" rc=0 layers=0
  if bash "$ROOT/scripts/check-layers.sh"; then
    record 1 0
  else
    record_failure "an include reaches up a floor (scripts/check-layers.sh)"; layers=1
  fi
  if bash "$ROOT/tests/scripts/check_layers_test.sh"; then
    record 1 0
  else
    record_failure "tests/scripts/check_layers_test.sh failed"; layers=1
  fi
  TABLESTONE_JOBS="${TABLESTONE_JOBS:-$(nproc)}" timeout 600 bash "$ROOT/scripts/check-headers.sh" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  local line total bad
  line="$(grep -E '^\[headers\] [0-9]+ headers, [0-9]+ not self-contained' "$log" | tail -1)"
  if [[ -n "$line" ]]; then
    total="$(sed -E 's/^\[headers\] ([0-9]+) headers, ([0-9]+) .*/\1/' <<<"$line")"
    bad="$(sed -E 's/^\[headers\] ([0-9]+) headers, ([0-9]+) .*/\2/' <<<"$line")"
    record $((total - bad)) "$bad"
  elif (( rc != 0 )); then
    record_failure "check-headers.sh exited with $rc"
  fi
  (( rc == 0 && layers == 0 ))
}

stage_unit() {
  if ! ensure_build; then record_failure "build failed"; return 1; fi
  local log="$WORK/ctest.log" rc=0
  (cd "$BUILD_DIR" && timeout 900 ctest --output-on-failure --timeout 300 -j2) 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  local line total failed
  line="$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)"
  if [[ -n "$line" ]]; then
    failed="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")"
    total="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")"
    record $((total - failed)) "$failed"
    ctest_failed_names "$log" unit
  elif grep -q 'No tests were found' "$log"; then
    note "no unit tests registered"
  elif (( rc != 0 )); then
    record_failure "ctest exited with $rc"
  fi
  (( rc == 0 ))
}

# run_pytest NAME TIMEOUT PATHS...: runs pytest with a JUnit report, records its counts, returns pytest's rc.
run_pytest() {
  local name="$1" limit="$2"; shift 2
  local xml="$WORK/$name.xml" rc=0
  timeout "$limit" "$PY" -m pytest -q -p no:cacheprovider --junitxml="$xml" "$@"
  rc=$?
  if [[ -f "$xml" ]]; then
    # One pass over the report: the counts on the first line, then the failed tests' names.
    local report p f s
    report="$("$PY" - "$xml" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
t = f = e = s = 0
for su in suites:
    t += int(su.get("tests", 0)); f += int(su.get("failures", 0))
    e += int(su.get("errors", 0)); s += int(su.get("skipped", 0))
print(t - f - e - s, f + e, s)
for case in root.iter("testcase"):
    if case.find("failure") is not None or case.find("error") is not None:
        print(f"{case.get('classname', '')}::{case.get('name', '')}")
PYEOF
)"
    read -r p f s <<<"${report%%$'\n'*}"
    record "$p" "$f"
    failed_names "$name" < <(tail -n +2 <<<"$report")
    (( s > 0 )) && note "$name: $s skipped"
  else
    record_failure "$name: pytest produced no report (exit $rc)"
  fi
  return $rc
}

stage_e2e_python() {
  ensure_e2e_target || return 1
  # Every managed server of the suite writes the request trace (--trace) into this directory;
  # check_trace.py then checks the lines (fields, JSON, no key or SAS signature).
  local trace_dir="$WORK/e2e-python-trace" rc=0
  mkdir -p "$trace_dir"
  TABLESTONE_E2E_TRACE_DIR="$trace_dir" run_pytest e2e-python 900 "$ROOT/tests/e2e/python" || rc=$?
  if [[ -z "${TABLESTONE_E2E_CONNECTION_STRING:-}" ]]; then
    if "$PY" "$ROOT/tests/e2e/python/check_trace.py" "$trace_dir"; then
      record 1 0
    else
      record_failure "e2e-python: request trace check failed (tests/e2e/python/check_trace.py)"
      rc=1
    fi
  fi
  return $rc
}

# run_node_suite LABEL [run.js args...]: runs tests/e2e/js/run.js (node:test files one by one) and
# records the counts of its closing line "LABEL: N passed, N failed, N skipped".
run_node_suite() {
  local label="$1"; shift
  local log="$WORK/$label.log" rc=0
  timeout 900 node "$ROOT/tests/e2e/js/run.js" "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  local line
  line="$(grep -E "^$label: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped" "$log" | tail -1)"
  if [[ -n "$line" ]]; then
    local p f s
    read -r p f s < <(sed -E 's/^[a-z0-9-]+: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$line")
    record "$p" "$f"
    tap_failed_names "$log" "$label"
    (( s > 0 )) && note "$s skipped"
    (( rc != 0 && f == 0 )) && record_failure "node runner exited with $rc"
  else
    record_failure "node runner produced no summary (exit $rc)"
  fi
  (( rc == 0 ))
}

stage_e2e_js() {
  ensure_e2e_target || return 1
  run_node_suite js-e2e
}

# e2e-legacy: the legacy Node SDK azure-storage 2.10 (TableService, callbacks) in tests/e2e/legacy;
# about 10 s.
stage_e2e_legacy() {
  ensure_e2e_target || return 1
  [[ -d "$ROOT/tests/e2e/legacy/node_modules/azure-storage" ]] ||
    { record_failure "tests/e2e/legacy/node_modules missing (scripts/install-deps.sh)"; return 1; }
  run_node_suite legacy-e2e --suite "$ROOT/tests/e2e/legacy"
}

# The AtomPub client of the seed era (tests/e2e/atom: azure-storage-legacy, docs/compatibility-notes/atom.md);
# its server comes from the JS suite's harness. About 2 s.
stage_e2e_atom() {
  if [[ "${TABLESTONE_E2E_TARGET:-}" == "azurite" ]]; then note "skipped: Azurite answers Atom with 415"; return 0; fi
  ensure_e2e_target || return 1
  local log="$WORK/atom.log" rc=0
  timeout 300 node --test --test-reporter=tap "$ROOT/tests/e2e/atom/test/" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  local p f
  p="$(sed -nE 's/^# pass ([0-9]+)$/\1/p' "$log" | tail -1)"
  f="$(sed -nE 's/^# fail ([0-9]+)$/\1/p' "$log" | tail -1)"
  if [[ -n "$p" && -n "$f" ]]; then
    record "$p" "$f"
    tap_failed_names "$log" atom
    (( rc != 0 && f == 0 )) && record_failure "node --test exited with $rc"
  else
    record_failure "node --test produced no summary (exit $rc)"
  fi
  (( rc == 0 ))
}

# e2e-localhost (issue 33): the four SDK suites once more, each server addressed as
# http://localhost:<free port>, the shape of every port a container harness (Testcontainers, Aspire)
# maps. The SDKs then take their Cosmos DB path: azure-data-tables (Python) for localhost on any port
# but 10002, @azure/data-tables (JS) for localhost with an account other than devstoreaccount1 (the
# JS harness adds one): PATCH goes out as POST + X-HTTP-Method: MERGE, in batches too. The legacy
# client has no such path; it runs so that it meets the localhost name too. The Atom-era client
# (tests/e2e/atom) is not run: its own URI check refuses "http://localhost:<port>/" ("The provided URI
# ... is invalid") before sending anything, so it cannot be pointed at localhost at all.
# TABLESTONE_E2E_LOCALHOST=1 is read by the three harnesses (tests/e2e/{python,js,legacy}).
# Python runs only the files whose requests go through the SDK's table and entity paths (the ones
# its Cosmos DB path changes); the data tools, faults, trace, metrics, HTTPS and OAuth files speak
# the same bytes whatever the host name and already ran in e2e-python.
LOCALHOST_PYTHON_FILES=(test_entities.py test_batch.py test_batch_more.py test_etag.py test_queries.py
  test_tables.py test_types.py test_service.py test_limits.py test_auth.py)
stage_e2e_localhost() {
  if [[ -n "${TABLESTONE_E2E_CONNECTION_STRING:-}" ]]; then note "skipped: needs a tablestone binary"; return 0; fi
  ensure_e2e_target || return 1
  local rc=0 files=() f
  for f in "${LOCALHOST_PYTHON_FILES[@]}"; do files+=("$ROOT/tests/e2e/python/$f"); done
  export TABLESTONE_E2E_LOCALHOST=1
  run_pytest e2e-localhost-python 900 "${files[@]}" || rc=1
  run_node_suite js-e2e || rc=1
  run_node_suite legacy-e2e --suite "$ROOT/tests/e2e/legacy" || rc=1
  note "atom client not run: it refuses a localhost URI itself"
  unset TABLESTONE_E2E_LOCALHOST
  return $rc
}

# ---- e2e-dotnet (issue 34) ----
# The .NET suites: tests/e2e/dotnet/Tables (Azure.Data.Tables 12.13.0), tests/e2e/dotnet/Legacy
# (WindowsAzure.Storage 9.3.3, Microsoft.Azure.Cosmos.Table 1.0.8) and tests/e2e/orleans (an Orleans
# 10.4.2 cluster keeping its membership, grain state and reminders in tablestone). Each project is
# restored (from nuget.org, tests/e2e/*/nuget.config) and built once, then run in two shapes: the
# clients on 127.0.0.1, then on localhost (TABLESTONE_E2E_LOCALHOST=1, as for the other harnesses) on a port other than 10002,
# where the Azure SDK takes the endpoint for a Cosmos DB Table endpoint. Every test starts its own
# servers from TABLESTONE_BIN. No dotnet on the machine: skipped with one line, a failure under CI=true.
# The Cosmos DB flavour's tests (Tables/CosmosTests.cs, Legacy/CosmosListenerTests.cs, docs/cosmos-mode.md)
# run in the localhost shape only.
dotnet_summary() {  # dotnet_summary LOG -> "PASSED FAILED SKIPPED" from VSTest's closing line, or nothing
  sed -nE 's/^.*(Passed|Failed)! +- +Failed: +([0-9]+), +Passed: +([0-9]+), +Skipped: +([0-9]+), +Total.*$/\3 \2 \4/p' "$1" | tail -1
}

stage_e2e_dotnet() {
  if ! command -v dotnet >/dev/null 2>&1; then
    if [[ "${CI:-}" == true ]]; then record_failure "e2e-dotnet: dotnet not found (the .NET 10 SDK is required under CI)"; return 1; fi
    echo "[e2e-dotnet] skipped: dotnet not found (install the .NET 10 SDK to run the .NET suites)"
    note "skipped: dotnet not found"; return 0
  fi
  if [[ -n "${TABLESTONE_E2E_CONNECTION_STRING:-}" ]]; then note "skipped: the .NET suites start their own servers"; return 0; fi
  ensure_e2e_target || return 1
  export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
  local rc=0 proj name shape log counts p f s skipped=0 filter
  local projects=(dotnet/Tables dotnet/Legacy orleans)
  for proj in "${projects[@]}"; do
    name="${proj//\//-}"
    if ! timeout 900 dotnet build "$ROOT/tests/e2e/$proj" -nologo -v:q -clp:ErrorsOnly >"$WORK/$name-build.log" 2>&1; then
      tail -30 "$WORK/$name-build.log"; record_failure "e2e-dotnet: restore/build of tests/e2e/$proj failed"; rc=1; continue
    fi
    for shape in 127.0.0.1 localhost; do
      log="$WORK/$name-$shape.log"
      # The Cosmos flavour's tests ([Trait("Flavour", "Cosmos")]) address their own servers whatever
      # the shape: they run once, with the localhost shape.
      filter=()
      [[ $shape == 127.0.0.1 ]] && filter=(--filter "Flavour!=Cosmos")
      TABLESTONE_E2E_LOCALHOST="$([[ $shape == localhost ]] && echo 1 || echo 0)" timeout 900 dotnet test "$ROOT/tests/e2e/$proj" --no-build -nologo "${filter[@]}" 2>&1 | tee "$log" | grep -E '^\s+(Failed|Skipped) |Passed!|Failed!|error' || true
      counts="$(dotnet_summary "$log")"
      if [[ -z "$counts" ]]; then record_failure "e2e-dotnet: $proj ($shape) produced no summary"; rc=1; continue; fi
      read -r p f s <<<"$counts"
      echo "[e2e-dotnet] $proj on $shape: $p passed, $f failed, $s skipped"
      failed_names "e2e-dotnet $proj ($shape)" < <(sed -nE 's/^\s+Failed ([^ ]+).*$/\1/p' "$log")
      record "$p" "$f"
      skipped=$((skipped + s))
      (( f > 0 )) && rc=1
    done
  done
  (( skipped > 0 )) && note "$skipped skipped"
  return $rc
}

# ui: the data browser's modules under node (tests/unit/server/ui), then the page in headless
# chromium (tests/e2e/ui/run.js, docs/ui.md); about 30 s. The browser test
# starts its own server (it needs the dev key on loopback), so it is skipped against an endpoint.
stage_ui() {
  if [[ -n "${TABLESTONE_E2E_CONNECTION_STRING:-}" ]]; then note "skipped: needs a tablestone binary"; return 0; fi
  ensure_e2e_target || return 1
  [[ -x /usr/bin/chromium ]] || { record_failure "/usr/bin/chromium missing (scripts/install-deps.sh)"; return 1; }
  [[ -d "$ROOT/tests/e2e/ui/node_modules/playwright-core" ]] ||
    { record_failure "tests/e2e/ui/node_modules missing (scripts/install-deps.sh)"; return 1; }
  local log="$WORK/ui.log" rc=0 line p f
  # The page's pure modules first (node:test, TAP summary lines "# pass N" / "# fail N").
  node --test "$ROOT/tests/unit/server/ui/" >"$WORK/ui-unit.log" 2>&1 || rc=$?
  p="$(sed -nE 's/^# pass ([0-9]+)$/\1/p' "$WORK/ui-unit.log")"
  f="$(sed -nE 's/^# fail ([0-9]+)$/\1/p' "$WORK/ui-unit.log")"
  echo "[ui] page modules: ${p:-?} passed, ${f:-?} failed"
  if [[ -z "$p" || -z "$f" ]]; then record_failure "node --test tests/unit/server/ui produced no summary (exit $rc)"
  else record "$p" "$f"; tap_failed_names "$WORK/ui-unit.log" ui-unit; (( rc != 0 )) && grep -E '^not ok' "$WORK/ui-unit.log"; fi
  rc=0
  TABLESTONE_UI_SHOTS="${TABLESTONE_UI_SHOTS:-$WORK/ui-screenshots}" timeout 300 node "$ROOT/tests/e2e/ui/run.js" 2>&1 |
    tee "$log"
  rc=${PIPESTATUS[0]}
  line="$(grep -E '^ui-e2e: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)"
  if [[ -z "$line" ]]; then record_failure "ui runner produced no summary (exit $rc)"; return 1; fi
  read -r p f < <(sed -E 's/^ui-e2e: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' <<<"$line")
  record "$p" "$f"
  (( rc != 0 && f == 0 )) && record_failure "ui runner exited with $rc"
  (( rc == 0 && CUR_FAILED == 0 ))
}

stage_image() {
  # The container image, tested by docker/test-image.sh (owned by packaging). CI does not compile the
  # project a second time inside the image build: it packs the binary built above into the .deb
  # (CPack) and builds the Dockerfile's `runtime-prebuilt` target, which installs that .deb exactly
  # as the default `runtime` target installs the one it compiles with scripts/build.sh.
  if [[ -z "${CONTAINER_CLI:-}" ]] && ! command -v docker >/dev/null 2>&1 && ! command -v podman >/dev/null 2>&1 &&
     [[ ! -f "$ROOT/../shared/tools/container-env.sh" && ! -f /work/shared/tools/container-env.sh ]]; then
    if [[ "${CI:-}" == true ]]; then record_failure "no docker, podman or ../shared/tools/container-env.sh"; return 1; fi
    note "skipped: no docker or podman"; return 0
  fi
  if ! ensure_build; then record_failure "build failed"; return 1; fi
  local dist="$WORK/deb" log="$WORK/image.log" rc deb line
  mkdir -p "$dist"
  if ! (cd "$BUILD_DIR" && cpack -G DEB -B "$dist") >"$WORK/cpack.log" 2>&1; then
    tail -20 "$WORK/cpack.log"; record_failure "cpack failed"; return 1
  fi
  deb="$(ls "$dist"/tablestone_*.deb 2>/dev/null | head -1)"
  timeout 1500 bash "$ROOT/docker/test-image.sh" --prebuilt "$deb" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  line="$(grep -E '^image-test: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)"
  if [[ -n "$line" ]]; then
    local p f
    read -r p f < <(sed -E 's/^image-test: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' <<<"$line")
    record "$p" "$f"
    (( rc != 0 && f == 0 )) && record_failure "test-image.sh exited with $rc"
  else
    record_failure "test-image.sh produced no summary (exit $rc)"
  fi
  (( rc == 0 ))
}

# ---- reliability stages (owned by reliability; see docs/reliability.md) --------------------------
# reliability: crash harness (kill -9 and SIGTERM, short CI run), hostile clients, concurrency and
#              disk trouble, against the test build's binary.
# fuzz:        builds the libFuzzer targets with clang + ASan/UBSan and runs each for a bounded time.
# asan:        builds the server with -DTABLESTONE_SANITIZE=address,undefined and runs the Python e2e
#              suite plus the hostile-client and concurrency tests against it, and every unit test
#              under ASan/UBSan too (TABLESTONE_ASAN_UNIT=0 skips them).
#              Any sanitizer report fails the stage.
# Environment: TABLESTONE_FUZZ_SECONDS (per target, default 12), TABLESTONE_ASAN_BUILD_DIR (the
# clang build both stages share, default build-asan/), TABLESTONE_ASAN_UNIT (0/1),
# TABLESTONE_ASAN_E2E ("python" default, "none" to skip the e2e part).


stage_reliability() {
  if ! ensure_build; then record_failure "build failed"; return 1; fi
  export TABLESTONE_BIN="$SERVER_BIN"
  local ok=0 run
  # kill -9 and SIGTERM cycles; then a full disk under 4 writers and kill -9, and the log's size
  # and restart time after ~120 MB of writes (tests/reliability/disk_scenarios.py; seconds each).
  for run in "--mode kill9" "--mode sigterm" "--scenario diskfull" "--scenario logsize"; do
    # shellcheck disable=SC2086
    if timeout 600 "$PY" "$ROOT/tests/reliability/crash_harness.py" --ci $run 2>&1 |
        tee "$WORK/crash-${run##* }.log"; then
      record 1 0
    else
      record_failure "crash harness (${run##* }) failed"; ok=1
    fi
  done
  run_pytest reliability 1200 "$ROOT/tests/reliability/hostile_test.py" \
    "$ROOT/tests/reliability/concurrency_test.py" "$ROOT/tests/reliability/disk_test.py" \
    "$ROOT/tests/reliability/tools_resume_test.py" || ok=1
  return $ok
}

# The fuzz and asan stages share one clang build, CMakePresets.json's `asan` (build-asan/): ASan +
# UBSan at -O1 with line tables, the libraries also carrying libFuzzer's coverage instrumentation
# (harmless outside a fuzzer: the sanitizer runtime supplies the hooks). One compile of the
# libraries serves the fuzzers, the sanitized server and the sanitized unit tests.
SANITIZED_CONFIGURED=""
sanitized_build() {  # sanitized_build TARGETS... (empty: everything)
  local dir="$1"; shift
  if ! command -v clang++ >/dev/null 2>&1 || [[ ! -d /usr/lib/llvm-14/lib/clang ]]; then
    if [[ "${TABLESTONE_SKIP_DEPS:-0}" == 1 ]] || ! bash "$ROOT/scripts/install-deps.sh" --fuzz --no-npm; then
      echo "[test] clang/libFuzzer not installed (scripts/install-deps.sh --fuzz)"; return 1
    fi
  fi
  local tests=ON
  [[ "${TABLESTONE_ASAN_UNIT:-1}" == 1 ]] || tests=OFF
  if [[ -z "$SANITIZED_CONFIGURED" ]]; then
    if ! cmake --preset asan -B "$dir" -DTABLESTONE_BUILD_TESTS=$tests \
        ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} \
        >"$WORK/sanitized-cmake.log" 2>&1; then
      tail -20 "$WORK/sanitized-cmake.log"; return 1
    fi
    SANITIZED_CONFIGURED=1
  fi
  # shellcheck disable=SC2068
  timeout 3600 cmake --build "$dir" --parallel "${TABLESTONE_JOBS:-$(nproc)}" ${@:+--target $@}
}

stage_fuzz() {
  local dir="${TABLESTONE_ASAN_BUILD_DIR:-$ROOT/build-asan}" secs="${TABLESTONE_FUZZ_SECONDS:-12}"
  if ! sanitized_build "$dir" fuzzers; then
    record_failure "fuzz build failed"; return 1
  fi
  local log="$WORK/fuzz.log" rc
  FUZZ_JOBS="${FUZZ_JOBS:-$(nproc)}" bash "$ROOT/tests/fuzz/run_fuzzers.sh" "$dir" "$secs" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  record "$(grep -c '^fuzz: .* ok ' "$log")" "$(grep -cE '^fuzz: .* (FAIL|MISSING)' "$log")"
  # The summary is often all a CI log keeps: name the failing targets and their first finding there.
  if (( rc != 0 )); then
    note "$(grep -E -A1 '^fuzz: .* (FAIL|MISSING)' "$log" | sed -E 's/^fuzz: +([a-z_]+).*/\1:/; s/^ +//' \
      | grep -v '^--$' | tr '\n' ' ' | cut -c1-200)"
  fi
  (( rc == 0 ))
}

# tsan: the server and the unit tests of the threaded layers (http, api, exec, storage) under
# ThreadSanitizer, then the Python e2e suite and the hostile/concurrency clients against that server.
# Not in DEFAULT_STAGES (about 12 minutes on 2 cores); run it with TABLESTONE_TEST_STAGES=tsan.
# RocksDB (Debian's uninstrumented library) is suppressed as a whole: docs/reliability.md, "TSan".
stage_tsan() {
  local dir="${TABLESTONE_TSAN_BUILD_DIR:-$ROOT/build-tsan}" rc=0
  # CMakePresets.json's `tsan` (its build preset names the targets).
  if ! timeout 3600 bash -c 'cmake --preset tsan -B "$1" >/dev/null &&
      cmake --build "$1" --parallel "$2" --target tablestone unit_http unit_api unit_exec unit_storage' \
      _ "$dir" "${TABLESTONE_JOBS:-$(nproc)}"; then
    record_failure "TSan build failed"; return 1
  fi
  local reports="$WORK/tsan"
  mkdir -p "$reports"
  export TSAN_OPTIONS="suppressions=$ROOT/tests/reliability/tsan.supp:halt_on_error=0:log_path=$reports/tsan"
  local t log="$WORK/tsan-unit.log"
  : >"$log"
  for t in server/http/unit_http server/api/unit_api server/exec/unit_exec storage/unit_storage; do
    # gtest prints "[  PASSED  ] N tests." and "[  FAILED  ] N tests, listed below:".
    timeout 900 "$dir/tests/unit/$t" 2>&1 | tee -a "$log" | grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ tests?' || rc=1
  done
  record "$(grep -E '^\[  PASSED  \] [0-9]+' "$log" | awk '{s += $4} END {print s + 0}')" \
         "$(grep -E '^\[  FAILED  \] [0-9]+ tests?, listed' "$log" | awk '{s += $4} END {print s + 0}')"
  TABLESTONE_BIN="$dir/server/app/tablestone" run_pytest tsan-e2e-python 1800 "$ROOT/tests/e2e/python" || rc=1
  TABLESTONE_BIN="$dir/server/app/tablestone" run_pytest tsan-concurrency 900 \
    "$ROOT/tests/reliability/concurrency_test.py" || rc=1
  unset TSAN_OPTIONS
  if compgen -G "$reports/*" >/dev/null; then
    echo "[test] TSan reports:"; head -60 "$reports"/*
    record_failure "TSan reports in $(ls "$reports" | wc -l) process(es)"; rc=1
  fi
  (( rc == 0 ))
}

stage_asan() {
  local dir="${TABLESTONE_ASAN_BUILD_DIR:-$ROOT/build-asan}" rc=0 unit="${TABLESTONE_ASAN_UNIT:-1}"
  local targets=""  # everything: server, fuzzers and every unit test binary
  if [[ "$unit" != 1 ]]; then targets="tablestone"; fi
  if ! sanitized_build "$dir" $targets; then
    record_failure "ASan/UBSan build failed"; return 1
  fi
  # Reports go to files (one per process) so a server that logs a finding and keeps going, or a
  # report swallowed by a test harness, still fails the stage.
  local reports="$WORK/sanitizer"
  mkdir -p "$reports"
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:log_path=$reports/asan"
  export UBSAN_OPTIONS="halt_on_error=0:print_stacktrace=1:log_path=$reports/ubsan"
  if [[ "$unit" == 1 ]]; then
    local log="$WORK/asan-ctest.log" line
    (cd "$dir" && timeout 1500 ctest --output-on-failure --timeout 600 -j2) 2>&1 | tee "$log"
    local crc=${PIPESTATUS[0]}
    line="$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)"
    if [[ -n "$line" ]]; then
      local failed total
      failed="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")"
      total="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")"
      record $((total - failed)) "$failed"
      ctest_failed_names "$log" asan-unit
    elif (( crc != 0 )); then
      record_failure "ctest (asan) exited with $crc"
    fi
    (( crc == 0 )) || rc=1
  fi
  local bin="$dir/server/app/tablestone"
  if [[ "${TABLESTONE_ASAN_E2E:-python}" == python && -z "${TABLESTONE_E2E_CONNECTION_STRING:-}" ]]; then
    TABLESTONE_BIN="$bin" run_pytest asan-e2e-python 1200 "$ROOT/tests/e2e/python" || rc=1
  fi
  TABLESTONE_BIN="$bin" run_pytest asan-hostile 1200 "$ROOT/tests/reliability/hostile_test.py" \
    "$ROOT/tests/reliability/concurrency_test.py" || rc=1
  unset ASAN_OPTIONS UBSAN_OPTIONS
  if compgen -G "$reports/*" >/dev/null; then
    echo "[test] sanitizer reports:"; head -40 "$reports"/*
    record_failure "sanitizer reports in $(ls "$reports" | wc -l) process(es)"; rc=1
  fi
  (( rc == 0 ))
}

# ---- main ----------------------------------------------------------------------------------------
if [[ "${TABLESTONE_SKIP_DEPS:-0}" != 1 ]]; then
  if ! bash "$ROOT/scripts/install-deps.sh"; then
    echo "[test] install-deps.sh failed"
    echo "0 passed, 1 failed"
    exit 1
  fi
fi

stages_raw="${TABLESTONE_TEST_STAGES:-${DEFAULT_STAGES[*]}}"
read -r -a STAGES <<<"${stages_raw//,/ }"

start_all=$SECONDS
for stage in "${STAGES[@]}"; do
  fn="stage_${stage//-/_}"
  if ! declare -F "$fn" >/dev/null; then
    echo "[test] unknown stage '$stage' (known: ${DEFAULT_STAGES[*]})"
    SUMMARY+=("$(printf '%-14s %-6s %s' "$stage" "ERROR" "unknown stage")")
    TOTAL_FAILED=$((TOTAL_FAILED + 1))
    continue
  fi
  echo
  echo "================ stage: $stage ================"
  CUR_PASSED=0 CUR_FAILED=0 CUR_NOTE=""
  t0=$SECONDS
  "$fn"
  stage_rc=$?
  if (( stage_rc != 0 && CUR_FAILED == 0 )); then
    CUR_FAILED=1; CUR_NOTE="${CUR_NOTE:-stage exited with $stage_rc}"
  fi
  status=PASS
  (( CUR_FAILED > 0 )) && status=FAIL
  SUMMARY+=("$(printf '%-14s %-4s %5d passed %5d failed %5ds  %s' "$stage" "$status" \
    "$CUR_PASSED" "$CUR_FAILED" "$((SECONDS - t0))" "$CUR_NOTE")")
  TOTAL_PASSED=$((TOTAL_PASSED + CUR_PASSED))
  TOTAL_FAILED=$((TOTAL_FAILED + CUR_FAILED))
done

echo
echo "================ summary ($((SECONDS - start_all))s) ================"
for line in "${SUMMARY[@]}"; do echo "$line"; done
if (( ${#FAILED_NAMES[@]} > 0 )); then
  echo "failed tests:"
  for line in "${FAILED_NAMES[@]}"; do echo "  $line"; done
fi
echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed"
(( TOTAL_FAILED == 0 ))
