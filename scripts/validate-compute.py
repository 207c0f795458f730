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


def busy_ms(fabricsim, trace, replay):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    try:
        args = ["run", "--quiet", "--platform", "platforms/dgx_h100.yaml", "--npus", "1", "--workload", trace,
                "--report", out]
        run(fabricsim, *(args + (["--replay"] if replay else [])))
        with open(out) as f:
            npu = json.load(f)["npus"][0]
        return npu["gpu_busy_ns"] / 1e6, npu["compute_nodes"]
    finally:
        os.remove(out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fabricsim", default="build/platforms/fabricsim")
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
    model, counts = busy_ms(a.fabricsim, trace, False)
    recorded, _ = busy_ms(a.fabricsim, trace, True)
    err = (model - recorded) / recorded * 100
    if abs(err) > 15:
        failed.append(f"gpt2 GPU busy: {err:+.1f}%")
    print()
    print("| what | model | measured (Kineto) | error |")
    print("|---|---|---|---|")
    print(f"| gpt2.0.et GPU busy, one H100 ({counts['gpu_modelled']} GPU nodes modelled, "
          f"{counts['gpu_part_of_modelled_op']} later kernels of their ops, {counts['gpu_recorded']} recorded) "
          f"| {model:.2f} ms | {recorded:.2f} ms | {err:+.1f}% |")
    if failed:
        print()
        print("outside the bounds: " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
