#!/usr/bin/env bash
# Fabric benchmark: wall time and peak memory of large collectives.
# Usage: scripts/bench-fabric.sh [path/to/fabricsim]
set -euo pipefail
bin=${1:-build/platforms/fabricsim}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/ring1024.yml" <<YML
topology: [ Ring ]
npus_count: [ 1024 ]
bandwidth: [ 50.0 ]
latency: [ 500.0 ]
YML
"$bin" gen collective --npus 1024 --type all_reduce --bytes 1073741824 --out "$work/ar1024"

run() {
  local label=$1; shift
  /usr/bin/time -f "$label: %e s wall, %M KB peak" "$bin" run --quiet --chunks 4 "$@"
}
run "ring, 1024 NPUs, 1 GiB all-reduce, 4 chunks" --platform "$work/ring1024.yml" --workload "$work/ar1024"
