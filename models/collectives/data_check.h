// Data mode: every NPU's working buffer starts with a deterministic pattern,
// the collective moves and reduces real bytes, and at the end each NPU
// compares what it holds with the reference result.
//
// The pattern's values are small integers, chosen so that every partial sum
// is exactly representable in the data type (|sum| <= 2^24 for fp32 and
// int32, 2^11 for fp16, 2^8 for bf16): the reference is then the same bits
// whatever order an algorithm combines contributions in, and any lost,
// doubled or misplaced contribution shows up as a wrong value.
#pragma once

#include <cstdint>

#include "models/collectives/collective_engine.h"

namespace fabricsim {

/// Value of element `index` of rank `rank`'s input for a collective over n
/// ranks, as an integer (converted to the data type when written).
std::int64_t pattern_value(int rank, std::uint64_t index, int n, DataType type);

/// Fills run.data with this NPU's input.
void init_collective_data(CollectiveRun& run);
/// Compares run.data with the reference; sets run.data_error on the first
/// mismatch ("NPU r, offset o: expected x, got y").
void check_collective_data(CollectiveRun& run);

}  // namespace fabricsim
