#!/usr/bin/python3
"""Bus bandwidth and time against size, one line per collbench run: busbw on
the left, the collective's time on the right, both on log axes (so small
sizes, where time is latency and busbw near zero, stay readable).

Each input is the JSON that `fabricsim collbench --json FILE` writes; the
legend names each by its platform and algorithm (or by --labels).

Usage: scripts/plot-busbw.py RUN.json [RUN.json ...] [--labels A,B,...] [--out busbw.png]
Example (docs/img/busbw-dgx-h100.png):
  for a in ring halving_doubling in_switch; do
    build/platforms/fabricsim collbench --platform platforms/dgx_h100.yaml --algo $a -b 4K -e 4G -f 4 --json $a.json
  done
  scripts/plot-busbw.py ring.json halving_doubling.json in_switch.json --out docs/img/busbw-dgx-h100.png
"""
import argparse
import json
import sys


def size_label(b):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            v = b / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{b} B"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", help="collbench --json outputs")
    p.add_argument("--labels", help="comma-separated legend labels, one per run")
    p.add_argument("--out", default="busbw.png")
    p.add_argument("--title")
    a = p.parse_args()

    runs = []
    for path in a.runs:
        try:
            with open(path) as f:
                j = json.load(f)
            rows = j["rows"]
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"{path}: not a collbench --json file ({e})")
        if not rows:
            sys.exit(f"{path}: no rows")
        runs.append((path, j))
    labels = a.labels.split(",") if a.labels else None
    if labels and len(labels) != len(runs):
        sys.exit("--labels: give one label per run")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, lat) = plt.subplots(1, 2, figsize=(12, 4.5))
    sizes = set()
    for i, (path, j) in enumerate(runs):
        algos = sorted({r["algorithm"] for r in j["rows"]})
        label = labels[i] if labels else f"{j['platform']}: {', '.join(algos)}"
        xs = [r["size_bytes"] for r in j["rows"]]
        sizes.update(xs)
        ax.plot(xs, [r["busbw_GBps"] for r in j["rows"]], marker="o", markersize=3, label=label)
        lat.plot(xs, [r["time_us"] for r in j["rows"]], marker="o", markersize=3, label=label)
    ticks = sorted(sizes)[:: max(1, len(sizes) // 8)]
    for axis in (ax, lat):
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_xticks(ticks)
        axis.set_xticklabels([size_label(t) for t in ticks], rotation=30)
        axis.set_xlabel("size")
        axis.grid(True, which="both", alpha=0.3)
    ops = sorted({j["op"] for _, j in runs})
    npus = sorted({j["npus"] for _, j in runs})
    fig.suptitle(a.title or f"{', '.join(ops)} on {', '.join(str(n) for n in npus)} NPUs")
    ax.set_ylabel("busbw (GB/s, nccl-tests' definition)")
    lat.set_ylabel("time (us)")
    lat.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
