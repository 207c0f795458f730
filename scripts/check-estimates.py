#!/usr/bin/python3
"""Holds the resource estimate (models/npu/work_bounds.h) against measured
runs: every shipped platform's collective sweep, both samples, generated
training steps and the 1,024-NPU benchmarks. For each: the estimated wall
time and peak memory, the measured ones (/usr/bin/time), and their ratios.
The issue's bounds: memory within 2x, wall time within 3x.

Usage: scripts/check-estimates.py [--fabricsim build/platforms/fabricsim] [--quick] [--check]
--quick leaves out the 1,024-NPU runs and the large steps (about 1 minute
instead of about 5); --check exits 1 when a row is outside its bound.
Nothing is fitted to these rows: the estimate's per-unit costs are its own
calibration's (docs/performance.md, "The resource estimate").
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLATFORMS = sorted(f for f in os.listdir(os.path.join(ROOT, "platforms")) if f.endswith(".yaml"))


def astra(folder, topology, npus):
    path = os.path.join(folder, f"{topology}{npus}.yml")
    with open(path, "w") as f:
        f.write(f"topology: [ {topology} ]\nnpus_count: [ {npus} ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n")
    return path


def cases(fabricsim, work, quick):
    p = lambda name: os.path.join(ROOT, "platforms", name)
    out = []
    for name in PLATFORMS:
        out.append((f"collbench {name} all_reduce 1M-64M",
                    ["collbench", "--platform", p(name), "-b", "1M", "-e", "64M"], "collbench"))
    out.append(("collbench ring8 all_to_all 1M-64M",
                ["collbench", "--platform", p("ring8.yaml"), "--op", "all_to_all", "-b", "1M", "-e", "64M"],
                "collbench"))
    out.append(("collbench ring8 1M, 256 chunks",
                ["collbench", "--platform", p("ring8.yaml"), "--chunks", "256", "-b", "1M", "-e", "16M"], "collbench"))
    out.append(("sample allreduce_8npus_64MiB on ring8",
                ["run", "--platform", p("ring8.yaml"), "--workload",
                 os.path.join(ROOT, "traces/samples/allreduce_8npus_64MiB/allreduce")], "run"))
    out.append(("sample offload_8npus on pool8",
                ["run", "--platform", p("pool8.yaml"), "--workload",
                 os.path.join(ROOT, "traces/samples/offload_8npus/offload")], "run"))
    out.append(("model resnet50 on dgx_h100", ["run", "--platform", p("dgx_h100.yaml"), "--model", "resnet50"], "run"))
    out.append(("model llama3-8b tp4 pp2 on dgx_h100",
                ["run", "--platform", p("dgx_h100.yaml"), "--model", "llama3-8b", "--set", "training.tp=4",
                 "--set", "training.pp=2"], "run"))
    if not quick:
        out.append(("model megatron-1.7b on selene, 32 GPUs",
                    ["run", "--platform", p("selene.yaml"), "--npus", "32", "--model", "megatron-1.7b"], "run"))
        for topology in ("Ring", "Switch"):
            net = astra(work, topology, 1024)
            prefix = os.path.join(work, "ar1024")
            if not os.path.exists(prefix + ".0.et"):
                subprocess.run([fabricsim, "gen", "collective", "--npus", "1024", "--type", "all_reduce", "--bytes",
                                "1073741824", "--out", prefix], check=True, capture_output=True)
            out.append((f"{topology} 1,024 NPUs, 1 GiB ring all-reduce, 4 chunks",
                        ["run", "--chunks", "4", "--algorithm", "all_reduce=ring", "--platform", net, "--workload",
                         prefix], "run"))
    return out


def measure(fabricsim, args, kind, work):
    out = os.path.join(work, "out.json")
    flag = "--json" if kind == "collbench" else "--report"
    cmd = ["/usr/bin/time", "-f", "%e %M", fabricsim] + args + ["--quiet", flag, out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    wall, kb = p.stderr.strip().splitlines()[-1].split()
    with open(out) as f:
        est = json.load(f)["estimate"]
    return est, float(wall), float(kb) * 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fabricsim", default=os.path.join(ROOT, "build/platforms/fabricsim"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory() as work:
        print("| run | messages | frames | operations | wall est. | wall measured | ratio | memory est. | "
              "peak measured | ratio |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for label, args, kind in cases(a.fabricsim, work, a.quick):
            est, wall, peak = measure(a.fabricsim, args, kind, work)
            # Below 0.1 s a run is its start-up and /usr/bin/time's 10 ms
            # resolution: compared from 0.1 s up.
            tr = max(est["wall_seconds"], 0.1) / max(wall, 0.1)
            mr = est["memory_bytes"] / peak
            ok = 1 / 3 <= tr <= 3 and 0.5 <= mr <= 2
            bad += not ok
            print(f"| {label} | {est['messages']:.3g} | {est['frames']:.3g} | {est['operations']:.3g} | "
                  f"{est['wall_seconds']:.2f} s | {wall:.2f} s | {tr:.2f} | {est['memory_bytes'] / 2**20:.0f} MiB | "
                  f"{peak / 2**20:.0f} MiB | {mr:.2f} |{'' if ok else ' **outside**'}", flush=True)
    print(f"\n{bad} row(s) outside the bounds (wall time within 3x, memory within 2x)")
    return 1 if a.check and bad else 0


if __name__ == "__main__":
    sys.exit(main())
