// A host emulation of the CUDA device features that codegen/cuda's generated code uses, so that a
// kernel's translation unit compiles with the host C++ compiler and runs without a GPU
// (tests/codegen/cuda_emulation_test.cpp). The generated code uses exactly: the qualifiers
// __global__, __device__, __forceinline__, __launch_bounds__, __shared__ (and __restrict__, which
// GCC and Clang know); threadIdx, blockIdx, blockDim and gridDim (x only); __syncthreads;
// __shfl_down_sync over full warps; the bit casts __longlong_as_double, __double_as_longlong,
// __int_as_float, __uint_as_float; and C math functions in float and double forms (expf and
// exp, logf, sinf, cosf, tanhf, powf, sqrtf, fabsf, floor, nextafter, nextafterf). No atomics,
// no dynamic shared memory, no vector types (lz_pack4 of the preamble is a plain aligned struct).
//
// How a launch runs: the threads of a block run concurrently as kBlockThreads host threads, so a
// thread that waits at a barrier really waits for the others, and an entry that reads shared
// memory or a shuffled value before it was written computes garbage here as on a GPU. Blocks run
// one after another on the same threads (BlockEmulator), which makes a function-local static a
// faithful __shared__ array: one block owns it at a time.
//
// What it does not emulate: the accuracy of CUDA's libdevice (the host's libm computes exp, log,
// sin, ...; libdevice rounds them within 1-2 ulp (2 to 4 for some float forms), as glibc
// does, but not always to the same value); memory ordering beyond the barriers (host
// threads see each other's writes after a barrier, as a block does after __syncthreads; no
// weaker global-memory model is emulated, and blocks never run concurrently, so a race between
// blocks cannot show); warp-synchronous execution without a shuffle or barrier (lanes of a warp
// run independently, as since Volta); launch bounds, register or shared-memory limits; partial
// warp masks and shuffle widths other than 32 (the generated code uses neither; they abort).
#pragma once

#include <math.h>  // the C math functions in the global namespace, as CUDA declares them

#include <array>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

namespace lz::cuda_emulation {

/// Threads of every block: codegen::cuda::kCudaBlockSize (the test checks that they agree).
inline constexpr unsigned kBlockThreads = 256;
inline constexpr unsigned kWarpSize = 32;
inline constexpr unsigned kFullWarpMask = 0xffffffffu;

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// Where the threads of one block meet: the block's barrier (__syncthreads) and, per warp, a
/// barrier of its 32 lanes with the slots a shuffle exchanges values through. A shuffle waits
/// for its warp only, as on a GPU: the generated code shuffles within warp 0 alone after a block
/// barrier, which a block-wide barrier would deadlock on.
struct BlockBarriers {
  struct Warp {
    std::barrier<> lanes_arrived{kWarpSize};
    // Two sets of slots, used by alternate shuffles: a lane writing shuffle k + 1's slots has
    // passed shuffle k's barrier, so every lane has read shuffle k - 1's (the same set) by then.
    std::array<std::array<std::uint64_t, kWarpSize>, 2> slots{};
  };
  std::barrier<> threads_arrived{kBlockThreads};
  std::array<Warp, kBlockThreads / kWarpSize> warps;
};

/// What one emulated thread sees while it runs an entry.
struct ThreadState {
  Dim3 thread_index;
  Dim3 block_index;
  Dim3 block_dim;
  Dim3 grid_dim;
  BlockBarriers* barriers = nullptr;
};

/// The arguments of one launch in ABI order (codegen/cuda/source.h): the kernel's input then
/// output buffers, the workspace (entries that take it), count and the scalars.
struct EntryArguments {
  void* const* buffers = nullptr;
  std::uint64_t* workspace = nullptr;
  std::int64_t count = 0;
  const std::uint64_t* scalars = nullptr;
};

/// One thread of an entry: a function the test generates next to each entry, which makes
/// `thread` the caller's CUDA coordinates (ThreadScope) and calls the entry with `arguments`.
using EntryThread = void (*)(const ThreadState* thread, const EntryArguments* arguments);

namespace detail {
// Per host thread, because threadIdx differs per emulated thread; set for the duration of an
// entry by ThreadScope.
inline thread_local const ThreadState* current_thread = nullptr;

[[noreturn]] inline void unsupported(const char* what) {
  std::fprintf(stderr, "cuda_host_emulation: %s is not emulated\n", what);
  std::abort();
}

// Per host thread, like current_thread: which set of its warp's slots the next shuffle uses.
inline thread_local unsigned shuffle_parity = 0;

/// __shfl_down_sync for any type of at most 8 bytes: every lane publishes its value in its
/// warp's slot, waits for the other lanes and reads lane + delta's slot (its own value past the
/// warp's end, as CUDA does).
template <class T>
T shuffle_down(unsigned mask, T value, unsigned delta, int width) {
  static_assert(sizeof(T) <= sizeof(std::uint64_t) && std::is_trivially_copyable_v<T>);
  if (mask != kFullWarpMask) unsupported("a shuffle over part of a warp");
  if (width != static_cast<int>(kWarpSize)) unsupported("a shuffle width other than 32");
  const ThreadState& thread = *current_thread;
  BlockBarriers::Warp& warp = thread.barriers->warps[thread.thread_index.x / kWarpSize];
  const unsigned lane = thread.thread_index.x % kWarpSize;
  std::array<std::uint64_t, kWarpSize>& slots = warp.slots[shuffle_parity];
  shuffle_parity ^= 1;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  slots[lane] = bits;
  warp.lanes_arrived.arrive_and_wait();
  T result = value;
  if (lane + delta < kWarpSize) std::memcpy(&result, &slots[lane + delta], sizeof(T));
  return result;
}

template <class To, class From>
To bit_cast(From value) {
  static_assert(sizeof(To) == sizeof(From));
  To result;
  std::memcpy(&result, &value, sizeof(To));
  return result;
}
}  // namespace detail

/// Makes `thread` the calling host thread's CUDA coordinates until the scope ends.
class ThreadScope {
 public:
  explicit ThreadScope(const ThreadState& thread) { detail::current_thread = &thread; }
  ~ThreadScope() { detail::current_thread = nullptr; }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;
};

inline const ThreadState& current_thread() { return *detail::current_thread; }

/// Runs launches on a pool of kBlockThreads host threads, kept across launches (starting 256
/// threads per block would cost more than most blocks' work). The blocks of a launch run one
/// after another; launch returns when the last block has finished. Defined in
/// cuda_host_emulation.cpp, linked into the test (not into the kernels' shared objects).
class BlockEmulator {
 public:
  BlockEmulator();
  ~BlockEmulator();
  BlockEmulator(const BlockEmulator&) = delete;
  BlockEmulator& operator=(const BlockEmulator&) = delete;

  /// Runs `blocks` blocks of kBlockThreads threads of `entry` over `arguments`.
  void launch(EntryThread entry, const EntryArguments& arguments, unsigned blocks);

 private:
  void run_thread(unsigned thread_index);

  BlockBarriers barriers_;
  // The launching thread and the pool meet at these twice per launch (start, done).
  std::barrier<> launch_started_{kBlockThreads + 1};
  std::barrier<> launch_done_{kBlockThreads + 1};
  // Written by the launching thread before launch_started_, read by the pool after it.
  EntryThread entry_ = nullptr;
  EntryArguments arguments_;
  unsigned blocks_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace lz::cuda_emulation

// ---------------------------------------------------------------------------------------------
// The CUDA spelling the generated code uses, for the kernels' translation units only (they define
// LZ_CUDA_EMULATION_KERNELS before including this header): the test itself keeps its plain C++.
// Reserved identifiers, on purpose: they are CUDA's.
#ifdef LZ_CUDA_EMULATION_KERNELS

// Qualifiers: host code is all one address space, and every block has kBlockThreads threads,
// the bound the generator declares.
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)  // (max_threads[, min_blocks_per_multiprocessor])
// A function-local static: one block at a time owns it (blocks run one after another).
#define __shared__ static

#define threadIdx (::lz::cuda_emulation::current_thread().thread_index)
#define blockIdx (::lz::cuda_emulation::current_thread().block_index)
#define blockDim (::lz::cuda_emulation::current_thread().block_dim)
#define gridDim (::lz::cuda_emulation::current_thread().grid_dim)

inline void __syncthreads() {
  ::lz::cuda_emulation::current_thread().barriers->threads_arrived.arrive_and_wait();
}

// CUDA's overloads, so that an argument converts as it would under nvcc or NVRTC.
inline int __shfl_down_sync(unsigned mask, int value, unsigned delta, int width = 32) {
  return ::lz::cuda_emulation::detail::shuffle_down(mask, value, delta, width);
}
inline unsigned __shfl_down_sync(unsigned mask, unsigned value, unsigned delta, int width = 32) {
  return ::lz::cuda_emulation::detail::shuffle_down(mask, value, delta, width);
}
inline long long __shfl_down_sync(unsigned mask, long long value, unsigned delta, int width = 32) {
  return ::lz::cuda_emulation::detail::shuffle_down(mask, value, delta, width);
}
inline unsigned long long __shfl_down_sync(unsigned mask, unsigned long long value, unsigned delta,
                                           int width = 32) {
  return ::lz::cuda_emulation::detail::shuffle_down(mask, value, delta, width);
}
inline float __shfl_down_sync(unsigned mask, float value, unsigned delta, int width = 32) {
  return ::lz::cuda_emulation::detail::shuffle_down(mask, value, delta, width);
}
inline double __shfl_down_sync(unsigned mask, double value, unsigned delta, int width = 32) {
  return ::lz::cuda_emulation::detail::shuffle_down(mask, value, delta, width);
}

inline double __longlong_as_double(long long bits) {
  return ::lz::cuda_emulation::detail::bit_cast<double>(bits);
}
inline long long __double_as_longlong(double value) {
  return ::lz::cuda_emulation::detail::bit_cast<long long>(value);
}
inline float __int_as_float(int bits) {
  return ::lz::cuda_emulation::detail::bit_cast<float>(bits);
}
inline float __uint_as_float(unsigned bits) {
  return ::lz::cuda_emulation::detail::bit_cast<float>(bits);
}

#endif  // LZ_CUDA_EMULATION_KERNELS
