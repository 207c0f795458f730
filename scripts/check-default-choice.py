#!/usr/bin/env python3
"""Is fabricsim's default algorithm choice the fastest it offers?

For each platform, group size and collective, runs `fabricsim collbench` once
with the default choice and once with every algorithm, over a sweep of sizes,
and prints: what the default ran, its time, the fastest algorithm and its
time, and the ratio. Exits 1 when the default is more than --tolerance
slower than the fastest at some point (every point is still printed).

  scripts/check-default-choice.py --fabricsim build/platforms/fabricsim \\
      --platform platforms/dgx_h100.yaml --npus 2,4,8

The default checked is `best`'s, the fastest fabricsim offers (`--set
collectives.library=best` on every run, whatever the platform names; NCCL's
choice, `library: nccl`, is checked against NCCL's tuning rules instead, in
tests/test_nccl_tuner.cpp). `hierarchical` runs the levels the cost model picks; --levels adds a
hierarchical all-reduce on levels of your choosing (NCCL's NVLS-tree is
`--levels in_switch,double_binary_tree`), which the default must then also
keep up with.

With --training DP,TP it also runs a training step of `fabricsim gen training
--dp DP --tp TP` on each platform, by default and with every algorithm for
all-reduce, all-gather and reduce-scatter alike, and compares the step times.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# Every run weighs the default of the `best` library (see above).
LIBRARY = ["--set", "collectives.library=best"]

ALGORITHMS = ["ring", "direct", "halving_doubling", "double_binary_tree", "in_switch", "hierarchical", "pat"]
OPS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"]


def collbench(fabricsim, platform, npus, op, algo, first, last, factor, scratch, levels=None, stride=1):
    """{size: (time_us, what ran)}, or None when the algorithm does not apply."""
    out = os.path.join(scratch, "rows.json")
    cmd = [fabricsim, "collbench", "--platform", platform, "--op", op, "-b", first, "-e", last, "-f", factor,
           "--quiet", "--json", out] + LIBRARY
    if npus:
        cmd += ["--npus", str(npus)]
    if stride > 1:
        cmd += ["--stride", str(stride)]
    if algo:
        cmd += ["--algo", algo]
    if levels:
        cmd += ["--levels", levels]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 2:
        return None  # the algorithm does not apply here
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    rows = {}
    for row in json.load(open(out))["rows"]:
        what = row["algorithm"]
        if "levels" in row:
            what += "(" + ",".join(row["levels"]) + ")"
        if "protocol" in row:
            what += "/" + row["protocol"]
        rows[row["size_bytes"]] = (row["time_us"], what)
    return rows


def training_step(fabricsim, platform, dp, tp, scratch):
    """[(what, step ms)]: the default first, then each algorithm everywhere."""
    prefix = os.path.join(scratch, "step")
    subprocess.run([fabricsim, "gen", "training", "--dp", str(dp), "--tp", str(tp), "--out", prefix],
                   check=True, capture_output=True)
    report = os.path.join(scratch, "report.json")
    out = []
    for algo in [None] + ALGORITHMS:
        cmd = [fabricsim, "run", "--quiet", "--platform", platform, "--workload", prefix,
               "--comm-groups", prefix + ".comm_groups.json", "--report", report] + LIBRARY
        if algo:
            for op in ["all_reduce", "all_gather", "reduce_scatter"]:
                cmd += ["--algorithm", f"{op}={algo}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode == 2:
            continue  # the algorithm does not apply to some collective of the step
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
        step = max(n["finish_ns"] for n in json.load(open(report))["npus"]) / 1e6
        out.append((algo or "default", step))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fabricsim", default="build/platforms/fabricsim" if os.path.exists("build/platforms/fabricsim") else "fabricsim")
    ap.add_argument("--platform", action="append", required=True, help="repeatable")
    ap.add_argument("--npus", default="", help="comma-separated group sizes (the first N NPUs); default: all")
    ap.add_argument("--stride", type=int, default=1,
                    help="the group: NPUs 0, S, 2S, ... (8 on 8-GPU nodes: one GPU per node, a rail)")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("-b", "--first", default="1K")
    ap.add_argument("-e", "--last", default="256M")
    ap.add_argument("-f", "--factor", default="8")
    ap.add_argument("--tolerance", type=float, default=0.05, help="allowed shortfall (default 0.05: 5%%)")
    ap.add_argument("--training", default="", help="DP,TP: also a training step of gen training (see above)")
    ap.add_argument("--no-sweep", action="store_true", help="only the training step")
    ap.add_argument("--levels", action="append", default=[],
                    help="also a hierarchical all-reduce with these levels, e.g. in_switch,double_binary_tree "
                         "(NCCL's NVLS-tree; repeatable)")
    args = ap.parse_args()
    if args.training and args.stride > 1:
        # The training step runs on the whole platform: a stride would not apply to it.
        ap.error(f"--training {args.training} with --stride {args.stride}: the training step runs on every NPU; "
                 "check it in a call without --stride")

    worst = 0.0
    misses = 0
    print(f"{'platform':<22} {'npus':>4} {'op':<15} {'size':>11} {'default':<44} {'us':>10} "
          f"{'fastest':<36} {'us':>10} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as scratch:
        for platform in ([] if args.no_sweep else args.platform):
            for npus in [int(n) for n in args.npus.split(",") if n] or [0]:
                for op in args.ops.split(","):
                    chosen = collbench(args.fabricsim, platform, npus, op, None, args.first, args.last, args.factor,
                                       scratch, stride=args.stride)
                    others = {}
                    for algo in ALGORITHMS:
                        rows = collbench(args.fabricsim, platform, npus, op, algo, args.first, args.last,
                                         args.factor, scratch, stride=args.stride)
                        if rows:
                            others[algo] = rows
                    for levels in args.levels if op == "all_reduce" else []:
                        rows = collbench(args.fabricsim, platform, npus, op, "hierarchical", args.first, args.last,
                                         args.factor, scratch, levels, stride=args.stride)
                        if rows:
                            others["hierarchical " + levels] = rows
                    for size in sorted(chosen):
                        t, what = chosen[size]
                        best_t, best_what = min((rows[size] for rows in others.values() if size in rows),
                                                default=(t, what))
                        ratio = t / best_t if best_t > 0 else 1.0
                        worst = max(worst, ratio)
                        flag = ""
                        if ratio > 1 + args.tolerance:
                            misses += 1
                            flag = "  <- over"
                        print(f"{os.path.basename(platform):<22} {(str(npus) if npus else 'all') + (f'/{args.stride}' if args.stride > 1 else ''):>4} {op:<15} {size:>11} {what:<44} "
                              f"{t:>10.2f} {best_what:<36} {best_t:>10.2f} {ratio:>6.3f}{flag}", flush=True)
        if args.training:
            dp, tp = (int(x) for x in args.training.split(","))
            for platform in args.platform:
                steps = training_step(args.fabricsim, platform, dp, tp, scratch)
                default = steps[0][1]
                best_what, best = min(steps, key=lambda s: s[1])
                ratio = default / best
                worst = max(worst, ratio)
                flag = ""
                if ratio > 1 + args.tolerance:
                    misses += 1
                    flag = "  <- over"
                others = ", ".join(f"{w} {t:.2f}" for w, t in steps[1:])
                print(f"{os.path.basename(platform)} DP{dp} x TP{tp} training step: default {default:.2f} ms; "
                      f"all {others} ms; ratio to the fastest ({best_what}) {ratio:.3f}{flag}", flush=True)
    print(f"# worst ratio {worst:.3f}; {misses} point(s) more than {args.tolerance:.0%} behind the fastest")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
