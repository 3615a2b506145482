#!/usr/bin/env bash
# Tests scripts/check-layers.sh: the tree as it is passes, and each include that reaches up a floor,
# planted in a copy of the tree, fails it and is named. Run by the `headers` stage of scripts/test.sh.
# Prints "check_layers_test: N passed, N failed".
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="$(mktemp -d /tmp/tablestone-layers.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0

fresh_copy() {
  rm -rf "$WORK/tree"
  mkdir -p "$WORK/tree"
  (cd "$ROOT" && tar cf - protocol storage server tools) | (cd "$WORK/tree" && tar xf -)
}

# expect_fail NAME FILE LINE: appends LINE to FILE in a fresh copy; the check must fail naming FILE.
expect_fail() {
  local name="$1" file="$2" line="$3" out rc
  fresh_copy
  mkdir -p "$(dirname "$WORK/tree/$file")"
  printf '%s\n' "$line" >>"$WORK/tree/$file"
  out="$(bash "$ROOT/scripts/check-layers.sh" "$WORK/tree" 2>&1)"
  rc=$?
  if (( rc != 0 )) && grep -qF "$file:" <<<"$out"; then
    passed=$((passed + 1))
  else
    echo "check_layers_test: FAIL $name: exit $rc, output:"; echo "$out" | tail -3
    failed=$((failed + 1))
  fi
}

# expect_pass NAME FILE LINE: the same, but the include is allowed.
expect_pass() {
  local name="$1" file="$2" line="$3" out rc
  fresh_copy
  [[ -n "$file" ]] && { mkdir -p "$(dirname "$WORK/tree/$file")"; printf '%s\n' "$line" >>"$WORK/tree/$file"; }
  out="$(bash "$ROOT/scripts/check-layers.sh" "$WORK/tree" 2>&1)"
  rc=$?
  if (( rc == 0 )); then
    passed=$((passed + 1))
  else
    echo "check_layers_test: FAIL $name: exit $rc, output:"; echo "$out" | tail -3
    failed=$((failed + 1))
  fi
}

expect_pass "the tree as it is" "" ""
expect_fail "protocol includes storage" protocol/route.cc '#include "storage/engine.h"'
expect_fail "protocol includes server" protocol/auth/hmac.h '#include "server/api/trace.h"'
expect_fail "protocol uses RocksDB" protocol/url.cc '#include <rocksdb/db.h>'
expect_fail "storage includes protocol" storage/engine.h '#include "protocol/url.h"'
expect_fail "storage uses Beast" storage/rocks_engine.cc '#include <boost/beast/http.hpp>'
expect_fail "model includes storage" storage/model/entity.h '  #  include "storage/engine.h"'
expect_fail "http includes api" server/http/session.cc '#include "server/api/dispatcher.h"'
expect_fail "ui includes api" server/ui/ui_assets.h '#include "server/api/ui_routes.h"'
expect_fail "faults includes http" server/faults/fault_rules.h '#include "server/http/handler.h"'
expect_fail "api includes app" server/api/dispatcher.cc '#include "server/app/config.h"'
expect_fail "api includes the engine's insides" server/api/dispatcher.cc '#include "storage/rocks_engine.h"'
expect_fail "storage includes the executor" storage/rocks_engine.cc '#include "server/exec/work_executor.h"'
expect_fail "the executor includes the engine" server/exec/work_executor.cc '#include "storage/engine.h"'
expect_fail "the executor includes api" server/exec/work_executor.h '#include "server/api/placement.h"'
expect_fail "a new file is checked too" server/http/new_file.h '#include "server/api/api_handler.h"'
expect_pass "app includes everything" server/app/server.cc '#include "server/api/dispatcher.h"'
expect_pass "api includes the executor" server/api/cors.cc '#include "server/exec/work_executor.h"'
expect_pass "api includes the handler interface" server/api/cors.cc '#include "server/http/handler.h"'

echo "check_layers_test: $passed passed, $failed failed"
(( failed == 0 ))
