#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time from its seed corpus and fails on any crash,
# leak, timeout or out-of-memory. Prints one line per target with its figures.
#
# Usage: tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS_PER_TARGET] [TARGET...]
#   BUILD_DIR  a build configured with -DTABLESTONE_BUILD_FUZZERS=ON (clang, ASan+UBSan)
#   SECONDS    default 25
#   TARGET     default: every fuzz_* target in tests/fuzz/CMakeLists.txt
# Environment: FUZZ_JOBS (targets run side by side, default 1; scripts/test.sh uses nproc), FUZZ_KEEP_CORPUS=DIR (keep the grown
# corpora there, e.g. to merge new seeds with -merge=1), FUZZ_ARTIFACTS=DIR (crash files; default
# a temp dir, printed on failure).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:?usage: run_fuzzers.sh BUILD_DIR [SECONDS] [TARGET...]}"
SECONDS_PER="${2:-25}"
shift $(( $# >= 2 ? 2 : $# ))
TARGETS=("$@")
if (( ${#TARGETS[@]} == 0 )); then
  read -r -a TARGETS < <(sed -n '/set(TABLESTONE_FUZZERS/,/)/p' "$ROOT/tests/fuzz/CMakeLists.txt" \
    | grep -o 'fuzz_[a-z_]*' | tr '\n' ' ')
fi

WORK="$(mktemp -d /tmp/tablestone-fuzz.XXXXXX)"
ARTIFACTS="${FUZZ_ARTIFACTS:-$WORK/artifacts}"
mkdir -p "$ARTIFACTS"
# halt_on_error makes UBSan findings fatal (they only print by default); leaks are detected at
# exit of each run by LeakSanitizer (part of ASan) and reported by libFuzzer as crashes.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

# One target: prints its line (and findings) and leaves "<runs> <rc>" in $WORK/<target>.result, so
# targets can run side by side (FUZZ_JOBS) with their output printed whole, in order.
run_target() {
  local t="$1" bin="$BUILD/tests/fuzz/$1" corpus="$WORK/corpus/$1" log="$WORK/$1.log" max_len=8192
  local start=$SECONDS rc runs cov peak
  if [[ ! -x "$bin" ]]; then
    echo "fuzz: $t: MISSING binary $bin"
    echo "0 1" >"$WORK/$t.result"
    return
  fi
  mkdir -p "$corpus"
  [[ "$t" == fuzz_http_request || "$t" == fuzz_batch_multipart ]] && max_len=65536
  [[ "$t" == fuzz_http_framing ]] && max_len=20000
  [[ "$t" == fuzz_entity_scaling ]] && max_len=200  # a fragment, repeated thousands of times
  "$bin" -max_total_time="$SECONDS_PER" -timeout=10 -rss_limit_mb=2560 -malloc_limit_mb=2560 \
    -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$ARTIFACTS/$t-" \
    "$corpus" "$ROOT/tests/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
  cov="$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)"
  peak="$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
  if (( rc == 0 )); then
    printf 'fuzz: %-22s ok    %9s runs in %4ds  %s  peak %s MB\n' "$t" "${runs:-?}" $((SECONDS - start)) "$cov" "${peak:-?}"
  else
    printf 'fuzz: %-22s FAIL  (exit %d) after %ds; log %s\n' "$t" "$rc" $((SECONDS - start)) "$log"
    grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$log" | head -8 | sed 's/^/    /'
  fi
  if [[ -n "${FUZZ_KEEP_CORPUS:-}" ]]; then
    mkdir -p "$FUZZ_KEEP_CORPUS/$t"
    cp -n "$corpus"/* "$FUZZ_KEEP_CORPUS/$t/" 2>/dev/null || true
  fi
  echo "${runs:-0} $(( rc == 0 ? 0 : 1 ))" >"$WORK/$t.result"
}

# Each target is single-threaded: FUZZ_JOBS of them run at once, each one's output printed whole.
jobs_max="${FUZZ_JOBS:-1}"
for t in "${TARGETS[@]}"; do
  while (( $(jobs -rp | wc -l) >= jobs_max )); do wait -n; done
  run_target "$t" >"$WORK/$t.out" &
done
wait
failed=0
total_runs=0
for t in "${TARGETS[@]}"; do
  cat "$WORK/$t.out"
  read -r runs bad <"$WORK/$t.result"
  total_runs=$((total_runs + runs))
  failed=$((failed + bad))
done

echo "fuzz: ${#TARGETS[@]} targets, $total_runs executions, $failed failed"
if (( failed == 0 )); then
  rm -rf "$WORK"
else
  echo "fuzz: logs and artifacts kept in $WORK"
fi
(( failed == 0 ))
