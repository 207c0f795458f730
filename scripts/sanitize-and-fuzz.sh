#!/usr/bin/env bash
# The hardening suite (CI runs it after the tests, see .ci/run):
#  0. the RTL reduction unit's paths under valgrind's memcheck, with the
#     release build the README's test command made (RTL_BUILD_DIR, default
#     build): a checked run and one whose RTL result is wrong on purpose, which
#     must end with exit 4 and no memory error (it once aborted with "double
#     free"); about 15 s;
#  1. every test under AddressSanitizer + UndefinedBehaviorSanitizer, leak
#     detection on (a clang build in build-asan, without the RTL: Verilated
#     code under ASan takes long to build, hence step 0);
#  2. the inputs that once crashed a reader (tests/fuzz/regressions/<target>);
#  3. each libFuzzer target for FUZZ_SECONDS (default 60) on a copy of its seed
#     corpus (tests/fuzz/corpus/<target>), so the committed corpus never changes.
# A finding stops the script with its input saved as build-asan/fuzz-crash-*:
# fix the reader, then commit that file to tests/fuzz/regressions/<target>/.
#
# Budget on the 2-core CI machine: valgrind 15 s, build about 8 min, tests
# about 4 min, fuzzing 4 x FUZZ_SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${SANITIZE_BUILD_DIR:-build-asan}
fuzz_seconds=${FUZZ_SECONDS:-60}
targets=(fuzz_et_reader fuzz_platform fuzz_astra_json fuzz_comm_groups)

rtl_build=${RTL_BUILD_DIR:-build}
rtl_bin=$rtl_build/platforms/fabricsim
if [ -x "$rtl_bin" ] && grep -q '^FABRICSIM_RTL:BOOL=ON' "$rtl_build/CMakeCache.txt" 2>/dev/null; then
  echo "== the RTL reduction unit under valgrind memcheck"
  # The command links jemalloc (FABRICSIM_JEMALLOC): memcheck replaces its
  # malloc too, or it would see none of the heap.
  rtl_run=(collbench --quiet --data --reduction-model rtl --algo in_switch --platform platforms/dgx_h100.yaml --op all_reduce)
  valgrind -q --error-exitcode=99 --soname-synonyms=somalloc=*jemalloc* "$rtl_bin" "${rtl_run[@]}" --dtype bf16 -b 4K -e 1M > /dev/null
  status=0
  log=$(mktemp)
  valgrind -q --error-exitcode=99 --soname-synonyms=somalloc=*jemalloc* "$rtl_bin" "${rtl_run[@]}" --dtype int32 -b 4K -e 4K --rtl-plusarg +fault_lane=3 \
    > /dev/null 2> "$log" || status=$?
  if [ "$status" -ne 4 ]; then
    cat "$log" >&2
    rm -f "$log"
    echo "a wrong RTL result must stop with exit 4 and no memory error; got exit $status" >&2
    exit 1
  fi
  rm -f "$log"
else
  echo "no RTL build in $rtl_build (FABRICSIM_RTL off): the valgrind step is skipped" >&2
fi

CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFABRICSIM_SANITIZE=ON -DFABRICSIM_FUZZ=ON -DFABRICSIM_RTL=OFF
cmake --build "$build" -j2

# Any report fails the process: UBSan halts, ASan and LSan exit non-zero.
# (No detect_stack_use_after_return: its fake stacks break on SystemC's
# coroutine stack switches.)
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=print_suppressions=0

echo "== the test suite under ASan + UBSan"
# use_stacks=0, for the tests only: at exit LSan scans each thread's stack,
# and after SystemC's coroutines it can take a coroutine's stack for the
# main thread's ("stack pointer not in stack range" with the real one in
# use); on some kernels (seen on 6.18) its tracer then faults in that
# stack's guard pages and the test fails with "Tracer caught signal 11"
# though nothing leaked. The tests' leak check runs after main has
# returned, and coroutines are not threads, so no live object is reachable
# only from a stack; globals and the heap are still scanned. The fuzzers
# exit from inside libFuzzer with its locals alive: they keep stack scanning.
LSAN_OPTIONS=$LSAN_OPTIONS:use_stacks=0 ctest --test-dir "$build" --output-on-failure -j2

for t in "${targets[@]}"; do
  fuzzer="$build/tests/fuzz/$t"
  # The fuzzers write each input to a scratch file in $TMPDIR: keep those in
  # $work, which goes when the target is done.
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  regressions=(tests/fuzz/regressions/$t/*)
  if [ -e "${regressions[0]}" ]; then
    echo "== $t: ${#regressions[@]} regression input(s)"
    TMPDIR="$work" "$fuzzer" "${regressions[@]}"
  fi
  mkdir "$work/corpus"
  echo "== $t: fuzzing for ${fuzz_seconds} s"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: one using 2 GB
  # is a run without bound. Both count as findings.
  log="$build/$t.log"
  if ! TMPDIR="$work" "$fuzzer" "$work/corpus" "tests/fuzz/corpus/$t" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$build/fuzz-crash-$t-" > "$log" 2>&1; then
    tail -n 60 "$log"
    echo "$t found a failing input (saved as $build/fuzz-crash-$t-*): fix it, then add it to tests/fuzz/regressions/$t/" >&2
    exit 1
  fi
  grep -E "^stat::(number_of_executed_units|new_units_added|peak_rss_mb)" "$log" || true
  rm -rf "$work"
  trap - EXIT
done
echo "sanitizers and fuzzers: clean"
