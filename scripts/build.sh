#!/usr/bin/env bash
# Configures and builds tablestone with CMake + Ninja.
#
# Usage: bash scripts/build.sh [BUILD_TYPE] [BUILD_DIR] [-- extra cmake -D options...]
#   BUILD_TYPE  Release (default), Debug, RelWithDebInfo, MinSizeRel
#   BUILD_DIR   build directory (default: build/ for Release, build-<type lower case>/ otherwise)
# Environment:
#   TABLESTONE_JOBS     parallel build jobs (default: number of CPUs)
#   TABLESTONE_TARGETS  space-separated ninja targets (default: all)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

build_type="${1:-Release}"
[[ $# -gt 0 ]] && shift
case "$build_type" in
  Release|Debug|RelWithDebInfo|MinSizeRel) ;;
  *) echo "build.sh: unknown build type '$build_type'" >&2; exit 2 ;;
esac

if [[ $# -gt 0 && "$1" != "--" ]]; then
  build_dir="$1"; shift
elif [[ "$build_type" == "Release" ]]; then
  build_dir="$ROOT/build"
else
  build_dir="$ROOT/build-$(echo "$build_type" | tr '[:upper:]' '[:lower:]')"
fi
[[ "${1:-}" == "--" ]] && shift
extra=("$@")

jobs="${TABLESTONE_JOBS:-$(nproc)}"

echo "[build] $build_type in $build_dir (jobs=$jobs)"
cmake -S "$ROOT" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "${extra[@]}" >/dev/null
# shellcheck disable=SC2086
cmake --build "$build_dir" --parallel "$jobs" ${TABLESTONE_TARGETS:+--target $TABLESTONE_TARGETS}
