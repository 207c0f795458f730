#!/usr/bin/python3
"""Runs every ASTRA-sim example in ../shared/astra-sim (its own files,
unchanged, from that folder, as ASTRA-sim's run scripts combine them) and
prints docs/validation.md's table: workload, system, network, fabricsim,
ASTRA-sim congestion-aware (CA) and congestion-unaware (CU), error against CU.

Usage: scripts/validate-astra.py [--fabricsim build/platforms/fabricsim] [--shared ../shared] [--check]
--check exits 1 unless every run exits 0 and the rows where fabricsim and
ASTRA-sim's congestion-unaware backend model the same physics (1-D rings)
agree within 1%.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# ASTRA-sim's finish times (ns), ../shared/astra-sim/README.md: (CA, CU).
RING = {
    ("all_reduce", 4): 43000, ("all_reduce", 8): 64440, ("all_reduce", 16): 99640,
    ("reduce_scatter", 4): 22240, ("reduce_scatter", 8): 33080, ("reduce_scatter", 16): 50740,
    ("all_gather", 4): 64744, ("all_gather", 8): 151016, ("all_gather", 16): 323560,
    ("all_to_all", 4): 41560, ("all_to_all", 8): 125480, ("all_to_all", 16): 391240,
}
HGX = {"all_reduce": (57426, 55222), "all_gather": (44058, 34908), "reduce_scatter": (28950, 27810),
       "all_to_all": (114000, 109668)}
CUSTOM_CA = 90174


def run(fabricsim, folder, network, system, workload):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    try:
        p = subprocess.run([fabricsim, "run", "--quiet", "--platform", network, "--system", system,
                            "--remote-memory", "examples/remote_memory/analytical/no_memory_expansion.json",
                            "--workload", workload, "--report", out],
                           cwd=folder, capture_output=True, text=True)
        if p.returncode != 0:
            return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
        with open(out) as f:
            return json.load(f)["sim_time_ns"], None
    finally:
        os.remove(out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fabricsim", default="build/platforms/fabricsim" if os.path.exists("build/platforms/fabricsim") else "fabricsim")
    p.add_argument("--shared", default="../shared")
    p.add_argument("--check", action="store_true")
    a = p.parse_args()
    fabricsim = os.path.abspath(a.fabricsim)
    folder = os.path.join(a.shared, "astra-sim")
    micro = "examples/workload/microbenchmarks"
    failed = []
    print("| workload | system | network | fabricsim (ns) | ASTRA-sim CA | ASTRA-sim CU | error vs CU |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for (op, n), cu in RING.items():
        rows.append((op, n, "Ring_4chunks", f"Ring_{n}npus", cu, cu, True))
    for op, (ca, cu) in HGX.items():
        rows.append((op, 8, "HGX-H100-validated", "HGX-H100-validated", ca, cu, False))
    for op, n, system, network, ca, cu, bounded in rows:
        t, err = run(fabricsim, folder, f"examples/network/analytical/{network}.yml",
                     f"examples/system/native_collectives/{system}.json", f"{micro}/{op}/{n}npus_1MB/{op}")
        if t is None:
            failed.append(f"{op} {n} {system}: {err}")
            print(f"| {op} {n} NPUs | {system} | {network} | refused: {err} | {ca} | {cu} | - |")
            continue
        e = (t - cu) / cu * 100
        if bounded and abs(e) > 1:
            failed.append(f"{op} {n} {system}: {e:+.2f}%")
        print(f"| {op} {n} NPUs | {system} | {network} | {t:.0f} | {ca} | {cu} | {e:+.2f}% |")
    t, err = run(fabricsim, folder, "examples/network/analytical/Ring_8npus.yml",
                 "examples/system/custom_collectives/custom_collective.json", f"{micro}/all_reduce/8npus_1MB/all_reduce")
    if t is None:
        failed.append(f"custom collective: {err}")
        print(f"| all_reduce 8 NPUs | custom_collective | Ring_8npus | refused: {err} | {CUSTOM_CA} | - | - |")
    else:
        print(f"| all_reduce 8 NPUs | custom_collective | Ring_8npus | {t:.0f} | {CUSTOM_CA} | - | "
              f"{(t - CUSTOM_CA) / CUSTOM_CA * 100:+.2f}% vs CA |")
    if failed:
        print()
        print("failed: " + "; ".join(failed))
    return 1 if failed and a.check else 0


if __name__ == "__main__":
    sys.exit(main())
