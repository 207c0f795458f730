#!/usr/bin/python3
"""Runs Megatron-LM's weak-scaling rows (../shared/reference/megatron-weak-scaling.md,
Narayanan et al. SC'21 Table 1) as generated training steps on platforms/selene.yaml
and prints docs/validation.md's table: the row, TFLOP/s per GPU (Megatron's count:
its equation 3 over the step time and the GPUs), predicted and published, the
error, the wall time and peak memory of the simulation, and why a row does not run.

Each row is the preset traces/models/megatron-<size>.yaml: the table's model,
tp, pp and batch; what the table does not give (microbatch 1, no interleaving,
fp16, gradients all-reduced after the backward pass) is on the preset's lines
with its source. Nothing is fitted to the table.

Usage: scripts/validate-megatron.py [--fabricsim build/platforms/fabricsim]
                                    [--rows 1.7b,3.6b] [--budget SECONDS]
                                    [--fabric-model packet|flow]
A row whose simulation would exceed --budget (default 600 s) is stopped and
marked as such.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROWS = [  # size, GPUs, published TFLOP/s per GPU (Table 1)
    ("1.7b", 32, 137), ("3.6b", 64, 138), ("7.5b", 128, 142), ("18.4b", 256, 135), ("39.1b", 512, 138),
    ("76.1b", 1024, 140), ("145.6b", 1536, 148), ("310.1b", 1920, 155), ("529.6b", 2520, 163), ("1t", 3072, 163),
]


def run_row(fabricsim, platform, size, gpus, budget, extra):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    cmd = [fabricsim, "run", "--quiet", "--platform", platform, "--npus", str(gpus), "--model",
           "megatron-" + size, "--report", out] + extra
    start = time.time()
    err_path = out + ".err"
    with open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        # wait4 gives this child's own peak memory (not the largest of all).
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.time() - start > budget:
                proc.kill()
                os.wait4(proc.pid, 0)
                os.remove(err_path)
                return None, time.time() - start, 0, "stopped at the %d s budget" % budget
            time.sleep(0.2)
    wall = time.time() - start
    peak_kb = usage.ru_maxrss
    returncode = os.waitstatus_to_exitcode(status)
    with open(err_path) as f:
        stderr = f.read()
    os.remove(err_path)
    try:
        if returncode != 0:
            return None, wall, peak_kb, stderr.strip().splitlines()[-1] if stderr.strip() else "exit %d" % returncode
        with open(out) as f:
            step = json.load(f)["step"]
        return step, wall, peak_kb, ""
    finally:
        if os.path.exists(out):
            os.remove(out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fabricsim", default="build/platforms/fabricsim" if os.path.exists("build/platforms/fabricsim") else "fabricsim")
    p.add_argument("--platform", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "platforms", "selene.yaml"))
    p.add_argument("--rows", default="", help="comma-separated sizes (1.7b,3.6b,...); default all")
    p.add_argument("--budget", type=float, default=600, help="seconds per row before it is stopped")
    p.add_argument("--set", action="append", default=[], help="passed to every run (training.KEY=VALUE, ...)")
    p.add_argument("--fabric-model", choices=["packet", "flow"], default="packet",
                   help="every fabric as packets (the platform's default) or as flows (docs/flow-model.md)")
    a = p.parse_args()
    wanted = set(a.rows.split(",")) if a.rows else None
    extra = ["--fabric-model", a.fabric_model]
    for s in a.set:
        extra += ["--set", s]
    print("| model | GPUs | tp x pp x dp | step (s) | predicted TFLOP/s per GPU | published | error | wall (s) | peak memory (MB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    errors = []
    for size, gpus, published in ROWS:
        if wanted and size not in wanted:
            continue
        step, wall, peak_kb, why = run_row(a.fabricsim, a.platform, size, gpus, a.budget, extra)
        if step is None:
            print("| %s | %d | | | not run: %s | %d | | %.0f | |" % (size, gpus, why, published, wall))
            continue
        layout = step["layout"].split("GPUs as ")[1].split(",")[0]
        tf = step["tflops_per_gpu"]
        err = (tf / published - 1) * 100
        errors.append(abs(err))
        print("| %s | %d | %s | %.2f | %.1f | %d | %+.1f%% | %.0f | %.0f |" %
              (size, gpus, layout, step["step_time_ns"] / 1e9, tf, published, err, wall, peak_kb / 1024))
        sys.stdout.flush()
    if errors:
        print("\nrows run: %d, largest error %.1f%%" % (len(errors), max(errors)))


if __name__ == "__main__":
    main()
