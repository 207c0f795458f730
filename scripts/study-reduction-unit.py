#!/usr/bin/python3
"""Where does the switch reduction unit become the bottleneck?

Runs the sweep docs/examples/sweeps/reduction-unit.yaml (every NVSwitch
unit's reduction throughput x its aggregation slots, the in-switch all-reduce
of 256 MiB on platforms/dgx_h100.yaml) with `fabricsim sweep`, one ring
all-reduce on the same platform for reference, and writes the sweep's
results.csv with a ring column and a plot: bus bandwidth against throughput,
one line per slot count.

  scripts/study-reduction-unit.py [--fabricsim F] [--work DIR] [--out docs/img/reduction-unit-study]
  scripts/study-reduction-unit.py --check [--points N]   # N rows of the shipped CSV against fresh runs

The sweep's folder (--work, default build/study-reduction-unit) keeps every
point's JSON with its provenance; a second run only runs missing points.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

SPEC = "docs/examples/sweeps/reduction-unit.yaml"
PLATFORM = "platforms/dgx_h100.yaml"
SIZE = "256M"
SLOTS = "set.fabrics.0.switch.reduction.slots"
THROUGHPUT = "set.fabrics.0.switch.reduction.throughput"


def collbench(fabricsim, algo, sets=()):
    """busbw and time of one all-reduce of SIZE on PLATFORM."""
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        cmd = [fabricsim, "collbench", "--quiet", "--platform", PLATFORM, "--algo", algo, "-b", SIZE, "-e", SIZE,
               "--json", tmp.name]
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True)
        row = json.load(open(tmp.name))["rows"][0]
    return row["busbw_GBps"], row["time_us"]


def gbps(text):
    return float(text.split()[0])


def check(fabricsim, csv_path, points):
    """Reruns `points` rows spread over the shipped CSV; each must agree to 0.1%."""
    rows = list(csv.DictReader(open(csv_path)))
    picks = [rows[round(i * (len(rows) - 1) / max(1, points - 1))] for i in range(points)]
    worst = 0.0
    print(f"{'slots':>5} {'throughput':>10} {'shipped':>9} {'fresh':>9} {'error':>8}")
    for r in picks:
        busbw, _ = collbench(fabricsim, "in_switch",
                             [f"fabrics.0.switch.reduction.slots={r[SLOTS]}",
                              f"fabrics.0.switch.reduction.throughput={r[THROUGHPUT]}"])
        shipped = float(r["rows.0.busbw_GBps"])
        err = (busbw - shipped) / shipped
        worst = max(worst, abs(err))
        print(f"{r[SLOTS]:>5} {r[THROUGHPUT]:>10} {shipped:9.2f} {busbw:9.2f} {100 * err:+7.3f}%")
    ring, _ = collbench(fabricsim, "ring")
    shipped_ring = float(rows[0]["ring_busbw_GBps"])
    err = (ring - shipped_ring) / shipped_ring
    worst = max(worst, abs(err))
    print(f"{'ring':>5} {'':>10} {shipped_ring:9.2f} {ring:9.2f} {100 * err:+7.3f}%")
    if worst > 0.001:
        sys.exit(f"{csv_path} no longer matches the model (worst {100 * worst:.3f}%): regenerate it with {sys.argv[0]}")
    print(f"{csv_path}: {points} points and the ring agree with fresh runs within 0.1%")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_bin = "build/platforms/fabricsim" if os.path.exists("build/platforms/fabricsim") else "fabricsim"
    p.add_argument("--fabricsim", default=default_bin)
    p.add_argument("--work", default="build/study-reduction-unit", help="the sweep's folder")
    p.add_argument("--out", default="docs/img/reduction-unit-study", help="prefix of the .csv and .png")
    p.add_argument("--check", action="store_true", help="compare rows of the shipped CSV with fresh runs")
    p.add_argument("--points", type=int, default=4, help="--check: how many rows")
    a = p.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if a.check:
        return check(a.fabricsim, a.out + ".csv", a.points)

    subprocess.run([a.fabricsim, "sweep", SPEC, "--out", a.work], check=True)
    ring_busbw, _ = collbench(a.fabricsim, "ring")
    rows = list(csv.DictReader(open(os.path.join(a.work, "results.csv"))))
    if any(r["status"] != "ok" for r in rows):
        sys.exit(f"some points failed: see {a.work}/results.csv")
    for r in rows:
        r["ring_busbw_GBps"] = ring_busbw
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 4.5))
    throughputs = sorted({gbps(r[THROUGHPUT]) for r in rows})
    for slots in sorted({int(r[SLOTS]) for r in rows}):
        pts = sorted((gbps(r[THROUGHPUT]), float(r["rows.0.busbw_GBps"])) for r in rows if int(r[SLOTS]) == slots)
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=f"{slots} slot{'s' if slots > 1 else ''}")
    ax.axhline(ring_busbw, color="grey", linestyle="--", label=f"ring ({ring_busbw:.0f} GB/s)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(throughputs)
    ax.set_xticklabels([f"{t:g}" for t in throughputs])
    ax.set_xlabel("reduction throughput per switch unit (GB/s of input)")
    ax.set_ylabel("all-reduce busbw (GB/s)")
    ax.set_title(f"In-switch all-reduce of {SIZE} on dgx_h100: when the unit is the bottleneck")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))  # outside the data
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=110)
    print(f"wrote {a.out}.csv and {a.out}.png")


if __name__ == "__main__":
    main()
