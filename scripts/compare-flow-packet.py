#!/usr/bin/env python3
"""Flow against packet: every shipped platform's collectives, both fabric models.

For each platform in platforms/*.yaml and each collective type, runs
`fabricsim collbench` over a range of sizes once with every fabric as
packets and once as flows (--fabric-model), and prints a table: platform,
collective, size, what ran, packet time, flow time, difference, and the
wall time of each. Rows where the two chose different algorithms (the flow
model has no switch reduction units, so in-switch choices fall away) are
marked and not counted in the summary.

With --steps, runs generated training steps instead (the four of
scripts/report-corpus.sh) and compares their step times.

  python3 scripts/compare-flow-packet.py [--binary build/platforms/fabricsim]
      [--min 64K] [--max 256M] [--factor 16] [--platforms a,b] [--ops x,y]
      [--markdown FILE] [--steps]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

OPS = ["all_reduce", "reduce_scatter", "all_gather", "all_to_all", "all_to_all_v", "broadcast", "reduce",
       "gather", "scatter", "barrier"]


def collbench(binary, platform, op, model, args, out):
    cmd = [binary, "collbench", "--quiet", "--platform", platform, "--op", op, "-b", args.min, "-e", args.max,
           "-f", str(args.factor), "--fabric-model", model, "--json", out]
    start = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return None, time.time() - start, f"over {args.timeout:.0f} s"
    wall = time.time() - start
    if r.returncode != 0:
        return None, wall, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
    with open(out) as f:
        return json.load(f)["rows"], wall, None


STEPS = [
    ("Llama 3 8B, TP 4, PP 2, DGX H100", ["--platform", "platforms/dgx_h100.yaml", "--model", "llama3-8b", "--set",
                                          "training.tp=4", "--set", "training.pp=2", "--set", "training.seq=2048",
                                          "--set", "training.global_batch=8"]),
    ("Megatron 1.7B, 32 Selene GPUs", ["--platform", "platforms/selene.yaml", "--npus", "32", "--model",
                                       "megatron-1.7b"]),
    ("ResNet-50, DGX H100", ["--platform", "platforms/dgx_h100.yaml", "--model", "resnet50"]),
    ("Mixtral 8x7B (4 layers), TP 2 SP, EP 4, DGX H100",
     ["--platform", "platforms/dgx_h100.yaml", "--model", "mixtral-8x7b", "--set", "training.tp=2", "--set",
      "training.sp=true", "--set", "training.ep=4", "--set", "training.seq=1024", "--set",
      "training.global_batch=8", "--set", "model.layers=4"]),
]


def steps(args):
    lines = ["| training step | packet ms | flow ms | flow vs packet | packet wall s | flow wall s |",
             "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, cmd in STEPS:
            got = {}
            for model in ("packet", "flow"):
                report = os.path.join(tmp, model + ".json")
                start = time.time()
                r = subprocess.run([args.binary, "run", "--quiet"] + cmd + ["--fabric-model", model, "--report",
                                                                            report], capture_output=True, text=True)
                wall = time.time() - start
                if r.returncode != 0:
                    got[model] = (None, wall, r.stderr.strip().splitlines()[-1])
                    continue
                with open(report) as f:
                    got[model] = (json.load(f)["sim_time_ns"] / 1e6, wall, None)
            (p, pw, pe), (f, fw, fe) = got["packet"], got["flow"]
            if p is None or f is None:
                lines.append(f"| {name} | | | {pe or fe} | {pw:.1f} | {fw:.1f} |")
            else:
                lines.append(f"| {name} | {p:.3f} | {f:.3f} | {(f - p) / p * 100:+.2f}% | {pw:.1f} | {fw:.1f} |")
    print("\n".join(lines))
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write("\n".join(lines) + "\n")
    return 0


def what_ran(row):
    return (row.get("algorithm"), row.get("protocol"), str(row.get("levels")))


def human(n):
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="build/platforms/fabricsim")
    ap.add_argument("--min", default="64K")
    ap.add_argument("--max", default="256M")
    ap.add_argument("--factor", type=float, default=16)
    ap.add_argument("--platforms", default="")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--markdown", default="")
    ap.add_argument("--timeout", type=float, default=300, help="seconds a collbench may take")
    ap.add_argument("--steps", action="store_true", help="generated training steps instead of collectives")
    args = ap.parse_args()
    if args.steps:
        return steps(args)
    platforms = sorted(glob.glob("platforms/*.yaml"))
    if args.platforms:
        platforms = [p for p in platforms if os.path.basename(p)[:-5] in args.platforms.split(",")]
    rows = []
    walls = {"packet": 0.0, "flow": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        for platform in platforms:
            name = os.path.basename(platform)[:-5]
            for op in args.ops.split(","):
                got = {}
                for model in ("packet", "flow"):
                    result, wall, err = collbench(args.binary, platform, op, model, args,
                                                  os.path.join(tmp, f"{name}-{op}-{model}.json"))
                    walls[model] += wall
                    got[model] = (result, wall, err)
                (pr, pw, pe), (fr, fw, fe) = got["packet"], got["flow"]
                if pr is None or fr is None:
                    rows.append((name, op, "-", "-", None, None, ("packet: " + pe) if pe else ("flow: " + fe), pw, fw))
                    print(f"# {name} {op}: {rows[-1][6]}", flush=True)
                    continue
                if op == "barrier":  # one row: it moves no bytes, every size is the same
                    pr, fr = pr[:1], fr[:1]
                for p, f in zip(pr, fr):
                    same = what_ran(p) == what_ran(f)
                    note = "" if same else "different algorithm"
                    rows.append((name, op, human(p["size_bytes"]), same, p["time_us"], f["time_us"], note, pw, fw))
                    err = (f["time_us"] - p["time_us"]) / p["time_us"] * 100 if p["time_us"] > 0 else 0.0
                    print(f"# {name} {op} {human(p['size_bytes'])}: packet {p['time_us']:.2f} us, flow "
                          f"{f['time_us']:.2f} us ({err:+.1f}%) {note} [wall {pw:.1f} s / {fw:.1f} s]", flush=True)
    lines = ["| platform | collective | size | packet us | flow us | flow vs packet | note |", "|---|---|---|---|---|---|---|"]
    compared = []
    for name, op, size, same, pt, ft, note, pw, fw in rows:
        if pt is None:
            lines.append(f"| {name} | {op} | {size} | | | | {note} |")
            continue
        err = (ft - pt) / pt * 100 if pt > 0 else 0.0
        if same is True:
            compared.append((name, op, size, err))
        lines.append(f"| {name} | {op} | {size} | {pt:.2f} | {ft:.2f} | {err:+.1f}% | {note} |")
    print("\n".join(lines))
    big = [abs(e) for (_, _, s, e) in compared if s.endswith("M") and int(s[:-1]) >= 1 or s.endswith("G")]
    summary = []
    if compared:
        summary.append(f"rows compared (same algorithm): {len(compared)}; largest |difference| "
                       f"{max(abs(e) for *_, e in compared):.1f}%")
    if big:
        within = sum(1 for e in big if e <= 3.0)
        summary.append(f"1 MiB and larger: {len(big)} rows, {within} within 3%, largest {max(big):.1f}%")
    summary.append(f"wall time: packet {walls['packet']:.1f} s, flow {walls['flow']:.1f} s")
    print("\n".join(summary))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n\n" + "\n".join(summary) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
