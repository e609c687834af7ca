// The streams of the logical devices: where launched work runs.
#pragma once

#include "runtime/stream.h"

namespace lz::runtime {

/// Logical CPU devices are numbered 0 .. kMaxCpuDevices - 1, their streams 0 ..
/// kStreamsPerDevice - 1.
constexpr int kMaxCpuDevices = 64;
constexpr int kStreamsPerDevice = 8;

/// Stream `stream` of logical CPU device `device`, started at its first use and kept until exit,
/// when the work still queued on it runs before the process ends.
Stream& cpu_stream(int device, int stream = 0);

/// Blocks until every stream has run what was submitted to it before the call.
void synchronize_all_streams();

}  // namespace lz::runtime
