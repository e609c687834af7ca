// The streams of the logical devices: where launched work runs.
#pragma once

#include "runtime/stream.h"

namespace lz::runtime {

/// Logical CPU devices are numbered 0 .. kMaxCpuDevices - 1.
constexpr int kMaxCpuDevices = 64;

/// The stream of logical CPU device `index`, started at its first use and kept until exit,
/// when the work still queued on it runs before the process ends.
Stream& cpu_stream(int index);

/// Blocks until every stream has run what was submitted to it before the call.
void synchronize_all_streams();

}  // namespace lz::runtime
