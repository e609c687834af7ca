// Where a tensor lives and runs.
#pragma once

#include <string>

namespace lz {

/// A compute device. Only the CPU exists until the CUDA backend lands.
class Device {
 public:
  enum class Kind { Cpu };

  /// The host CPU.
  static Device cpu() { return Device(Kind::Cpu, 0); }

  Kind kind() const { return kind_; }
  int index() const { return index_; }
  /// "cpu".
  std::string name() const;

  friend bool operator==(const Device&, const Device&) = default;

 private:
  Device(Kind kind, int index) : kind_(kind), index_(index) {}
  Kind kind_;
  int index_;
};

/// The device new tensors are created on when none is given.
Device default_device();

}  // namespace lz
