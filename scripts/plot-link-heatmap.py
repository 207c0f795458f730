#!/usr/bin/python3
"""Link utilization laid out by topology, from a `fabricsim run --report FILE`
report: rings as a circle, 2-D tori and meshes as a grid, 3-D ones as one
grid per z plane side by side. Each direction of a link is drawn on its own
side of the line between its NPUs, coloured by its utilization (the share of
the run it spent sending); wrap-around links of tori are drawn as arcs.

Usage: scripts/plot-link-heatmap.py REPORT.json [--fabric NAME] [--out links.png]
Example (docs/img/links-torus4x4.png):
  build/platforms/fabricsim gen collective --npus 16 --type all_to_all --bytes 16777216 --out /tmp/a2a16
  build/platforms/fabricsim run --platform platforms/torus4x4.yaml --workload /tmp/a2a16 --report /tmp/a2a16.json
  scripts/plot-link-heatmap.py /tmp/a2a16.json --out docs/img/links-torus4x4.png
"""
import argparse
import json
import math
import sys

LAID_OUT = ("ring", "unidirectional_ring", "torus2d", "torus3d", "mesh2d", "mesh3d")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report")
    p.add_argument("--fabric", help="which fabric (default: the first ring, torus or mesh)")
    p.add_argument("--out", default="links.png")
    a = p.parse_args()
    try:
        with open(a.report) as f:
            r = json.load(f)
        fabrics, links = r["fabrics"], r["links"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"{a.report}: not a fabricsim report with fabrics and links ({e})")
    candidates = [f for f in fabrics if (a.fabric is None or f["name"] == a.fabric)]
    if a.fabric and not candidates:
        sys.exit(f"{a.report}: no fabric named {a.fabric} (have: {', '.join(f['name'] for f in fabrics)})")
    fabric = next((f for f in candidates if f["topology"] in LAID_OUT), None)
    if fabric is None:
        sys.exit(f"{a.report}: heat maps are laid out for rings, tori and meshes; "
                 f"{', '.join(f['name'] + ' is a ' + f['topology'] for f in candidates)} "
                 "(the console summary lists the hottest links of any fabric)")

    dims = fabric["dims"]
    coords = {n["name"]: n["coords"] for n in fabric["nodes"] if "coords" in n}
    npu = {n["name"]: n.get("npu") for n in fabric["nodes"]}

    def position(c):
        if len(dims) == 1:  # a circle
            t = 2 * math.pi * c[0] / dims[0]
            return (math.cos(t) * dims[0] / 2, math.sin(t) * dims[0] / 2)
        x, y = c[0], c[1]
        z = c[2] if len(c) > 2 else 0
        return (x + z * (dims[0] + 1.5), -y)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    cmap = plt.get_cmap("inferno_r")
    width = (len(dims) == 1 and dims[0]) or dims[0] * (dims[2] if len(dims) > 2 else 1)
    fig, ax = plt.subplots(figsize=(min(16, 3 + 1.2 * width), 3 + 1.2 * (dims[1] if len(dims) > 1 else dims[0])))
    hottest = 0.0
    for l in links:
        if l["fabric"] != fabric["name"] or l["from"] not in coords or l["to"] not in coords:
            continue
        u = l["utilization"]
        hottest = max(hottest, u)
        c0, c1 = coords[l["from"]], coords[l["to"]]
        (x0, y0), (x1, y1) = position(c0), position(c1)
        # Neighbours more than one step apart in a dimension are joined by a wrap-around link.
        wrap = any(abs(p - q) > 1 for p, q in zip(c0, c1)) and len(dims) > 1
        rad = 0.5 if wrap else 0.12  # each direction on its own side
        arrow = FancyArrowPatch((x0, y0), (x1, y1), connectionstyle=f"arc3,rad={rad}", arrowstyle="-|>",
                                mutation_scale=10, linewidth=3, color=cmap(min(1.0, u)), shrinkA=11, shrinkB=11,
                                zorder=1, linestyle="--" if wrap else "-")
        ax.add_patch(arrow)
    for name, c in coords.items():
        x, y = position(c)
        ax.scatter([x], [y], s=420, color="white", edgecolors="black", zorder=2)
        ax.text(x, y, str(npu.get(name, name)), ha="center", va="center", fontsize=8, zorder=3)
    if len(dims) > 2:
        for z in range(dims[2]):
            ax.text(z * (dims[0] + 1.5) + (dims[0] - 1) / 2, 0.9, f"z = {z}", ha="center")
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, 1))
    fig.colorbar(sm, ax=ax, fraction=0.04, label="link busy (share of the run)")
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.margins(0.15)
    ax.axis("off")
    ax.set_title(f"{r.get('platform', '')} / {fabric['name']} ({fabric['topology']}): hottest link {100 * hottest:.0f}% busy")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
