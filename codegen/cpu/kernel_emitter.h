// The emitter behind lower_kernel (codegen/cpu/lowering.h): one fused kernel as LLVM IR phase
// functions. lowering.cpp defines its phase functions, loops, indices, values and elementwise
// phases; reduction_lowering.cpp its reduction phases. Only those files include it, so LLVM's
// headers reach no other.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/cpu/lowering.h"
#include "codegen/value_emitter.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_layout.h"

namespace lz::codegen::detail {

using ir::Node;
using ir::Op;
using llvm::Value;

/// Where a reduction's running result lives: pointers to a local, or to one slot of a tile's
/// array of them.
struct Accumulator {
  llvm::Type* type = nullptr;  // of the value
  Value* value = nullptr;
  Value* flag = nullptr;   // max/min: a NaN was seen; argmax/argmin: likewise
  Value* index = nullptr;  // argmax/argmin: position of the best element
};

/// What a reduction starts from: its value's type and identity, and whether it keeps a NaN flag
/// and an index.
struct AccumulatorStart {
  llvm::Type* type = nullptr;
  Value* identity = nullptr;
  bool flag = false;
  bool index = false;
};

class KernelEmitter : public ValueEmitter<KernelEmitter, Value*> {
 public:
  KernelEmitter(const plan::Kernel& kernel, plan::Sizes sizes,
                const plan::WrittenOver& written_over, llvm::Module& module, std::string name)
      : ValueEmitter(kernel, sizes),
        kernel_(kernel),
        written_over_(written_over),
        module_(module),
        context_(module.getContext()),
        builder_(context_),
        name_(std::move(name)) {}

  std::vector<Phase> emit();

 private:
  friend ValueEmitter;

  // ---------------------------------------------------------------------------------------
  // Phase functions (lowering.cpp)

  void begin_phase(const Node* range_node, Phase::Range range = Phase::Range::Elements,
                   int reduced_loops = 0, Phase::Kind kind = Phase::Kind::Loop);
  void end_phase();
  Value* output_pointer(const Node* output);
  void store(const Node* output, Value* value, Value* position);

  // ---------------------------------------------------------------------------------------
  // Loops (lowering.cpp)

  Value* constant(int64_t value);
  void emit_loop(Value* begin, Value* end, const std::function<void(Value*)>& body,
                 bool interleave = false);
  void emit_nest(const Shape& shape, const std::vector<int64_t>& axes, std::vector<Value*> fixed,
                 const std::function<void(const std::vector<Value*>&)>& body, bool accumulating,
                 size_t depth = 0);
  llvm::AllocaInst* local(llvm::Type* type, Value* initial);

  // ---------------------------------------------------------------------------------------
  // Indices (lowering.cpp)

  Value* index_constant(int64_t value);
  Value* index_scalar(const Node* node, int slot);
  Value* runtime_extent(int slot);
  Value* index_add(Value* a, Value* b);
  Value* index_scale(Value* x, int64_t factor);
  Value* index_multiply(Value* a, Value* b);
  Value* index_divide(Value* x, int64_t divisor);
  Value* index_remainder(Value* x, int64_t divisor);
  Value* index_divide(Value* x, Value* divisor);
  Value* index_remainder(Value* x, Value* divisor);
  Value* name_index(Value* x);

  // ---------------------------------------------------------------------------------------
  // Values (lowering.cpp)

  bool reads(const Node* consumer, const Node* producer) const;
  Value* scalar_slot(const Node* node, int slot);
  Value* scalar_as_double(const Node* node, int slot);
  Value* cast(const Node* node, Value* x);
  Value* unary(const Node* node, Value* x);
  Value* binary(const Node* node, Value* x, Value* y);
  Value* select(const Node*, Value* condition, Value* if_true, Value* if_false);
  [[noreturn]] void refuse(const Node* node);
  Value* load_input(const Node* node, Index& index);
  Value* leaf(const Node* node, Index& index);
  Value* concatenate(const Node* node, Index& index);
  std::pair<Value*, Value*> gather_position(const Node* node, Value* raw, Value* extent);
  Value* gather_fill(const Node* node);

  // ---------------------------------------------------------------------------------------
  // Elementwise phases (lowering.cpp)

  bool streams_outputs() const;
  void emit_streaming_loops(const std::function<void(Value*)>& body);
  void emit_elementwise_phase(const plan::ElementwiseLoop& loop);

  // ---------------------------------------------------------------------------------------
  // Reduction phases (reduction_lowering.cpp)

  AccumulatorStart accumulator_start(const Node* reduction);
  Accumulator start_accumulator(const Node* reduction);
  void update_accumulator(const Node* reduction, const Accumulator& accumulator, Value* x,
                          const std::vector<Value*>& dims);
  Value* finish_accumulator(const Node* reduction, const Accumulator& accumulator);
  Value* state_slot(size_t r, int slot);
  void emit_split_reduction(const std::vector<const Node*>& reductions,
                            const plan::ReductionLoops& loops);
  void emit_partial_phase(const std::vector<const Node*>& reductions,
                          const plan::ReductionLoops& loops);
  void store_state(size_t j, DType dtype, const Accumulator& accumulator);
  Value* load_state(size_t j, const Node& reduction);
  void emit_finish_phase(const std::vector<const Node*>& reductions,
                         const plan::ReductionLoops& loops);

  /// A final-loop output that reads a reduction's input (softmax's e / sum(e) reads e) gets
  /// that input's value stored into it by the reduction's loop, and the final loop reads it
  /// back instead of computing it again.
  struct Stash {
    const Node* output;
    const Node* input;
  };

  std::vector<std::vector<Stash>> stashes_by_stage(const plan::ReductionLoops& loops) const;
  void emit_reduction_phase(const plan::ReductionLoops& loops);
  void store_kept_outputs(const plan::ReductionLoops& loops, Value* k);
  bool reduces_leading_axes(const plan::ReductionLoops& loops) const;
  void emit_column_tiles(const plan::ReductionLoops& loops);
  std::vector<Value*> kept_dimensions(const plan::ReductionLoops& loops, Value* k);
  void emit_stage_nest(const plan::ReductionLoops& loops, size_t s,
                       const std::vector<Stash>& stashes, const std::vector<Value*>& fixed);
  void emit_final_nest(const plan::ReductionLoops& loops,
                       const std::vector<std::vector<Stash>>& stashed,
                       const std::vector<Value*>& fixed);

  const plan::Kernel& kernel_;
  const plan::WrittenOver& written_over_;
  llvm::Module& module_;
  llvm::LLVMContext& context_;
  llvm::IRBuilder<> builder_;
  const std::string name_;
  std::vector<Phase> phases_;

  // The phase being emitted.
  llvm::Function* function_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  std::unordered_map<const Node*, Value*> buffer_pointers_;
  Value* scalars_ = nullptr;
  Value* begin_ = nullptr;
  Value* end_ = nullptr;
  Value* state_ = nullptr;
  std::unordered_map<int, Value*> runtime_extents_;  // by scalar slot
};

}  // namespace lz::codegen::detail
