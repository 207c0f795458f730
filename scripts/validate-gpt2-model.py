#!/usr/bin/python3
"""The generated GPT-2 step (preset traces/models/gpt2-h100-trace.yaml: the model and
batch of ../shared/traces/pytorch-h100/gpt2.0.et, written as PyTorch eager runs it)
against the real trace it describes, on one H100 of platforms/dgx_h100.yaml, per
kernel class: the generated ops timed by the compute model, the real trace's ops
timed by the same model, and the real trace's recorded (Kineto) kernel times.
The first two differ only where the generator writes other ops than PyTorch did;
the third is the measurement. Prints docs/validation.md's table.

Usage: scripts/validate-gpt2-model.py [--fabricsim build/platforms/fabricsim] [--shared ../shared]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def by_class(fabricsim, args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        subprocess.run([fabricsim, "run", "--quiet", "--platform", os.path.join(HERE, "..", "platforms", "dgx_h100.yaml"),
                        "--npus", "1", "--report", out] + args, check=True, stderr=subprocess.DEVNULL)
        with open(out) as f:
            npu = json.load(f)["npus"][0]
    return npu["gpu_by_class"], npu["gpu_busy_ns"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fabricsim", default=os.path.join(HERE, "..", "build", "platforms", "fabricsim"))
    p.add_argument("--shared", default=os.path.join(HERE, "..", "..", "shared"))
    a = p.parse_args()
    trace = os.path.join(a.shared, "traces", "pytorch-h100", "gpt2")
    if not os.path.exists(trace + ".0.et"):
        sys.exit("no %s.0.et: give --shared" % trace)
    gen, gen_total = by_class(a.fabricsim, ["--model", "gpt2-h100-trace"])
    mod, mod_total = by_class(a.fabricsim, ["--workload", trace])
    rec, rec_total = by_class(a.fabricsim, ["--replay", "--workload", trace])
    print("| kernel class | generated, modelled (ms) | real trace, modelled (ms) | real trace, recorded (ms) | generated against recorded |")
    print("|---|---|---|---|---|")
    for cls in sorted(set(gen) | set(mod) | set(rec)):
        g = gen.get(cls, {}).get("busy_ns", 0) / 1e6
        m = mod.get(cls, {}).get("busy_ns", 0) / 1e6
        r = rec.get(cls, {}).get("busy_ns", 0) / 1e6
        if g == m == r == 0:
            continue
        err = "%+.1f%%" % (100 * (g / r - 1)) if r > 0 else "-"
        print("| %s | %.3f | %.3f | %.3f | %s |" % (cls, g, m, r, err))
    print("| whole step (GPU busy) | %.3f | %.3f | %.3f | %+.1f%% |" % (gen_total / 1e6, mod_total / 1e6, rec_total / 1e6,
                                                                    100 * (gen_total / rec_total - 1)))


if __name__ == "__main__":
    main()
