#!/usr/bin/env bash
# Installs what fabricsim needs from Debian 12's packages, skipping what is
# already there. Run as root (or with sudo available).
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libsystemc-dev
  libprotobuf-dev protobuf-compiler
  libyaml-cpp-dev
  libgtest-dev
  libcli11-dev nlohmann-json3-dev zlib1g-dev
  libjemalloc-dev  # the fabricsim command's allocator (CMakeLists.txt, FABRICSIM_JEMALLOC)
  verilator
  clang libclang-rt-14-dev  # the sanitizer build and libFuzzer (scripts/sanitize-and-fuzz.sh)
  clang-format  # the committed .clang-format, checked by the tests (scripts/check-format.sh)
  python3 python3-matplotlib
  time valgrind  # valgrind: the RTL paths under memcheck (scripts/sanitize-and-fuzz.sh)
  slurm-wlm munge  # the sweep's Slurm backend, tried on a one-node cluster (scripts/slurm-local.sh)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
