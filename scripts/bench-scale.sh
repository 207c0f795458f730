#!/usr/bin/env bash
# Wall time and peak memory against NPUs, packet against flow: a 1 GiB
# halving-doubling all-reduce (2 log2 N steps, congestion on every level) on
# a 3-level fat tree of N NPUs (16 per leaf, 16 leaves per pod, N/256 pods,
# 50 GB/s links, 500 ns, 100 ns switches; no oversubscription), N = 1k to
# 16k. A run past LIMIT seconds (default 900) is stopped and marked so.
# Writes SCALE.csv (model, npus, sim time, wall, peak) and, with Debian's
# python3-matplotlib, docs/img/scale-flow-packet.png.
# Usage: scripts/bench-scale.sh [fabricsim] [out.csv]   (NPUS="1024 2048" LIMIT=600 to change)
set -euo pipefail
bin=${1:-build/platforms/fabricsim}
csv=${2:-scale.csv}
npus_list=${NPUS:-"1024 2048 4096 8192 16384"}
limit=${LIMIT:-900}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "model,npus,sim_ms,wall_s,peak_MiB" >"$csv"
for n in $npus_list; do
  cat >"$work/fattree$n.yaml" <<YML
name: fattree$n
npus: $n
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
  "$bin" gen collective --npus "$n" --type all_reduce --bytes 1073741824 --out "$work/ar$n" >/dev/null
  for model in flow packet; do
    start=$(date +%s.%N)
    if /usr/bin/time -f "%M" -o "$work/peak" timeout "$limit" "$bin" run --quiet --force \
      --algorithm all_reduce=halving_doubling --fabric-model "$model" --platform "$work/fattree$n.yaml" \
      --workload "$work/ar$n" --report "$work/r.json"; then
      wall=$(echo "$(date +%s.%N) - $start" | bc)
      sim=$(python3 -c "import json;print(json.load(open('$work/r.json'))['sim_time_ns']/1e6)")
      peak=$(( $(tail -1 "$work/peak") / 1024 ))
      printf '%s,%s,%.3f,%.2f,%s\n' "$model" "$n" "$sim" "$wall" "$peak" | tee -a "$csv"
    else
      echo "$model,$n,,>$limit," | tee -a "$csv"
    fi
  done
done
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  /usr/bin/python3 - "$csv" <<'PY'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
for model, style in (("packet", "o-"), ("flow", "s-")):
    pts = [(int(r["npus"]), float(r["wall_s"]), float(r["peak_MiB"])) for r in rows
           if r["model"] == model and r["sim_ms"]]
    if not pts:
        continue
    a.plot([p[0] for p in pts], [p[1] for p in pts], style, label=model)
    b.plot([p[0] for p in pts], [p[2] for p in pts], style, label=model)
for ax, what in ((a, "wall time (s)"), (b, "peak memory (MiB)")):
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("NPUs (3-level fat tree)")
    ax.set_ylabel(what)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
fig.suptitle("1 GiB halving-doubling all-reduce: packet against flow")
fig.tight_layout()
fig.savefig("docs/img/scale-flow-packet.png", dpi=100)
PY
fi
