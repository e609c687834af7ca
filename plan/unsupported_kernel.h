// Raised by the lowering for a kernel shape it does not compile; the runtime then runs that
// kernel through the interpreter and says so in the log, or, under LZ_JIT=strict, fails it.
#pragma once

#include <stdexcept>
#include <string>

namespace lz::plan {

class UnsupportedKernel : public std::runtime_error {
 public:
  explicit UnsupportedKernel(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace lz::plan
