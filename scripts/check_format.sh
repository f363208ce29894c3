#!/usr/bin/env bash
# Fails when a tracked C++/CUDA file outside bench/ differs from what clang-format (the repo's
# .clang-format: Google, 100 columns) would make of it; prints each offending file. Fix with:
#   git ls-files '*.cpp' '*.hpp' '*.cuh' '*.h' '*.c' '*.cu' | grep -v '^bench/' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v clang-format >/dev/null; then
  echo "check_format: clang-format is not installed (apt-get install clang-format)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cuh' '*.h' '*.c' '*.cu' | grep -v '^bench/')
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/check_format.$$; then
  grep -o '^[^:]*:[0-9]*:[0-9]*: error' /tmp/check_format.$$ | cut -d: -f1 | sort -u |
    sed 's/^/check_format: not formatted: /' >&2
  rm -f /tmp/check_format.$$
  exit 1
fi
rm -f /tmp/check_format.$$
echo "check_format: ${#files[@]} files formatted"
