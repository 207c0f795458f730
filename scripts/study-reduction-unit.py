#!/usr/bin/python3
"""Where does the switch reduction unit become the bottleneck?

Sweeps the reduction throughput and the number of aggregation slots of every
NVSwitch's unit on a platform (default platforms/dgx_h100.yaml), runs the
in-switch all-reduce at one size for each pair, and writes a CSV and a plot
of bus bandwidth against throughput, one line per slot count, with the ring
all-reduce on the same platform for reference.

Usage: scripts/study-reduction-unit.py [--fabricsim build/platforms/fabricsim]
           [--platform platforms/dgx_h100.yaml] [--size 256M] [--out docs/img/reduction-unit-study]
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

THROUGHPUTS = [100, 200, 400, 600, 800, 1200, 1600, 3200]  # GB/s of input per unit
SLOTS = [1, 2, 4, 8, 16, 32, 64, 256]


def collbench(fabricsim, platform, size, algo):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    try:
        subprocess.run([fabricsim, "collbench", "--quiet", "--platform", platform, "--algo", algo, "-b", size, "-e",
                        size, "--json", out], check=True)
        with open(out) as f:
            row = json.load(f)["rows"][0]
        return row["busbw_GBps"], row["time_us"]
    finally:
        os.remove(out)


def variant(text, throughput, slots):
    """The platform with every reduction unit's throughput and slots replaced."""
    # Either form a platform file may use: "throughput: 819.2 GB/s" or "throughput_GBps: 819.2".
    text, n1 = re.subn(r"(\bthroughput:\s*)[0-9.]+\s*[A-Za-z/]+", rf"\g<1>{throughput} GB/s", text)
    if n1 == 0:
        text, n1 = re.subn(r"(throughput_GBps:\s*)[0-9.]+", rf"\g<1>{throughput}", text)
    text, n2 = re.subn(r"(\bslots:\s*)[0-9]+", rf"\g<1>{slots}", text)
    if n1 == 0 or n2 == 0:
        sys.exit("the platform's reduction units must give throughput (or throughput_GBps) and slots")
    return text


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fabricsim", default="build/platforms/fabricsim" if os.path.exists("build/platforms/fabricsim") else "fabricsim")
    p.add_argument("--platform", default="platforms/dgx_h100.yaml")
    p.add_argument("--size", default="256M", help="all-reduce size (K, M, G)")
    p.add_argument("--out", default="docs/img/reduction-unit-study", help="prefix of the .csv and .png")
    a = p.parse_args()

    with open(a.platform) as f:
        base = f.read()
    ring_busbw, _ = collbench(a.fabricsim, a.platform, a.size, "ring")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for slots in SLOTS:
            for tput in THROUGHPUTS:
                path = os.path.join(work, "platform.yaml")
                with open(path, "w") as f:
                    f.write(variant(base, tput, slots))
                busbw, time_us = collbench(a.fabricsim, path, a.size, "in_switch")
                rows.append({"throughput_GBps": tput, "slots": slots, "size": a.size, "time_us": time_us,
                             "busbw_GBps": busbw, "ring_busbw_GBps": ring_busbw})
                print(f"slots {slots:4d}  throughput {tput:5d} GB/s  busbw {busbw:7.1f} GB/s", flush=True)

    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for slots in SLOTS:
        pts = [r for r in rows if r["slots"] == slots]
        ax.plot([r["throughput_GBps"] for r in pts], [r["busbw_GBps"] for r in pts], marker="o",
                label=f"{slots} slot{'s' if slots > 1 else ''}")
    ax.axhline(ring_busbw, color="grey", linestyle="--", label=f"ring ({ring_busbw:.0f} GB/s)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(THROUGHPUTS)
    ax.set_xticklabels([str(t) for t in THROUGHPUTS])
    ax.set_xlabel("reduction throughput per switch unit (GB/s of input)")
    ax.set_ylabel("all-reduce busbw (GB/s)")
    name = os.path.splitext(os.path.basename(a.platform))[0]
    ax.set_title(f"In-switch all-reduce of {a.size} on {name}: when the unit is the bottleneck")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=110)
    print(f"wrote {a.out}.csv and {a.out}.png")


if __name__ == "__main__":
    main()
