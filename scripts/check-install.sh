#!/usr/bin/env bash
# Installs a built fabricsim into a temporary prefix and uses only what was
# installed: the out-of-tree example platform (docs/examples/platform) built
# once with find_package(fabricsim) and once with pkg-config, each run and its
# result checked; then the installed command runs the default job on the
# installed platform and sample traces. Removes the prefix afterwards.
#   scripts/check-install.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
prefix=$(mktemp -d "${TMPDIR:-/tmp}/fabricsim-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT

echo "+ cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" > "$prefix.log" 2>&1 || { cat "$prefix.log"; rm -f "$prefix.log"; exit 1; }
rm -f "$prefix.log"

check_run() {  # the example's own check: exit 0 and "result: ok"
  local binary=$1 out
  out=$("$binary") || { echo "$out"; echo "FAILED: $binary exited non-zero" >&2; exit 1; }
  echo "$out"
  grep -qx "result: ok" <<< "$out" || { echo "FAILED: $binary did not print 'result: ok'" >&2; exit 1; }
}

echo "+ example with find_package(fabricsim)"
cmake -S docs/examples/platform -B "$prefix/example-cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$prefix/example-cmake" > /dev/null
check_run "$prefix/example-cmake/example_platform"

echo "+ example with pkg-config fabricsim"
libdir=$(find "$prefix" -name fabricsim.pc -printf '%h\n' | head -1)
flags=$(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs fabricsim)
echo "  pkg-config --cflags --libs fabricsim: $flags"
# shellcheck disable=SC2086  # the flags are words
c++ -std=c++17 -O2 docs/examples/platform/main.cpp $flags -o "$prefix/example-pkgconfig"
check_run "$prefix/example-pkgconfig"

echo "+ the installed command"
"$prefix/bin/fabricsim" --version
share="$prefix/share/fabricsim"
"$prefix/bin/fabricsim" run --quiet --platform "$share/platforms/ring8.yaml" \
  --workload "$share/traces/samples/allreduce_8npus_64MiB/allreduce" --report "$prefix/report.json"
grep -q '"sim_time_ns"' "$prefix/report.json" || { echo "FAILED: the installed command wrote no report" >&2; exit 1; }
echo "install check: ok"
