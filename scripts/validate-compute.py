#!/usr/bin/python3
"""Checks the compute model of the H100 platforms against measured kernels
and a real PyTorch step, and prints docs/validation.md's compute tables:
what, model, measured, error.

1. `fabricsim calibrate` on ../shared/reference/h100-ops.csv and the three
   lm-head GEMMs of gpt2.0.et (the rows platforms/compute/h100.yaml was
   fitted on): per class, the fit's geometric-mean error and a two-fold
   cross-validated one.
2. ../shared/traces/pytorch-h100/gpt2.0.et on platforms/dgx_h100.yaml (one
   GPU): GPU busy time, every GPU node timed by the model, against the
   trace's recorded kernel time (its --replay run).

Usage: scripts/validate-compute.py [--fabricsim build/platforms/fabricsim] [--shared ../shared]
Exits 1 if the step is more than 15% off or a class is past its bound.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(fabricsim, *args):
    return subprocess.run([fabricsim, *args], check=True, capture_output=True, text=True).stdout


LM_HEAD = {495, 571, 579}  # gpt2.0.et's unaligned GEMMs, the rows gemm_unaligned was fitted on


def gpu_run(fabricsim, trace, replay):
    """GPU busy (ms), the report's compute-node counts, and each GPU node's time (us) from the timeline."""
    with tempfile.TemporaryDirectory() as tmp:
        report, timeline = os.path.join(tmp, "r.json"), os.path.join(tmp, "t.json")
        args = ["run", "--quiet", "--platform", "platforms/dgx_h100.yaml", "--npus", "1", "--workload", trace,
                "--report", report, "--timeline", timeline]
        run(fabricsim, *(args + (["--replay"] if replay else [])))
        with open(report) as f:
            npu = json.load(f)["npus"][0]
        with open(timeline) as f:
            events = json.load(f)
        events = events["traceEvents"] if isinstance(events, dict) else events
        gpu = next(e["tid"] for e in events if e.get("name") == "thread_name" and e["args"]["name"] == "GPU compute")
        per_node = {}
        for e in events:
            if e.get("ph") == "X" and e.get("tid") == gpu:
                per_node[e["args"]["node"]] = per_node.get(e["args"]["node"], 0) + e["dur"]
        return npu["gpu_busy_ns"] / 1e6, npu["compute_nodes"], per_node


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fabricsim", default="build/platforms/fabricsim" if os.path.exists("build/platforms/fabricsim") else "fabricsim")
    p.add_argument("--shared", default="../shared")
    a = p.parse_args()
    failed = []
    table = run(a.fabricsim, "calibrate", "--platform", "platforms/dgx_h100.yaml",
                "--csv", os.path.join(a.shared, "reference/h100-ops.csv"),
                "--csv", "platforms/compute/gpt2-lm-head.csv", "--out", os.devnull)
    print("Kernel classes on h100-ops.csv (bounds: GEMM and attention 10%, elementwise/norm/copy 15%;")
    print("gemm_unaligned: the three gpt2 lm-head GEMMs, no bound):")
    for line in table.splitlines():
        if not line.startswith("|"):
            continue
        print(line)
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in ("class", "---") or cells[0].startswith("-") or cells[0] == "gemm_unaligned":
            continue
        bound = 15 if cells[0] in ("elementwise", "norm_forward", "norm_backward", "copy") else 10
        if float(cells[5].rstrip("%")) > bound:
            failed.append(f"{cells[0]}: {cells[5]}")

    trace = os.path.join(a.shared, "traces/pytorch-h100/gpt2")
    model, counts, model_nodes = gpu_run(a.fabricsim, trace, False)
    recorded, _, recorded_nodes = gpu_run(a.fabricsim, trace, True)
    err = (model - recorded) / recorded * 100
    if abs(err) > 15:
        failed.append(f"gpt2 GPU busy: {err:+.1f}%")
    print()
    print("| what | model | measured (Kineto) | error |")
    print("|---|---|---|---|")
    print(f"| gpt2.0.et GPU busy, one H100 ({counts['gpu_modelled']} GPU nodes modelled, "
          f"{counts['gpu_part_of_modelled_op']} later kernels of their ops, {counts['gpu_recorded']} recorded) "
          f"| {model:.2f} ms | {recorded:.2f} ms | {err:+.1f}% |")
    for label, nodes in [("the three lm-head GEMMs (fitted on)", LM_HEAD),
                         ("every other GPU node (held out)", set(recorded_nodes) - LM_HEAD)]:
        m = sum(model_nodes.get(n, 0) for n in nodes) / 1000
        r = sum(recorded_nodes.get(n, 0) for n in nodes) / 1000
        print(f"| of which {label} | {m:.2f} ms | {r:.2f} ms | {(m - r) / r * 100:+.1f}% |")
    if failed:
        print()
        print("outside the bounds: " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
