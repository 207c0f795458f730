#!/usr/bin/python3
"""A metric of a sweep's results.csv against one axis, a line per value of another.

  scripts/plot-sweep.py DIR/results.csv --x AXIS --y METRIC [--lines AXIS] [--scale 1e-6]
      [--xlabel TEXT] [--ylabel TEXT] [--title TEXT] [--out FILE.png]

Axis values with units ("200 GB/s") are placed by their number; failed or
missing points are left out (and counted). The legend sits outside the data.
"""
import argparse
import csv
import sys


SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def number(text):
    """ "200 GB/s" -> 200, "64K" -> 65536 (sizes as fabricsim reads them), else None."""
    word = text.split()[0] if text.split() else ""
    scale = SUFFIX.get(word[-1:].upper(), 1) if word[-1:].isalpha() else 1
    try:
        return float(word[:-1] if scale != 1 else word) * scale
    except ValueError:
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv")
    p.add_argument("--x", required=True, help="the axis column on the x axis")
    p.add_argument("--y", required=True, help="the metric column")
    p.add_argument("--lines", help="an axis column: one line per value")
    p.add_argument("--scale", type=float, default=1.0, help="multiply the metric by this (1e-6: ns to ms)")
    p.add_argument("--xlabel")
    p.add_argument("--ylabel")
    p.add_argument("--title")
    p.add_argument("--label", action="append", default=[], metavar="VALUE=TEXT",
                   help="a shorter legend label for a value of --lines (repeatable)")
    p.add_argument("--out", default="sweep.png")
    a = p.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
    for col in [a.x, a.y] + ([a.lines] if a.lines else []):
        if rows and col not in rows[0]:
            sys.exit(f"{a.csv}: no column \"{col}\" (columns: {', '.join(rows[0].keys())})")
    labels = dict(item.split("=", 1) for item in a.label)
    ok = [r for r in rows if r["status"] == "ok" and r[a.y] != ""]
    if len(ok) < len(rows):
        print(f"left out {len(rows) - len(ok)} failed or missing points", file=sys.stderr)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 4.5))
    groups = {}
    for r in ok:
        groups.setdefault(r[a.lines] if a.lines else "", []).append(r)
    bad = sorted({r[a.x] for r in ok if number(r[a.x]) is None})
    if bad:
        sys.exit(f"{a.csv}: \"{a.x}\" has values that are not numbers: {', '.join(bad)}")
    for value, pts in groups.items():
        xy = sorted((number(r[a.x]), float(r[a.y]) * a.scale) for r in pts)
        ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o", label=labels.get(value, value))
        best = min(xy, key=lambda t: t[1])
        ax.annotate(f"{best[1]:.3g}", best, textcoords="offset points", xytext=(0, -14), ha="center", fontsize=8)
    ax.set_xlabel(a.xlabel or a.x)
    ax.set_ylabel(a.ylabel or a.y)
    if a.title:
        ax.set_title(a.title)
    ax.grid(True, alpha=0.3)
    if a.lines:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
