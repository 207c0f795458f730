#!/usr/bin/env bash
# A clone of this repository alone, with no shared/ folder beside it or above
# it, configures: the tests that read ../shared are to be skipped (each says
# so), and configure says how to point to it. Configure only; the build is the
# same as any other.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d "${TMPDIR:-/tmp}/fabricsim-lone.XXXXXX")
trap 'rm -rf "$dir"' EXIT
if [ -e "$(dirname "$dir")/shared/traces/README.md" ] || [ -e /shared/traces/README.md ]; then
  echo "check-lone-clone: $(dirname "$dir") has a shared/ folder above it; set TMPDIR elsewhere" >&2
  exit 1
fi
git clone -q . "$dir/fabricsim"
git -C "$dir/fabricsim" remote remove origin  # alone: not a clone of a checkout that has shared/ beside it
out=$(cmake -S "$dir/fabricsim" -B "$dir/build" 2>&1) || { echo "$out"; echo "FAILED: a lone clone does not configure" >&2; exit 1; }
grep -q "FABRICSIM_SHARED_DIR" <<< "$out" || { echo "$out"; echo "FAILED: configure did not say how to point to shared/" >&2; exit 1; }
# No file may name where this checkout lives, or where the shared folder
# beside it is: absolute paths of one machine.
paths=("$PWD")
d=$PWD
while [ "$d" != / ]; do
  d=$(dirname "$d")
  [ -e "$d/shared/traces/README.md" ] && paths+=("${d%/}/shared")
done
for p in "${paths[@]}"; do
  if grep -rqF "$p" "$dir/fabricsim" --exclude-dir=.git; then
    echo "FAILED: an absolute path of this machine ($p) in the repository:" >&2
    grep -rnF "$p" "$dir/fabricsim" --exclude-dir=.git >&2
    exit 1
  fi
done
echo "lone clone: configures, the shared-data tests will be skipped"
