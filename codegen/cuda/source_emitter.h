// The emitter behind generate_cuda_source (codegen/cuda/source.h): one fused kernel as CUDA C++
// entries. source.cpp defines its variables, entries, indices, values and elementwise entries;
// reduction_entries.cpp its reduction entries.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "codegen/cuda/reduction_source.h"
#include "codegen/cuda/source.h"
#include "codegen/cuda/source_writer.h"
#include "codegen/value_emitter.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_layout.h"

namespace lz::codegen::cuda::detail {

using ir::Node;
using ir::Op;

/// `value` as a C++ literal of type long long.
std::string literal(int64_t value);

/// Positions and values are C++ expressions: variables the emitter declares, literals and the
/// loops' induction variables.
class SourceEmitter : public ValueEmitter<SourceEmitter, std::string> {
 public:
  SourceEmitter(const plan::Kernel& kernel, std::string name)
      : ValueEmitter(kernel, plan::exact_sizes(kernel)), kernel_(kernel), name_(std::move(name)) {}

  CudaKernelSource emit();

 private:
  friend ValueEmitter;

  // ---------------------------------------------------------------------------------------
  // Variables and blocks (source.cpp)

  std::string declare(const char* type, const std::string& expression);

  /// Values computed in a block of the generated code are not visible after it: the memo of an
  /// inner block is dropped when it closes.
  class Block {
   public:
    explicit Block(SourceEmitter& emitter) : emitter_(emitter), saved_(emitter.memo_) {}
    ~Block() { emitter_.memo_ = std::move(saved_); }
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;

   private:
    SourceEmitter& emitter_;
    Memo saved_;
  };

  // ---------------------------------------------------------------------------------------
  // Entries (source.cpp)

  std::string buffer_name(const Node* node) const;
  void begin_entry(CudaEntry entry, const std::string& suffix);
  void end_entry();
  void store(const Node* output, const std::string& value, const std::string& position);

  // ---------------------------------------------------------------------------------------
  // Indices (source.cpp)

  std::string index_constant(int64_t value);
  std::string index_scalar(const Node* node, int slot);
  std::string index_add(const std::string& a, const std::string& b);
  std::string index_scale(const std::string& x, int64_t factor);
  std::string index_divide(const std::string& x, int64_t divisor);
  std::string index_remainder(const std::string& x, int64_t divisor);
  std::string index_divide(const std::string& x, const std::string& divisor);
  std::string index_remainder(const std::string& x, const std::string& divisor);
  std::string index_multiply(const std::string& a, const std::string& b);
  std::string runtime_extent(int slot);
  std::string name_index(const std::string& x);

  // ---------------------------------------------------------------------------------------
  // Values (source.cpp)

  std::string scalar(const Node* node, int slot) const;
  std::string scalar_as_double(const Node* node, int slot) const;
  std::string leaf(const Node* node, Index& index);
  std::string cast(const Node* node, const std::string& x);
  std::string unary(const Node* node, const std::string& x);
  std::string binary(const Node* node, const std::string& x, const std::string& y);
  std::string select(const Node* node, const std::string& condition, const std::string& if_true,
                     const std::string& if_false);
  [[noreturn]] void refuse(const Node* node);
  std::string load_input(const Node* node, Index& index);
  std::string leaf_expression(const Node* node, Index& index);
  std::pair<std::string, std::string> gather_position(const Node*, const std::string& raw,
                                                      const std::string& extent);
  std::string gather_fill(const Node* node);
  std::string concatenate(const Node* node, Index& index);

  // ---------------------------------------------------------------------------------------
  // Elementwise entries (source.cpp)

  void emit_elementwise_entry(const plan::ElementwiseLoop& loop);
  template <class ComputeAt>
  void emit_flat_groups(const std::vector<const Node*>& outputs, const ComputeAt& compute_at);

  // ---------------------------------------------------------------------------------------
  // Reduction entries (reduction_entries.cpp)

  void choose_staged_rows(const plan::ReductionLoops& loops, int passes);
  void bind_results(const std::vector<ReductionState>& reductions);
  void emit_reduction_entries(const plan::ReductionLoops& loops);
  Index input_index(const plan::ReductionLoops& loops, const std::vector<std::string>& kept_dims,
                    const std::string& reduced_position);
  void accumulate_at(const std::vector<ReductionState>& reductions,
                     const std::vector<const Node*>& outputs, Index& index);
  void emit_reduction_per_position(const std::vector<std::vector<ReductionState>>& stages,
                                   const plan::ReductionLoops& loops);
  void emit_split_reduction(const std::vector<ReductionState>& reductions,
                            const plan::ReductionLoops& loops);

  const plan::Kernel& kernel_;
  const std::string name_;

  CudaKernelSource result_;
  SourceWriter writer_;
  int next_variable_ = 0;
  /// "lane" inside a flat kernel's vector loop: inputs and outputs go through the packs.
  std::string lane_;
  /// Inputs staged in shared memory by the first pass over the reduced elements, and how the
  /// pass being emitted reads them at loop_index_, its position (choose_staged_rows).
  enum class Staging { Off, Store, Load };
  std::unordered_map<const Node*, std::string> staged_rows_;
  Staging staging_ = Staging::Off;
  Index loop_index_;
};

}  // namespace lz::codegen::cuda::detail
