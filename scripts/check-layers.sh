#!/usr/bin/env bash
# The include rules of docs/architecture.md ("What each folder may include"):
# prints every include that breaks them and fails if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
check() {  # folder, allowed prefixes (regex alternatives)
  local folder=$1 allowed=$2
  while IFS= read -r line; do
    echo "layer violation: $line (${folder} may include only: ${allowed//|/, })"
    status=1
  done < <(grep -rnE '#include "[a-z_]+/' "$folder" --include=*.h --include=*.cpp |
           grep -vE "#include \"(${allowed})" || true)
}
check tlm 'tlm/'
# Beneath the fabric protocol: utilities that know nothing of simulation, and
# the kernel (time, calendar, parameters), whose calendar hands retired
# frames back to their pool after each event.
check tlm/util 'tlm/util/'
check tlm/kernel 'tlm/kernel/|tlm/util/|tlm/fabric_protocol.h'
check models/collectives 'tlm/|models/collectives/'
for c in link switch memory pcie; do check "models/$c" "tlm/|models/$c/"; done
# A NIC passes on others' frames by the switch's forwarding policy.
check models/nic 'tlm/|models/nic/|models/switch/forwarding.h'
# A flow fabric stands in for the NICs: their parameters (overheads, packets) are its own.
check models/flow 'tlm/|models/flow/|models/nic/nic.h'
check models/npu 'tlm/|models/npu/|models/collectives/|models/memory/'
check traces/workload 'tlm/|traces/reader/|traces/workload/|models/npu/|models/collectives/'
check traces/model 'tlm/|traces/reader/|traces/model/|traces/generator/et_writer.h'
check rtl 'tlm/|rtl/|models/switch/|V'
# platforms/: assembly beneath importers, importers beneath the run driver,
# the tools on top. The loader reads ASTRA-sim's network files as platforms.
check platforms/assembly 'tlm/|models/|rtl/|traces/model/model_spec.h|traces/model/training_spec.h|platforms/assembly/|platforms/importers/astra_network.h'
check platforms/importers 'tlm/|traces/reader/|platforms/assembly/|platforms/importers/'
check platforms/run 'tlm/|models/|traces/|platforms/assembly/|platforms/run/'
exit $status
