#!/usr/bin/python3
"""Link utilization laid out by topology, from a `fabricsim run --report FILE`
report: rings as a circle, 2-D tori and meshes as a grid, 3-D ones as one
grid per z plane side by side; switches and fat trees in layers, NPUs at the
bottom and each switch one layer above the nearest layer it links to
(reduction units beside their switch). Each direction of a link is drawn on
its own side of the line between its ends, coloured by its utilization (the
share of the run it spent sending); wrap-around links of tori are drawn as
arcs.

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
    if not candidates:
        sys.exit(f"{a.report}: the report has no fabrics")
    # A ring, torus or mesh first (the default); otherwise the first fabric, in layers.
    fabric = next((f for f in candidates if f["topology"] in LAID_OUT), candidates[0])
    if fabric["topology"] not in LAID_OUT:
        return layered(r, fabric, links, a.out)

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


def layered(r, fabric, links, out):
    """Switches and fat trees: NPUs in the bottom layer, each switch one layer
    above the lowest layer it links to, reduction units beside their switch."""
    kinds = {n["name"]: n["kind"] for n in fabric["nodes"]}
    npu = {n["name"]: n.get("npu") for n in fabric["nodes"]}
    mine = [l for l in links if l["fabric"] == fabric["name"]]
    neighbours = {}
    for l in mine:
        neighbours.setdefault(l["from"], set()).add(l["to"])
        neighbours.setdefault(l["to"], set()).add(l["from"])
    level = {n: 0 for n, k in kinds.items() if k != "switch" and k != "reduction_unit"}
    frontier = list(level)
    while frontier:
        nxt = []
        for n in frontier:
            for m in sorted(neighbours.get(n, ())):
                if m not in level and kinds.get(m) == "switch":
                    level[m] = level[n] + 1
                    nxt.append(m)
        frontier = nxt
    position = {}
    layers = {}
    for n in sorted(level, key=lambda n: (level[n], npu.get(n) if npu.get(n) is not None else 1 << 30, n)):
        layers.setdefault(level[n], []).append(n)
    widest = max(len(v) for v in layers.values())
    for lv, names in layers.items():
        for i, n in enumerate(names):
            position[n] = ((i + 0.5) * widest / len(names), 2.0 * lv)
    for n, k in kinds.items():  # a reduction unit sits just above its switch
        if k == "reduction_unit":
            switch = next((m for m in neighbours.get(n, ()) if m in position), None)
            if switch:
                x, y = position[switch]
                position[n] = (x, y + 0.8)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    cmap = plt.get_cmap("inferno_r")
    fig, ax = plt.subplots(figsize=(max(8, min(18, 3 + 0.45 * widest)), 2.5 + 1.6 * (len(layers) + 0.5)))
    hottest = 0.0
    for l in mine:
        if l["from"] not in position or l["to"] not in position:
            continue
        u = l["utilization"]
        hottest = max(hottest, u)
        arrow = FancyArrowPatch(position[l["from"]], position[l["to"]], connectionstyle="arc3,rad=0.06",
                                arrowstyle="-|>", mutation_scale=7, linewidth=1.8, color=cmap(min(1.0, u)),
                                shrinkA=7, shrinkB=7, zorder=1)
        ax.add_patch(arrow)
    for n, (x, y) in position.items():
        k = kinds[n]
        marker = "o" if k not in ("switch", "reduction_unit") else ("s" if k == "switch" else "D")
        ax.scatter([x], [y], s=160 if marker == "o" else 120, marker=marker, color="white", edgecolors="black", zorder=2)
        label = str(npu[n]) if npu.get(n) is not None else ""
        ax.text(x, y, label, ha="center", va="center", fontsize=6, zorder=3)
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, 1))
    fig.colorbar(sm, ax=ax, fraction=0.03, label="link busy (share of the run)")
    ax.autoscale_view()
    ax.margins(0.05)
    ax.axis("off")
    ax.set_title(f"{r.get('platform', '')} / {fabric['name']} ({fabric['topology']}): hottest link {100 * hottest:.0f}% busy\n"
                 "NPUs (circles) at the bottom, switches (squares) above", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
