#!/usr/bin/env bash
# Writes OUT, a gold --section-ordering-file that lays out the tablestone executable's hottest
# functions first (for a build whose own targets are compiled with -ffunction-sections and linked
# with -fuse-ld=gold -Wl,--section-ordering-file,OUT). Tried and not kept: docs/benchmarks.md,
# "Code layout (2026-11-28 evening)", which also shows the two CMake lines.
#
# Usage: bench/profile/hot_sections.sh BINARY OUT
# BINARY: a tablestone built with symbols (the test build's build-test/server/app/tablestone).
# Profiles the request path under callgrind with bench/callgrind/write_path.sh (1,000 each of GET,
# insert, upsert, merge, and 50 $batch of 100 inserts, 16 connections, one I/O thread; about 30 s
# here) and lists the functions of tablestone's own code that ran, hottest first
# (hot_functions.py). A stale list is harmless: it only leaves new functions where the linker
# puts them.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$1; OUT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
"$HERE/../callgrind/write_path.sh" --no-native --n 1000 --out "$TMP" "$BIN" >&2
python3 "$HERE/hot_functions.py" "$BIN" "$TMP"/0/{get,insert,upsert,merge,batch}.out >"$OUT"
echo "$(wc -l <"$OUT") sections in $OUT" >&2
