#!/usr/bin/python3
"""The DLRM case study (ASTRA-sim + ns-3, 128 GPUs on TCP/IP), on fabricsim.

Runs four sweeps with `fabricsim sweep`:
  docs/examples/sweeps/dlrm-systems.yaml                the four systems
  docs/examples/sweeps/dlrm-sensitivity-flat100g.yaml    one value at a time on Flat100G
  docs/examples/sweeps/dlrm-sensitivity-hier.yaml        the same on Hier
  docs/examples/sweeps/dlrm-injection-network-hier.yaml  Hier's injection latency on
                                                         its network NICs only
  docs/examples/sweeps/dlrm-injection-flat800g.yaml      Flat800G's injection latency
  docs/examples/sweeps/dlrm-injection-network-hieropt.yaml  HierOpt's, network NICs only
prints the tables of docs/studies/dlrm-tcp.md (iteration time of each system
and each sensitivity point, and its ratio to the system's base point), and
writes the results beside --out (OUT.csv, OUT.png). 31 points of under a
minute to 10 minutes each: about an hour on a 2-core machine with -j 2.

  scripts/study-dlrm-tcp.py [--fabricsim F] [--work DIR] [--out docs/img/dlrm-tcp]

Each sweep's folder (under --work, default build/) keeps every point's JSON
with its provenance; a second run only runs missing points. A point's id
includes fabricsim's build, so after a rebuild the sweeps run again;
--no-run instead takes, for each point, the newest finished result in the
folder whatever build made it (the doc's figures were gathered so).
"""
import argparse
import csv
import glob
import json
import os
import shlex
import subprocess
import sys

SYSTEMS = [("Flat100G", "dlrm_flat100g"), ("Flat800G", "dlrm_flat800g"), ("Hier", "dlrm_hier"),
           ("HierOpt", "dlrm_hieropt")]
# The sensitivity points, in the specs' order: (axis, value).
POINTS = [("injection latency", "0.01 us"), ("injection latency", "10 us"), ("injection latency", "100 us"),
          ("switch buffer", "1 GB"), ("TCP window", "0.1 MB"), ("chunks", "1,024"), ("chunks", "32"),
          ("chunks in flight", "128")]
INJECTION = [i for i, (axis, _) in enumerate(POINTS) if axis == "injection latency"]
BASE = {"injection latency": "1 us", "switch buffer": "64 MB", "TCP window": "0.5 MB", "chunks": "128",
        "chunks in flight": "64"}


def sweep(fabricsim, name, work, jobs, run):
    """Iteration times in ms, in the spec's point order."""
    out = os.path.join(work, name)
    if run:
        r = subprocess.run([fabricsim, "sweep", f"docs/examples/sweeps/{name}.yaml", "--out", out, "-j", jobs, "-q"])
        if r.returncode != 0:
            sys.exit(f"the sweep {name} failed (exit {r.returncode}); see {out}")
    # The manifest lists the points' values; the newest finished point JSON
    # with the same values (the same arguments) is the result.
    manifest_path = os.path.join(out, "manifest.json")
    if not os.path.exists(manifest_path):
        sys.exit(f"{name}: no sweep in {out} (no manifest.json); run without --no-run first")
    manifest = json.load(open(manifest_path))
    newest = {}
    for path in sorted(glob.glob(os.path.join(out, "points", "*.json")), key=os.path.getmtime):
        point = json.load(open(path))
        if point.get("status") == "ok":
            newest[args_key(point["command"])] = point["metrics"]["sim_time_ns"] / 1e6
    times = []
    for p in manifest["points"]:
        key = args_key(["fabricsim"] + p["args"])
        if key not in newest:
            sys.exit(f"{name}: point {p['index']} ({p['id']}) has no finished result in {out}")
        times.append(newest[key])
    return times


def args_key(command):
    """What a point ran, without the program's path and the sweep's scratch names."""
    words = shlex.split(command) if isinstance(command, str) else list(command)
    keep, skip = [], False
    for w in words[1:]:
        if skip:
            skip = False
            continue
        if w in ("--report", "--json"):
            skip = True
            continue
        keep.append(os.path.basename(w) if "/" in w else w)
    return " ".join(keep)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fabricsim", default="build/platforms/fabricsim")
    p.add_argument("--work", default="build")
    p.add_argument("--out", default="docs/img/dlrm-tcp", help="writes OUT.csv and OUT.png")
    p.add_argument("-j", default="2")
    p.add_argument("--no-run", action="store_true", help="use the points already in --work, run nothing")
    a = p.parse_args()
    run = not a.no_run
    systems = dict(zip([s for s, _ in SYSTEMS], sweep(a.fabricsim, "dlrm-systems", a.work, a.j, run)))
    sens = {"Flat100G": sweep(a.fabricsim, "dlrm-sensitivity-flat100g", a.work, a.j, run),
            "Hier": sweep(a.fabricsim, "dlrm-sensitivity-hier", a.work, a.j, run)}
    # A memory copy to host buffers is a TCP/IP send's cost; NVLink copies
    # GPU to GPU. So Hier is also run with the latency on its network only.
    hier_network = sweep(a.fabricsim, "dlrm-injection-network-hier", a.work, a.j, run)
    # The other two systems' injection latency, each with its base point
    # (0.01, 1, 10, 100 us): a flat and a hierarchical system of about the
    # same iteration time.
    flat800 = sweep(a.fabricsim, "dlrm-injection-flat800g", a.work, a.j, run)
    hieropt_network = sweep(a.fabricsim, "dlrm-injection-network-hieropt", a.work, a.j, run)

    best = min(systems.values())
    print("| system | iteration | / best |")
    print("|---|---|---|")
    for s, _ in SYSTEMS:
        print(f"| {s} | {systems[s]:.2f} ms | {systems[s] / best:.2f}x |")
    print(f"\nworst / best: {max(systems.values()) / best:.2f}x\n")

    print("| changed (base) | value | Flat100G | Hier |")
    print("|---|---|---|---|")
    rows = [("system", "base", "Flat100G", systems["Flat100G"]), ("system", "base", "Hier", systems["Hier"])]
    for i, (axis, value) in enumerate(POINTS):
        cells = []
        for s in ("Flat100G", "Hier"):
            t = sens[s][i]
            cells.append(f"{t:.2f} ms ({t / systems[s]:.2f}x)")
            rows.append((axis, value, s, t))
        print(f"| {axis} ({BASE[axis]}) | {value} | " + " | ".join(cells) + " |")

    print("\n| injection latency (1 us) | Flat100G | Hier, network NICs only |")
    print("|---|---|---|")
    for k, i in enumerate(INJECTION):
        t = hier_network[k]
        rows.append((POINTS[i][0], POINTS[i][1], "Hier (network only)", t))
        flat = sens["Flat100G"][i]
        print(f"| {POINTS[i][1]} | {flat:.2f} ms ({flat / systems['Flat100G']:.2f}x), "
              f"{flat - systems['Flat100G']:+.2f} ms | "
              f"{t:.2f} ms ({t / systems['Hier']:.2f}x), {t - systems['Hier']:+.2f} ms |")

    print("\n| injection latency (1 us) | Flat800G | HierOpt, network NICs only |")
    print("|---|---|---|")
    for k, value in enumerate(("0.01 us", "1 us", "10 us", "100 us")):
        f, h = flat800[k], hieropt_network[k]
        print(f"| {value} | {f:.2f} ms ({f / flat800[1]:.2f}x), {f - flat800[1]:+.2f} ms | "
              f"{h:.2f} ms ({h / hieropt_network[1]:.2f}x), {h - hieropt_network[1]:+.2f} ms |")
        if value != "1 us":
            rows.append(("injection latency", value, "Flat800G", f))
            rows.append(("injection latency", value, "HierOpt (network only)", h))

    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["axis", "value", "system", "iteration_ms"])
        for s, _ in SYSTEMS:
            w.writerow(["system", "base", s, f"{systems[s]:.4f}"])
        for axis, value, s, t in rows[2:]:
            w.writerow([axis, value, s, f"{t:.4f}"])

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1, 2.2]})
    left.bar([s for s, _ in SYSTEMS], [systems[s] for s, _ in SYSTEMS], color="tab:blue")
    left.set_ylabel("iteration time (ms)")
    left.set_title("the four systems", fontsize=9)
    left.grid(True, axis="y", alpha=0.3)
    short = {"injection latency": "injection", "switch buffer": "buffer", "TCP window": "window",
             "chunks in flight": "in flight"}
    labels = [f"{short.get(axis, axis)}\n{value}" for axis, value in POINTS]
    width = 0.27
    for k, s in enumerate(("Flat100G", "Hier")):
        xs = [i + (k - 1) * width for i in range(len(POINTS))]
        right.bar(xs, [sens[s][i] / systems[s] for i in range(len(POINTS))], width, label=s)
    right.bar([i + width for i in INJECTION], [hier_network[k] / systems["Hier"] for k in range(len(INJECTION))],
              width, label="Hier, injection on network NICs only")
    right.axhline(1.0, color="black", linewidth=0.8)
    right.set_xticks(range(len(POINTS)))
    right.set_xticklabels(labels, fontsize=7)
    right.set_ylabel("time / the system's base point")
    right.set_title("one value changed from the base point", fontsize=9)
    right.legend(fontsize=8)
    right.grid(True, axis="y", alpha=0.3)
    fig.suptitle("DLRM iteration, 128 GPUs on TCP (the ASTRA-sim + ns-3 case study's model)", fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=110)
    print(f"wrote {a.out}.csv and {a.out}.png")


if __name__ == "__main__":
    main()
