#!/usr/bin/env bash
# Installs everything tablestone needs to build and test on Debian 12 (bookworm).
#
# Idempotent and quick when everything is present: each Debian package is checked with `dpkg -s`,
# and apt-get runs (update + install) only when something is missing. The JS end-to-end suite's
# node_modules is (re)installed with `npm ci` only when package-lock.json changed since the last run.
#
# Usage: bash scripts/install-deps.sh [--bench] [--fuzz] [--no-tests] [--no-npm] [--no-ui]
#   --bench     also install the benchmark tools (wrk)
#   --fuzz      the fuzzing toolchain alone is wanted (clang + libFuzzer runtime; the test install
#               already includes it)
#   --no-tests  only the build dependencies (no test dependencies: no Python/Node packages, clang,
#               Podman or Chromium)
#   --no-npm    skip `npm ci` for tests/e2e/js, tests/e2e/legacy, tests/e2e/atom and tests/e2e/ui
#   --no-ui     skip the browser test's dependencies (Debian chromium, tests/e2e/ui's npm ci)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

BUILD_PKGS=(build-essential cmake ninja-build pkg-config libboost1.81-dev librocksdb-dev
            nlohmann-json3-dev libspdlog-dev libgtest-dev libjemalloc-dev
            libcli11-dev zlib1g-dev libzstd-dev libssl-dev libexpat1-dev)
TEST_PKGS=(python3 python3-azure python3-pytest curl openssl)
# tests/e2e/python/test_azure_cli.py drives `az storage entity` (Debian's azure-cli 2.45; about a
# minute to download and unpack its 34 packages on a fresh machine).
TEST_PKGS+=(azure-cli)
# The data browser's browser test (tests/e2e/ui, playwright-core drives this chromium).
UI_PKGS=(chromium)
BENCH_PKGS=(wrk)
# The fuzz and asan stages build with clang (libFuzzer and the sanitizer runtimes).
FUZZ_PKGS=(clang libclang-rt-14-dev)
# The image stage and the harness tests build and run the container with Podman (no Docker engine
# on these machines; ../shared/tools/container-env.sh configures it and makes the base image with
# debootstrap).
# Installed with their recommended packages, as container-env.sh installs them.
# podman-compose runs the compose-file check of docker/test-image.sh (issue 33).
IMAGE_PKGS=(podman buildah runc debootstrap netcat-openbsd podman-compose)

want_tests=1 want_bench=0 want_fuzz=0 want_npm=1 want_ui=1 want_image=1
for arg in "$@"; do
  case "$arg" in
    --bench) want_bench=1 ;;
    --fuzz) want_fuzz=1 ;;
    --no-tests) want_tests=0; want_npm=0; want_ui=0; want_image=0 ;;
    --no-npm) want_npm=0 ;;
    --no-ui) want_ui=0 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

log() { echo "[install-deps] $*"; }

# True when dpkg knows the package as fully installed.
is_installed() {
  dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'
}

wanted=("${BUILD_PKGS[@]}")
(( want_tests )) && wanted+=("${TEST_PKGS[@]}" "${FUZZ_PKGS[@]}")
(( want_ui )) && wanted+=("${UI_PKGS[@]}")
(( want_bench )) && wanted+=("${BENCH_PKGS[@]}")
(( want_fuzz )) && wanted+=("${FUZZ_PKGS[@]}")

missing=()
for pkg in "${wanted[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done
missing_with_recommends=()
if (( want_image )); then
  for pkg in "${IMAGE_PKGS[@]}"; do
    is_installed "$pkg" || missing_with_recommends+=("$pkg")
  done
fi

# Node.js: any node >= 18 with npm will do. Check the commands rather than the Debian packages,
# because a NodeSource `nodejs` package ships its own npm and conflicts with Debian's `npm`.
if (( want_tests )); then
  node_major=0
  if command -v node >/dev/null 2>&1; then
    node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  fi
  if (( node_major < 18 )); then
    missing+=(nodejs npm)
  elif ! command -v npm >/dev/null 2>&1; then
    missing+=(npm)
  fi
fi

if (( ${#missing[@]} + ${#missing_with_recommends[@]} > 0 )); then
  log "missing Debian packages: ${missing[*]} ${missing_with_recommends[*]}"
  SUDO=()
  if (( EUID != 0 )); then
    if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); else
      echo "install-deps.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -q
  if (( ${#missing[@]} > 0 )); then
    "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  if (( ${#missing_with_recommends[@]} > 0 )); then
    "${SUDO[@]}" apt-get install -y -q "${missing_with_recommends[@]}"
  fi
else
  log "all Debian packages present"
fi

# npm test suites: reinstall a suite's node_modules when its package-lock.json changed (or it is
# missing). $1 = suite directory, $2 = a package whose absence also forces the install.
npm_ci_if_changed() {
  local dir="$1" probe="$2"
  local lock="$dir/package-lock.json" stamp="$dir/node_modules/.tablestone-lock.sha256"
  [[ -f "$lock" ]] || return 0
  local want_hash have_hash
  want_hash="$(sha256sum "$lock" | cut -d' ' -f1)"
  have_hash="$(cat "$stamp" 2>/dev/null || true)"
  if [[ "$want_hash" != "$have_hash" || ! -d "$dir/node_modules/$probe" ]]; then
    log "npm ci in ${dir#"$ROOT"/}"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want_hash" > "$stamp"
  else
    log "${dir#"$ROOT"/}/node_modules up to date"
  fi
}

if (( want_npm )); then
  npm_ci_if_changed "$ROOT/tests/e2e/js" "@azure/data-tables"
  npm_ci_if_changed "$ROOT/tests/e2e/legacy" "azure-storage"
  npm_ci_if_changed "$ROOT/tests/e2e/atom" "azure-storage-legacy"
  # Azurite's table server, the other endpoint of the data tools' copy tests over HTTP and HTTPS
  # (tests/e2e/python/test_data_tools*.py); a test tool, never a dependency of tablestone.
  npm_ci_if_changed "$ROOT/tests/e2e/azurite" "azurite"
  (( want_ui )) && npm_ci_if_changed "$ROOT/tests/e2e/ui" "playwright-core"
  # Azurite's Testcontainers module, run against the image by docker/test-image.sh (issue 33).
  (( want_image )) && npm_ci_if_changed "$ROOT/tests/e2e/containers" "@testcontainers/azurite"
fi
