#!/usr/bin/python3
"""Does congestion control change collective times on a RoCE cluster?

Runs the sweep docs/examples/sweeps/roce-congestion-control.yaml (four
schemes x four collectives on platforms/dgx_h100_4node_roce.yaml) with
`fabricsim sweep`, prints a table (each collective's time under each scheme,
and against PFC alone), and writes the sweep's results.csv and a grouped bar
plot beside --out.

  scripts/study-roce-cc.py [--fabricsim F] [--work DIR] [--out docs/img/roce-congestion-control]

The sweep's folder (--work, default build/study-roce-cc) keeps every point's
JSON with its provenance; a second run only runs missing points.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys

SPEC = "docs/examples/sweeps/roce-congestion-control.yaml"
SCHEMES = ["pfc", "dcqcn", "dcqcn-scaled", "dctcp"]
WORKLOADS = ["ring all-reduce 256 MiB", "hierarchical all-reduce 256 MiB", "all-to-all 64 MiB", "gather (incast) 64 MiB"]


def scheme_of(row):
    cc = row["set.fabrics.1.transport.congestion_control"]
    if cc == "none":
        return "pfc"
    if cc == "dctcp":
        return "dctcp"
    return "dcqcn-scaled" if row["set.fabrics.1.transport.dcqcn_rate_ai"].startswith("400") else "dcqcn"


def workload_of(row):
    return {("all_reduce", "ring"): WORKLOADS[0], ("all_reduce", "hierarchical"): WORKLOADS[1],
            ("all_to_all", "direct"): WORKLOADS[2], ("gather", "direct"): WORKLOADS[3]}[(row["op"], row["algorithm"])]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fabricsim", default="build/platforms/fabricsim")
    p.add_argument("--work", default="build/study-roce-cc")
    p.add_argument("--out", default="docs/img/roce-congestion-control", help="writes OUT.csv and OUT.png")
    p.add_argument("-j", default="2")
    a = p.parse_args()
    r = subprocess.run([a.fabricsim, "sweep", SPEC, "--out", a.work, "-j", a.j, "-q"])
    if r.returncode != 0:
        sys.exit(f"the sweep failed (exit {r.returncode}); see {a.work}")
    rows = list(csv.DictReader(open(os.path.join(a.work, "results.csv"))))
    times = {}
    for row in rows:
        if row["status"] != "ok":
            sys.exit(f"point {row['index']} did not finish: {row['status']}")
        times[(workload_of(row), scheme_of(row))] = float(row["rows.0.time_us"])

    print("| collective | " + " | ".join(SCHEMES) + " |")
    print("|---|" + "---|" * len(SCHEMES))
    for w in WORKLOADS:
        base = times[(w, "pfc")]
        cells = [f"{times[(w, s)]:,.0f} us" + ("" if s == "pfc" else f" ({times[(w, s)] / base:.2f}x)") for s in SCHEMES]
        print(f"| {w} | " + " | ".join(cells) + " |")

    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    shutil.copyfile(os.path.join(a.work, "results.csv"), a.out + ".csv")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 4.2))
    width = 0.2
    for k, s in enumerate(SCHEMES):
        xs = [i + (k - 1.5) * width for i in range(len(WORKLOADS))]
        ys = [times[(w, s)] / times[(w, "pfc")] for w in WORKLOADS]
        ax.bar(xs, ys, width, label=s)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(WORKLOADS)))
    ax.set_xticklabels(WORKLOADS, fontsize=8)
    ax.set_ylabel("time / time under PFC alone")
    ax.set_title("32 H100s, 400 GbE RoCE rail-optimized fat tree (dgx_h100_4node_roce.yaml)", fontsize=9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=110)
    print(f"wrote {a.out}.csv and {a.out}.png")


if __name__ == "__main__":
    main()
