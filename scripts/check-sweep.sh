#!/usr/bin/env bash
# The sweep driver, end to end (docs/sweep.md):
#  1. docs/examples/sweeps/grid24.yaml (24 points) runs with the local backend, -j2;
#  2. with --slurm: the same spec as a Slurm job array on a one-node cluster
#     started here (scripts/slurm-local.sh, needs root and Debian's slurm-wlm
#     and munge), whose results.csv must be identical to the local one;
#  3. a sweep killed halfway (SIGKILL) and run again runs only the missing
#     points, and ends with the results of an uninterrupted run;
#  4. a point that fails is recorded (status, exit code, message) and the
#     others run; collecting twice gives the same file;
#  5. another build of fabricsim (the same commit, one byte more) does not
#     take the points the first one computed: every point runs again.
#   scripts/check-sweep.sh [--slurm] [FABRICSIM]     (default build/platforms/fabricsim)
set -euo pipefail
cd "$(dirname "$0")/.."
slurm=false
if [ "${1:-}" = --slurm ]; then slurm=true; shift; fi
bin=$(realpath "${1:-build/platforms/fabricsim}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabricsim-sweep.XXXXXX")
cleanup() {
  if $slurm; then scripts/slurm-local.sh stop "$tmp/slurm" || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

echo "+ grid24, local -j2"
"$bin" sweep docs/examples/sweeps/grid24.yaml --out "$tmp/local" -j2
[ "$(grep -c ',ok,' "$tmp/local/results.csv")" = 24 ] || fail "grid24 locally: not 24 ok rows"

if $slurm; then
  echo "+ grid24 as a Slurm job array"
  env=$(scripts/slurm-local.sh start "$tmp/slurm") || fail "the local Slurm cluster did not start"
  eval "$env"
  "$bin" sweep docs/examples/sweeps/grid24.yaml --out "$tmp/slurm-run" --backend slurm --wait
  diff "$tmp/local/results.csv" "$tmp/slurm-run/results.csv" || fail "local and Slurm results.csv differ"
  echo "local and Slurm: identical results.csv"
fi

echo "+ killed halfway, run again"
platforms=$(realpath platforms)
cat > "$tmp/slow.yaml" <<SPEC
name: slow
command: collbench
args: { op: all_reduce, bytes: 1G, chunks: 256, platform: $platforms/torus4x4.yaml }
grid:
  set: { fabrics.0.link.bandwidth: [50 GB/s, 100 GB/s, 200 GB/s, 400 GB/s] }
  algorithm: [ring, direct, halving_doubling]
SPEC
"$bin" sweep "$tmp/slow.yaml" --out "$tmp/whole" -j1 -q > /dev/null
"$bin" sweep "$tmp/slow.yaml" --out "$tmp/killed" -j1 -q > /dev/null 2>&1 &
driver=$!
until [ "$(find "$tmp/killed/points" -name '*.json' ! -name '.*' 2> /dev/null | wc -l)" -ge 2 ]; do
  kill -0 "$driver" 2> /dev/null || fail "the sweep ended before two points were done"
  sleep 0.02
done
kill -9 "$driver"
wait "$driver" 2> /dev/null || true
done_before=$(find "$tmp/killed/points" -name '*.json' ! -name '.*' | wc -l)
[ "$done_before" -lt 12 ] || fail "the sweep finished before it was killed"
out=$("$bin" sweep "$tmp/slow.yaml" --out "$tmp/killed" -j2 2>&1)
echo "$out" | head -1
grep -q "12 points, $done_before already done, $((12 - done_before)) to run" <<< "$out" ||
  fail "the second run did not run only the $((12 - done_before)) missing points"
diff "$tmp/whole/results.csv" "$tmp/killed/results.csv" || fail "interrupted and whole runs differ"

echo "+ a failing point"
cat > "$tmp/failing.yaml" <<SPEC
name: failing
command: collbench
args: { op: all_reduce, bytes: 1M, platform: $platforms/ring8.yaml }
grid:
  set: { fabrics.0.link.bandwidth: [100 GB/s, -1 GB/s, 200 GB/s] }
SPEC
status=0
"$bin" sweep "$tmp/failing.yaml" --out "$tmp/failing" -q > /dev/null || status=$?
[ "$status" = 5 ] || fail "a sweep with a failed point must exit 5, not $status"
csv="$tmp/failing/results.csv"
[ "$(grep -c ',ok,' "$csv")" = 2 ] || fail "the good points did not all run"
grep -q ',failed,-1 GB/s,,,,,2,"--set fabrics.0.link.bandwidth=-1 GB/s: ' "$csv" ||
  { cat "$csv"; fail "the failed point is not recorded with its exit code and message"; }
cp "$csv" "$tmp/first.csv"
"$bin" sweep collect "$tmp/failing" > /dev/null || [ $? = 5 ] || fail "collect of a sweep with a failed point must exit 5"
diff "$tmp/first.csv" "$csv" || fail "collecting again changed results.csv"
echo "+ another build of fabricsim"
cp -r "$tmp/local" "$tmp/rebuilt"
cp "$bin" "$tmp/fabricsim-rebuilt"
printf '\0' >> "$tmp/fabricsim-rebuilt"  # an ELF file runs the same with a byte more at its end
"$tmp/fabricsim-rebuilt" sweep docs/examples/sweeps/grid24.yaml --out "$tmp/rebuilt" -j2 -q > /dev/null
[ "$(ls "$tmp/rebuilt/points" | wc -l)" = 48 ] ||
  fail "another build took the first build's points ($(ls "$tmp/rebuilt/points" | wc -l) point files, not 48)"
echo "sweep check: ok"
