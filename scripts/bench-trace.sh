#!/usr/bin/env bash
# Trace-reader benchmark: a generated workload of 8 ranks x 640,000 nodes
# (5.12 million in all: compute chains with a 1 MiB all-reduce every 1,000
# nodes) on an 8-NPU switch; prints wall time and peak memory. Memory stays
# flat because each rank streams its file and holds only a window of nodes.
# With "independent", the nodes have no dependencies at all (the window's
# worst case: every node could run at once) and no collectives.
# Usage: scripts/bench-trace.sh [path/to/fabricsim] [nodes-per-rank] [chains|independent]
set -euo pipefail
bin=${1:-build/platforms/fabricsim}
nodes=${2:-640000}
shape=${3:-chains}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n' >"$work/switch8.yml"
if [ "$shape" = independent ]; then
  "$bin" gen long --npus 8 --nodes "$nodes" --collective-every 0 --independent --out "$work/long"
else
  "$bin" gen long --npus 8 --nodes "$nodes" --collective-every 1000 --out "$work/long"
fi
du -ch "$work"/long.*.et | tail -1 | sed 's/total/of traces/'
/usr/bin/time -f "8 ranks x $nodes $shape nodes: %e s wall, %M KB peak" "$bin" run --quiet --platform "$work/switch8.yml" --workload "$work/long"
