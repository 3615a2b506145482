#!/usr/bin/env bash
# Layering check (docs/architecture.md, "Layers"): no #include reaches up a floor. For each folder,
# the project headers it may include (by path prefix) and the libraries it must not include; a
# deeper folder's rule wins over its parent's (storage/model/ over storage/). Run by the `headers`
# stage of scripts/test.sh; tests/scripts/check_layers_test.sh checks that a bad include fails it.
#
# Usage: bash scripts/check-layers.sh [ROOT]   (default: this checkout)
# Prints one line per offending include (file:line: include, and the rule) and exits 1 if any.
set -uo pipefail

ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
cd "$ROOT" || exit 2

# folder | project prefixes it may include (space-separated) | libraries it must not include
# ("<name/" prefixes). A folder not listed (server/app/, bench/, tests/) may include anything.
RULES=(
  "storage/model|storage/model/|rocksdb/ boost/ spdlog/ nlohmann/ openssl/ expat CLI/"
  "storage|storage/|boost/ nlohmann/ openssl/ expat CLI/"
  "protocol|protocol/ storage/model/|rocksdb/ boost/ spdlog/ CLI/"
  "server/http|server/http/|rocksdb/ nlohmann/ expat CLI/"
  "server/ui|server/ui/|rocksdb/ boost/ spdlog/ nlohmann/ openssl/ expat CLI/"
  "server/faults|server/faults/ protocol/operation.h storage/model/|rocksdb/ boost/ spdlog/ openssl/ expat CLI/"
  "server/exec|server/exec/ storage/model/status.h storage/thread_priority.h|rocksdb/ boost/ spdlog/ nlohmann/ openssl/ expat CLI/"
  "server/api|server/api/ server/http/handler.h server/http/transport_counters.h server/faults/ server/exec/ server/ui/ protocol/ storage/engine.h storage/model/|rocksdb/ CLI/"
  "tools|tools/ protocol/ storage/engine.h storage/model/|rocksdb/ CLI/"
)

# The rule of the deepest listed folder that contains `file`, or nothing.
rule_of() {
  local file="$1" best="" best_len=0 r dir
  for r in "${RULES[@]}"; do
    dir="${r%%|*}"
    if [[ "$file" == "$dir/"* ]] && (( ${#dir} > best_len )); then best="$r"; best_len=${#dir}; fi
  done
  printf '%s' "$best"
}

bad=0
checked=0
while IFS= read -r file; do
  rule="$(rule_of "$file")"
  [[ -n "$rule" ]] || continue
  checked=$((checked + 1))
  dir="${rule%%|*}"
  rest="${rule#*|}"
  read -r -a allowed <<<"${rest%%|*}"
  read -r -a banned <<<"${rest#*|}"
  while IFS= read -r hit; do
    line="${hit%%:*}"
    text="${hit#*:}"
    if [[ "$text" =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
      inc="${BASH_REMATCH[1]}"
      # Only paths from the root are project headers (every include in the tree is written so).
      [[ "$inc" == */* ]] || continue
      ok=0
      for a in "${allowed[@]}"; do
        if [[ "$a" == */ && "$inc" == "$a"* ]] || [[ "$inc" == "$a" ]]; then ok=1; break; fi
      done
      if (( ok == 0 )); then
        echo "$file:$line: #include \"$inc\": $dir/ may include only ${allowed[*]}"
        bad=$((bad + 1))
      fi
    elif [[ "$text" =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^\>]+)\> ]]; then
      inc="${BASH_REMATCH[1]}"
      for b in "${banned[@]}"; do
        if [[ "$inc" == "$b"* ]]; then
          echo "$file:$line: #include <$inc>: $dir/ must not use ${b%/}"
          bad=$((bad + 1))
        fi
      done
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include' "$file")
done < <(find protocol storage server tools -type f \( -name '*.h' -o -name '*.cc' \) 2>/dev/null | sort)

echo "[layers] $checked files, $bad includes reaching up a floor"
(( bad == 0 ))
