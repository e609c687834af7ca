// The streams of the logical devices: where launched work runs.
#pragma once

#include "lazuli/device.h"
#include "runtime/stream.h"

namespace lz::runtime {

/// Logical CPU devices are numbered 0 .. kMaxCpuDevices - 1, their streams 0 ..
/// kStreamsPerDevice - 1.
constexpr int kMaxCpuDevices = 64;
constexpr int kMaxCudaDevices = 16;
constexpr int kStreamsPerDevice = 8;

/// Stream `stream` of `device`, started at its first use and kept until exit, when the work
/// still queued on it runs before the process ends. For a CUDA device it is the host thread
/// that queues the device's work on the matching CUDA stream.
Stream& device_stream(Device device, int stream = 0);
/// device_stream(Device::cpu(device), stream).
Stream& cpu_stream(int device, int stream = 0);

/// The thread that runs then() callbacks, one at a time in the order their tensors were
/// computed. User code never runs on a device's stream, so a callback may record, launch and
/// wait like any other thread without stalling the work it waits for.
Stream& callback_stream();

/// Registers again the exit handler that runs what is still queued on the streams, so that it runs
/// before the destructors of the static objects made so far (exit runs handlers newest first):
/// called after a library the work runs made static objects of its own, such as the code of its
/// kernels (runtime/cpu/onednn_gemm.h).
void reregister_exit_drain();

/// Blocks until every device's stream has run what was submitted to it before the call, and
/// the callbacks that work queued have run (except when called from a callback, which cannot
/// wait for itself).
void synchronize_all_streams();

/// Blocks until every CUDA device in use has run the work queued on it (the streams above only
/// queue it; runtime/cuda/memory.h). Throws lz::Error with what a device reported (a fault).
void synchronize_cuda_devices();

}  // namespace lz::runtime
