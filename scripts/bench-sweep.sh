#!/usr/bin/env bash
# The sweep driver's own cost (docs/performance.md):
#  1. 1,000 small collbench points (an 8-NPU ring, 1 KiB to 512 KiB x 100
#     link bandwidths) with the local backend, -j2: wall time, the points' own
#     time summed, and the driver's CPU time;
#  2. collecting 10,000 point files into results.csv: the manifest of a
#     10,000-point spec (the print backend writes it), one real point file
#     copied under each id, then `fabricsim sweep collect`, timed.
#   scripts/bench-sweep.sh [FABRICSIM]     (default build/platforms/fabricsim)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/platforms/fabricsim}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabricsim-bench-sweep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ring8=$(realpath platforms/ring8.yaml)

bandwidths() {  # N values "10 GB/s" .. as a YAML list
  python3 -c "import sys; n=int(sys.argv[1]); print('[' + ', '.join(f'{10 + i} GB/s' for i in range(n)) + ']')" "$1"
}
spec() {  # name, bandwidth count
  cat <<SPEC
name: $1
command: collbench
args: { op: all_reduce, platform: $ring8, algorithm: ring }
grid:
  set: { fabrics.0.link.bandwidth: $(bandwidths "$2") }
  bytes: [1K, 2K, 4K, 8K, 16K, 32K, 64K, 128K, 256K, 512K]
SPEC
}

spec points1000 100 > "$tmp/1000.yaml"
echo "1,000 points, local -j2:"
/usr/bin/time -f "  wall %e s, driver and points: user %U s, sys %S s, peak RSS %M KiB" \
  "$bin" sweep "$tmp/1000.yaml" --out "$tmp/run1000" -j2 2>&1 | grep -v '^\[' | sed 's/^/  /'

# The same 1,000 commands without the driver, two at a time (xargs -P2), each
# writing its JSON: what the driver's pool, point files and CSV add.
python3 - "$tmp/run1000/manifest.json" "$bin" "$tmp/bare" > "$tmp/commands" <<'PY'
import json, shlex, sys
manifest, binary, out = sys.argv[1:]
for p in json.load(open(manifest))["points"]:
    print(" ".join(shlex.quote(a) for a in [binary] + p["args"] + ["--json", f"{out}/{p['id']}.json", "-q"]))
PY
mkdir -p "$tmp/bare"
echo "the same 1,000 commands with xargs -P2:"
/usr/bin/time -f "  wall %e s, user %U s, sys %S s" xargs -P2 -d '\n' -I{} sh -c '{}' < "$tmp/commands" 2>&1 | sed 's/^/  /'

spec points10000 1000 > "$tmp/10000.yaml"
"$bin" sweep "$tmp/10000.yaml" --out "$tmp/run10000" --backend print -q > /dev/null
template=$(find "$tmp/run1000/points" -name "*.json" -print -quit)
python3 - "$tmp/run10000" "$template" <<'PY'
import json, sys
d, template = sys.argv[1], open(sys.argv[2]).read()
old = json.loads(template)["id"]
for p in json.load(open(f"{d}/manifest.json"))["points"]:
    open(f"{d}/points/{p['id']}.json", "w").write(template.replace(old, p["id"]))
PY
echo "collecting 10,000 point files:"
/usr/bin/time -f "  wall %e s, user %U s, sys %S s, peak RSS %M KiB" "$bin" sweep collect "$tmp/run10000" 2>&1 | sed 's/^/  /'
