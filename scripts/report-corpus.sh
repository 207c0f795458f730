#!/usr/bin/env bash
# Writes the reports of a fixed set of jobs, one file each, into a folder:
# collectives on every shipped platform, the sample traces, the transports,
# the reduction unit in switches and generated training steps. Run it with
# the binary before a change and after, and compare the folders: a change
# meant to keep behaviour (a restructuring, a faster engine) keeps them
# byte for byte.
# Usage: scripts/report-corpus.sh FABRICSIM OUT-DIR     (about 5 minutes)
#        scripts/report-corpus.sh --compare DIR-BEFORE DIR-AFTER
set -euo pipefail
if [ "${1:-}" = "--compare" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --compare DIR-BEFORE DIR-AFTER" >&2; exit 2; }
  # Equal but for the folder's own name and the commit each report records.
  exec python3 - "$2" "$3" <<'PY'
import os, re, sys
a, b = (os.path.realpath(d) for d in sys.argv[1:3])
def text(d, name):
    t = open(os.path.join(d, name), encoding="utf-8", errors="replace").read().replace(d, "OUT")
    return re.sub(r'"commit": *"[^"]*"', '"commit": ""', t)
names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
differ = [n for n in names if not (os.path.exists(os.path.join(a, n)) and os.path.exists(os.path.join(b, n))
                                   and text(a, n) == text(b, n))]
for n in differ:
    print("differs:", n)
print(f"{len(names)} files, {len(names) - len(differ)} identical, {len(differ)} different")
sys.exit(1 if differ else 0)
PY
fi
[ $# -eq 2 ] || { echo "usage: $0 FABRICSIM OUT-DIR | --compare DIR-BEFORE DIR-AFTER" >&2; exit 2; }
fabricsim=$(realpath "$1")
out=$2
cd "$(dirname "$0")/.."
mkdir -p "$out"
out=$(realpath "$out")

# Runs one job; its standard output (wall times dropped) and its report.
job() {
  local name=$1
  shift
  "$fabricsim" "$@" 2>&1 | grep -v -i "wall\|elapsed" >"$out/$name.txt" || true
}

# Every shipped platform: three collectives at two sizes (Selene on its
# first 64 GPUs: 3,072 would take the time of all the rest).
for p in platforms/*.yaml; do
  base=$(basename "$p" .yaml)
  extra=(-b 64K -e 4M -f 64)
  [ "$base" = selene ] && extra+=(--npus 64)
  # The DLRM study's platforms take 128 chunks of TCP's 4 KiB frames.
  [[ $base == dlrm_* ]] && extra=(-b 64K -e 1M -f 16 --chunks 4)
  for op in all_reduce all_gather all_to_all; do
    job "collbench-$base-$op" collbench --platform "$p" "${extra[@]}" --op "$op" -j 2 -q \
      --json "$out/collbench-$base-$op.json"
  done
done
job collbench-ring8-data collbench --platform platforms/ring8.yaml --op all_reduce -b 1M -e 1M --data -q \
  --json "$out/collbench-ring8-data.json"
job collbench-dgx_h100-insw collbench --platform platforms/dgx_h100.yaml --op all_reduce --algo in_switch \
  -b 1M -e 64M -f 64 -q --json "$out/collbench-dgx_h100-insw.json"
job collbench-dgx_h100_4node-themis collbench --platform platforms/dgx_h100_4node.yaml --op all_reduce \
  --algo hierarchical --levels ring,ring --scheduler themis -b 4M -e 4M -q \
  --json "$out/collbench-dgx_h100_4node-themis.json"
job run-ring8-allreduce run --platform platforms/ring8.yaml \
  --workload traces/samples/allreduce_8npus_64MiB/allreduce --report "$out/run-ring8-allreduce.json" \
  --timeline "$out/run-ring8-allreduce.timeline.json"
job run-pool8-offload run --platform platforms/pool8.yaml --workload traces/samples/offload_8npus/offload \
  --report "$out/run-pool8-offload.json"
job run-dgx_h100-llama3-8b run --platform platforms/dgx_h100.yaml --model llama3-8b \
  --set training.tp=4 --set training.pp=2 --set training.seq=2048 --set training.global_batch=8 \
  --report "$out/run-dgx_h100-llama3-8b.json"
job run-selene-megatron-1.7b run --platform platforms/selene.yaml --npus 32 --model megatron-1.7b \
  --report "$out/run-selene-megatron-1.7b.json"
job run-dgx_h100-resnet50 run --platform platforms/dgx_h100.yaml --model resnet50 \
  --report "$out/run-dgx_h100-resnet50.json"
job run-dgx_h100-mixtral run --platform platforms/dgx_h100.yaml --model mixtral-8x7b \
  --set training.tp=2 --set training.sp=true --set training.ep=4 --set training.seq=1024 --set training.global_batch=8 \
  --set model.layers=4 --report "$out/run-dgx_h100-mixtral.json"
echo "$(find "$out" -type f | wc -l) files in $out"
