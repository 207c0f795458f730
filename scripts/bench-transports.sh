#!/usr/bin/env bash
# Transport benchmark: wall time, peak memory and events of packet-level runs
# (docs/performance.md, "Transports"):
#   - a 128-GPU all-to-all of 64 MiB per GPU on a 400 GbE RoCE fat tree with
#     DCQCN (16 GPUs per leaf, 16 spines, non-blocking);
#   - one DLRM iteration (fabricsim gen dlrm: the ASTRA-sim + ns-3 case
#     study's model) on 128 GPUs of 60 TFLOP/s, each with a 100 Gb/s NIC on a
#     flat fat tree of TCP over lossy Ethernet with 64 MB switch buffers.
# Usage: scripts/bench-transports.sh [path/to/fabricsim]
set -euo pipefail
bin=${1:-build/platforms/fabricsim}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fat_tree() {  # name bandwidth transport
  cat >"$work/$1.yaml" <<YML
name: $1
npus: 128
npu: { peak_flops: 60 TFLOP/s, memory_bandwidth: 900 GB/s }
fabrics:
  - topology: fat_tree
    levels: 2
    leaf_down: 16
    leaf_up: 16
    link: { bandwidth: $2, latency: 500 ns, buffer: 1 MiB }
    switch: { latency: 500 ns }
    nic: { mtu: 4 KiB, header: 82 }
    transport: $3
YML
}
fat_tree roce128 "400 Gb/s" "{ kind: roce }"
fat_tree tcp128 "100 Gb/s" "{ kind: tcp, switch_buffer: 64 MB }"
"$bin" gen dlrm --npus 128 --out "$work/dlrm128" >/dev/null

/usr/bin/time -f "all-to-all, 128 GPUs, RoCE + DCQCN, 64 MiB: %e s wall, %M KB peak" \
  "$bin" collbench --platform "$work/roce128.yaml" --op all_to_all -b 64M -e 64M
/usr/bin/time -f "DLRM iteration, 128 GPUs, TCP 100 Gb/s: %e s wall, %M KB peak" \
  "$bin" run --platform "$work/tcp128.yaml" --workload "$work/dlrm128" | grep -E "simulated time|transport"
