#!/usr/bin/env bash
# Every C++ file in the repository as the committed .clang-format writes it
# (clang-format 14, Debian 12's). Lists the files that differ and exits 1;
# `scripts/check-format.sh --fix` rewrites them in place.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "clang-format is not installed (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find models tlm platforms traces rtl tests docs -name '*.cpp' -o -name '*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (scripts/check-format.sh --fix)"
    bad=$((bad + 1))
  fi
done
echo "${#files[@]} files, $bad not formatted"
exit $((bad > 0))
