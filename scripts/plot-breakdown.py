#!/usr/bin/python3
"""Where each NPU's time went: compute, exposed communication, exposed memory
and idle, stacked per NPU, from a `fabricsim run --report FILE` report.

The four parts add up to the NPU's finish time: compute is time some compute
node ran; exposed communication is time communication was in flight and no
compute ran; exposed memory, time a remote-memory operation was in flight and
neither ran; idle, none of them (docs/timeline.md).

Usage: scripts/plot-breakdown.py REPORT.json [--out breakdown.png]
Example (docs/img/breakdown-offload.png):
  build/platforms/fabricsim run --platform platforms/pool8.yaml --workload traces/samples/offload_8npus/offload \\
      --report /tmp/offload.json
  scripts/plot-breakdown.py /tmp/offload.json --out docs/img/breakdown-offload.png

"""
import argparse
import json
import sys

PARTS = [("compute_ns", "compute", "#4c72b0"), ("exposed_comm_ns", "exposed communication", "#dd8452"),
         ("exposed_memory_ns", "exposed memory", "#55a868"), ("idle_ns", "idle", "#c7c7c7")]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report")
    p.add_argument("--out", default="breakdown.png")
    a = p.parse_args()
    try:
        with open(a.report) as f:
            r = json.load(f)
        npus = r["npus"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"{a.report}: not a fabricsim report ({e})")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ids = [n["id"] for n in npus]
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(ids) + 2) + 2, 4.5))
    bottom = [0.0] * len(ids)
    for key, label, color in PARTS:
        vals = [n[key] / 1e3 for n in npus]  # us
        ax.bar(ids, vals, bottom=bottom, label=label, color=color, width=0.8)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xlabel("NPU")
    ax.set_ylabel("time (us)")
    ax.set_title(f"Where the time went: {r.get('platform', '')}, {r.get('workload', '').split('/')[-1]}")
    ax.set_xticks(ids if len(ids) <= 32 else ids[:: len(ids) // 16])
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside the bars
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
