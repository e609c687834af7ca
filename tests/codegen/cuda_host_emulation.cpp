#include "tests/codegen/cuda_host_emulation.h"

namespace lz::cuda_emulation {

BlockEmulator::BlockEmulator() {
  threads_.reserve(kBlockThreads);
  for (unsigned t = 0; t < kBlockThreads; ++t) threads_.emplace_back([this, t] { run_thread(t); });
}

BlockEmulator::~BlockEmulator() {
  stopping_ = true;
  launch_started_.arrive_and_wait();
  for (std::thread& thread : threads_) thread.join();
}

void BlockEmulator::launch(EntryThread entry, const EntryArguments& arguments, unsigned blocks) {
  entry_ = entry;
  arguments_ = arguments;
  blocks_ = blocks;
  launch_started_.arrive_and_wait();
  launch_done_.arrive_and_wait();
}

void BlockEmulator::run_thread(unsigned thread_index) {
  ThreadState thread;
  thread.thread_index.x = thread_index;
  thread.block_dim.x = kBlockThreads;
  thread.barriers = &barriers_;
  for (;;) {
    launch_started_.arrive_and_wait();
    if (stopping_) return;
    thread.grid_dim.x = blocks_;
    for (unsigned block = 0; block < blocks_; ++block) {
      thread.block_index.x = block;
      entry_(&thread, &arguments_);
      // The block ends when all its threads have: only then may the next one reuse __shared__.
      barriers_.threads_arrived.arrive_and_wait();
    }
    launch_done_.arrive_and_wait();
  }
}

}  // namespace lz::cuda_emulation
