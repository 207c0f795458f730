#!/usr/bin/env bash
# Fabric benchmark: wall time and peak memory of large all-reduces.
#   - 1,024 NPUs, 1 GiB in 4 chunks, on a ring and on one switch (ASTRA-sim
#     network files: 50 GB/s links, 500 ns)
#   - 16 NPUs on one switch, 1 GiB in 1,024 chunks: 64 KiB frames, dozens in
#     flight per link (credit bookkeeping must not scan them all)
#   - 4,096 NPUs, 1 GiB in 4 chunks, on a 3-level fat tree (16 NPUs per leaf,
#     16 leaves per pod, no oversubscription; 50 GB/s links, 100 ns switches),
#     with halving-doubling: a ring over 4,096 NPUs is 134 million messages
# Usage: scripts/bench-fabric.sh [path/to/fabricsim]
set -euo pipefail
bin=${1:-build/platforms/fabricsim}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

astra() {  # topology npus
  printf 'topology: [ %s ]\nnpus_count: [ %s ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' "$1" "$2" >"$work/$1$2.yml"
}
astra Ring 1024
astra Switch 1024
astra Switch 16
cat >"$work/fattree4096.yaml" <<YML
name: fattree4096
npus: 4096
fabrics:
  - topology: fat_tree
    levels: 3
    leaf_down: 16
    leaf_up: 16
    pod_leaves: 16
    agg_up: 16
    link: { bandwidth_GBps: 50, latency_ns: 500 }
    switch: { latency_ns: 100 }
YML
"$bin" gen collective --npus 16 --type all_reduce --bytes 1073741824 --out "$work/ar16"
"$bin" gen collective --npus 1024 --type all_reduce --bytes 1073741824 --out "$work/ar1024"
"$bin" gen collective --npus 4096 --type all_reduce --bytes 1073741824 --out "$work/ar4096"

run() {
  local label=$1; shift
  /usr/bin/time -f "$label: %e s wall, %M KB peak" "$bin" run --quiet "$@"
}
run "ring, 1024 NPUs, 1 GiB ring all-reduce, 4 chunks" --chunks 4 --algorithm all_reduce=ring \
  --platform "$work/Ring1024.yml" --workload "$work/ar1024"
run "switch, 1024 NPUs, 1 GiB ring all-reduce, 4 chunks" --chunks 4 --algorithm all_reduce=ring \
  --platform "$work/Switch1024.yml" --workload "$work/ar1024"
run "switch, 16 NPUs, 1 GiB ring all-reduce, 1024 chunks" --chunks 1024 --algorithm all_reduce=ring \
  --platform "$work/Switch16.yml" --workload "$work/ar16"
run "3-level fat tree, 4096 NPUs, 1 GiB halving-doubling all-reduce, 4 chunks" --chunks 4 --algorithm all_reduce=halving_doubling \
  --platform "$work/fattree4096.yaml" --workload "$work/ar4096"
