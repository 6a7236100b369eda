#!/usr/bin/env bash
# scripts/format-check.sh [SOURCE_DIR] — room scripts: lists the C files under
# src/ include/ tests/ bench/ fuzz/ that clang-format (.clang-format) would
# change; exits 1 when any differs, 0 when none does. Changes nothing.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null 2>&1 || { echo "format-check: $cf not found (scripts/install-deps.sh installs clang-format)" >&2; exit 2; }
differ=0
while IFS= read -r -d '' f; do
  if ! "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "$f"
    differ=$((differ + 1))
  fi
done < <(find src include tests bench fuzz -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)
if [ "$differ" -gt 0 ]; then
  echo "format-check: $differ file(s) differ from .clang-format (make format fixes them)" >&2
  exit 1
fi
echo "format-check: ok"
