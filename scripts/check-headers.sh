#!/usr/bin/env bash
# Header self-containment: compiles every header of protocol/, storage/, server/ and tools/ alone, as the
# only #include of an otherwise empty translation unit, with -fsyntax-only. A header that leans on
# an include its users happened to make first fails here instead of in the next file that uses it.
#
# Usage: bash scripts/check-headers.sh [HEADER...]   (default: every *.h under protocol storage server tools)
# Environment:
#   CXX              compiler (default g++)
#   TABLESTONE_JOBS  parallel compilers (default: number of CPUs)
# Prints one line per failing header with the compiler's first errors; exits non-zero if any failed.
# About 1 minute on 2 cores for the ~70 headers.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

cxx="${CXX:-g++}"
jobs="${TABLESTONE_JOBS:-$(nproc)}"
# The flags every target compiles with (CMakeLists.txt), plus the definitions spdlog's CMake
# package adds to its users.
flags=(-std=c++20 -fsyntax-only -Wall -Wextra -Wno-unused-parameter -I"$ROOT"
       -DSPDLOG_SHARED_LIB -DSPDLOG_COMPILED_LIB -DSPDLOG_FMT_EXTERNAL)

if [[ $# -gt 0 ]]; then
  headers=("$@")
else
  mapfile -t headers < <(find protocol storage server tools -name '*.h' | sort)
fi

out="$(mktemp -d /tmp/tablestone-headers.XXXXXX)"
trap 'rm -rf "$out"' EXIT

check_one() {
  local header="$1" log
  log="$out/$(echo "$header" | tr '/' '_').log"
  if ! printf '#include "%s"\n' "$header" | "$cxx" "${flags[@]}" -x c++ - >"$log" 2>&1; then
    echo "FAIL $header"
    grep -m 5 -E 'error:' "$log" | sed 's/^/    /'
    : >"$log.failed"
    return 1
  fi
}
export -f check_one
export out cxx
export flags_str="${flags[*]}"

start=$SECONDS
failed=0
# xargs runs check_one in parallel; each failure prints its own block.
printf '%s\n' "${headers[@]}" |
  xargs -P "$jobs" -I{} bash -c 'flags=($flags_str); check_one "$@"' _ {} || failed=1
bad=$(find "$out" -name '*.failed' | wc -l)
echo "[headers] ${#headers[@]} headers, $bad not self-contained ($((SECONDS - start))s)"
(( failed == 0 && bad == 0 ))
