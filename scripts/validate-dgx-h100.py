#!/usr/bin/python3
"""Reproduces docs/validation.md's table: fabricsim's collbench on
platforms/dgx_h100.yaml against the published DGX H100 all-reduce figures in
../shared/reference/dgx-h100.md (busbw in GB/s, nccl-tests' definition).

Usage: scripts/validate-dgx-h100.py [--fabricsim build/platforms/fabricsim]
           [--platform platforms/dgx_h100.yaml] [--markdown]
Exits 1 if a figure at 256 MiB or above is more than 10% off its reference (issue 47's bound for every published figure).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# (algorithm, GPUs, reference busbw range in GB/s)
REFERENCE = [
    ("ring", 8, (365, 370)),
    ("ring", 7, (365, 370)),
    ("ring", 6, (365, 370)),
    ("ring", 5, (365, 370)),
    ("in_switch", 8, (480, 480)),
    ("in_switch", 7, (460, 460)),
    ("in_switch", 6, (440, 440)),
    ("in_switch", 5, (420, 420)),
]
SIZES = ["256M", "1G", "4G"]


def sweep(fabricsim, platform, algo, npus, lo, hi, factor=4, op="all_reduce"):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    try:
        subprocess.run([fabricsim, "collbench", "--quiet", "--platform", platform, "--op", op, "--algo", algo,
                        "--npus", str(npus), "-b", lo, "-e", hi, "-f", str(factor), "--json", out], check=True)
        with open(out) as f:
            return json.load(f)["rows"]
    finally:
        os.remove(out)


def off(value, ref):
    lo, hi = ref
    if value < lo:
        return (value - lo) / lo * 100
    if value > hi:
        return (value - hi) / hi * 100
    return 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fabricsim", default="build/platforms/fabricsim" if os.path.exists("build/platforms/fabricsim") else "fabricsim")
    p.add_argument("--platform", default="platforms/dgx_h100.yaml")
    a = p.parse_args()

    worst = 0.0
    print("| algorithm | GPUs | reference busbw | " + " | ".join(f"{s}B" for s in SIZES) + " | worst off |")
    print("|---|---|---|" + "---|" * len(SIZES) + "---|")
    for algo, n, ref in REFERENCE:
        rows = sweep(a.fabricsim, a.platform, algo, n, SIZES[0], SIZES[-1])
        values = [r["busbw_GBps"] for r in rows]
        devs = [off(v, ref) for v in values]
        w = max(devs, key=abs)
        worst = max(worst, abs(w))
        ref_text = f"{ref[0]}" if ref[0] == ref[1] else f"{ref[0]}-{ref[1]}"
        print(f"| {'NVLS (in_switch)' if algo == 'in_switch' else algo} | {n} | {ref_text} | "
              + " | ".join(f"{v:.1f}" for v in values) + f" | {w:+.1f}% |")

    print()
    print("Small messages, 2 GPUs, all-reduce (the reference: 5.56 us for 128 B with NVLS):")
    print("| size | NVLS (in_switch) time | ring time |")
    print("|---|---|---|")
    nvls = sweep(a.fabricsim, a.platform, "in_switch", 2, "128", "8M", 8)
    ring = sweep(a.fabricsim, a.platform, "ring", 2, "128", "8M", 8)
    for x, y in zip(nvls, ring):
        print(f"| {x['size_bytes']} B | {x['time_us']:.2f} us | {y['time_us']:.2f} us |")
    print()
    print(f"largest deviation at 256 MiB and above: {worst:.1f}%")
    return 1 if worst > 10.0 else 0


if __name__ == "__main__":
    sys.exit(main())
