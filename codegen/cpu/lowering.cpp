#include "codegen/cpu/lowering.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <llvm/ADT/Triple.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/cpu/element_ops.h"
#include "codegen/value_emitter.h"
#include "lazuli/error.h"
#include "plan/kernel_layout.h"
#include "plan/kernel_signature.h"
#include "plan/unsupported_kernel.h"

namespace lz::codegen {
namespace {

using ir::Node;
using ir::Op;
using llvm::Value;

/// Vectors per iteration of a reduction loop: independent accumulators to hide part of a vector
/// add's latency, yet few enough that a row of 16 float32 still runs as vector code (at 4, the
/// mlp's (131072,16) softmax took 14 ms instead of 1.8).
constexpr int kReductionInterleave = 2;
// Streamed outputs are written from a position that is a multiple of this on (elements), where
// each output's address is a multiple of 64 bytes, whatever its dtype.
constexpr int64_t kStreamingGranule = 64;

/// argmax and argmin: their result is a position along the reduced axis, not a value.
bool is_index_reduction(const Node& reduction) {
  return reduction.op == Op::Argmax || reduction.op == Op::Argmin;
}

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

/// The most kept positions a column reduction computes side by side (emit_column_tiles): each
/// row of its input then gives a contiguous, vectorizable run of up to this many elements (4 KiB
/// of float32), and the accumulators (8 KiB of float64) stay in the first-level cache.
constexpr int64_t kColumnTile = 1024;

class KernelEmitter : public ValueEmitter<KernelEmitter, Value*> {
 public:
  KernelEmitter(const plan::Kernel& kernel, plan::Sizes sizes, llvm::Module& module,
                std::string name)
      : ValueEmitter(kernel, sizes),
        kernel_(kernel),
        module_(module),
        context_(module.getContext()),
        builder_(context_),
        name_(std::move(name)) {}

  std::vector<Phase> emit() {
    if (layout_.reduction) emit_reduction_phase(*layout_.reduction);
    for (const plan::ElementwiseLoop& loop : layout_.elementwise_loops) {
      emit_elementwise_phase(loop);
    }
    std::string problems;
    llvm::raw_string_ostream stream(problems);
    if (llvm::verifyModule(module_, &stream)) {
      throw Error("the CPU code generator produced invalid LLVM IR for kernel " + name_ + ": " +
                  stream.str());
    }
    return phases_;
  }

 private:
  friend ValueEmitter;

  // ---------------------------------------------------------------------------------------
  // Phase functions

  /// Starts `<name>_phase<i>`: a wrapper with the generic signature that calls a body taking
  /// each buffer as its own noalias pointer (so loops vectorize without overlap checks).
  void begin_phase(const Node* range_node, Phase::Range range = Phase::Range::Elements,
                   int reduced_loops = 0, Phase::Kind kind = Phase::Kind::Loop) {
    const std::string symbol = name_ + "_phase" + std::to_string(phases_.size());
    Phase phase;
    phase.kind = kind;
    phase.symbol = symbol;
    phase.range_node = layout_.position.at(range_node);
    phase.range = range;
    phase.reduced_loops = reduced_loops;
    phases_.push_back(std::move(phase));

    llvm::Type* i64 = builder_.getInt64Ty();
    std::vector<llvm::Type*> parameters;
    std::vector<const Node*> buffers;
    for (const ir::NodePtr& input : kernel_.inputs) buffers.push_back(input.get());
    for (const ir::NodePtr& output : kernel_.outputs) buffers.push_back(output.get());
    for (const Node* buffer : buffers) {
      parameters.push_back(llvm::PointerType::getUnqual(storage_type(context_, buffer->dtype)));
    }
    parameters.push_back(llvm::PointerType::getUnqual(i64));
    parameters.push_back(i64);
    parameters.push_back(i64);
    parameters.push_back(llvm::PointerType::getUnqual(i64));
    llvm::Function* body =
        llvm::Function::Create(llvm::FunctionType::get(builder_.getVoidTy(), parameters, false),
                               llvm::Function::InternalLinkage, symbol + "_body", module_);
    body->addFnAttr(llvm::Attribute::NoInline);
    body->addFnAttr(llvm::Attribute::NoUnwind);
    for (size_t i = 0; i < buffers.size(); ++i) body->addParamAttr(i, llvm::Attribute::NoAlias);
    // The scalars are read only, and apart from the buffers: their loads leave the loops.
    body->addParamAttr(buffers.size(), llvm::Attribute::NoAlias);
    body->addParamAttr(buffers.size(), llvm::Attribute::ReadOnly);
    body->addParamAttr(buffers.size() + 3, llvm::Attribute::NoAlias);

    llvm::Type* opaque = builder_.getInt8PtrTy();
    llvm::Function* wrapper =
        llvm::Function::Create(llvm::FunctionType::get(builder_.getVoidTy(),
                                                       {llvm::PointerType::getUnqual(opaque),
                                                        llvm::PointerType::getUnqual(i64), i64, i64,
                                                        llvm::PointerType::getUnqual(i64)},
                                                       false),
                               llvm::Function::ExternalLinkage, symbol, module_);
    wrapper->addFnAttr(llvm::Attribute::NoUnwind);
    builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", wrapper));
    std::vector<Value*> arguments;
    for (size_t i = 0; i < buffers.size(); ++i) {
      Value* slot = builder_.CreateConstInBoundsGEP1_64(opaque, wrapper->getArg(0), i);
      arguments.push_back(builder_.CreateBitCast(builder_.CreateLoad(opaque, slot), parameters[i]));
    }
    arguments.push_back(wrapper->getArg(1));
    arguments.push_back(wrapper->getArg(2));
    arguments.push_back(wrapper->getArg(3));
    arguments.push_back(wrapper->getArg(4));
    builder_.CreateCall(body, arguments);
    builder_.CreateRetVoid();

    function_ = body;
    buffer_pointers_.clear();
    for (size_t i = 0; i < buffers.size(); ++i) buffer_pointers_[buffers[i]] = body->getArg(i);
    scalars_ = body->getArg(buffers.size());
    begin_ = body->getArg(buffers.size() + 1);
    end_ = body->getArg(buffers.size() + 2);
    state_ = body->getArg(buffers.size() + 3);
    entry_ = llvm::BasicBlock::Create(context_, "entry", body);
    builder_.SetInsertPoint(entry_);
    memo_.clear();
    runtime_extents_.clear();
  }

  void end_phase() { builder_.CreateRetVoid(); }

  Value* output_pointer(const Node* output) {
    for (size_t i = 0; i < kernel_.outputs.size(); ++i) {
      if (kernel_.outputs[i].get() == output) {
        return function_->getArg(kernel_.inputs.size() + i);
      }
    }
    throw Error("internal: node is not an output of the kernel");
  }

  void store(const Node* output, Value* value, Value* position) {
    llvm::Type* type = storage_type(context_, output->dtype);
    Value* address = builder_.CreateInBoundsGEP(type, output_pointer(output), position);
    builder_.CreateAlignedStore(to_storage(builder_, output->dtype, value), address,
                                llvm::Align(dtype_size(output->dtype)));
  }

  // ---------------------------------------------------------------------------------------
  // Loops

  Value* constant(int64_t value) { return builder_.getInt64(static_cast<uint64_t>(value)); }

  /// for (i = begin; i < end; ++i) body(i), leaving the builder after the loop. `interleave`
  /// asks the vectorizer for several vectors per iteration (independent accumulators).
  void emit_loop(Value* begin, Value* end, const std::function<void(Value*)>& body,
                 bool interleave = false) {
    llvm::BasicBlock* before = builder_.GetInsertBlock();
    llvm::BasicBlock* header = llvm::BasicBlock::Create(context_, "loop", function_);
    llvm::BasicBlock* inside = llvm::BasicBlock::Create(context_, "body", function_);
    llvm::BasicBlock* after = llvm::BasicBlock::Create(context_, "after", function_);
    builder_.CreateBr(header);
    builder_.SetInsertPoint(header);
    llvm::PHINode* i = builder_.CreatePHI(builder_.getInt64Ty(), 2, "i");
    i->addIncoming(begin, before);
    builder_.CreateCondBr(builder_.CreateICmpSLT(i, end), inside, after);
    builder_.SetInsertPoint(inside);
    body(i);
    Value* next = builder_.CreateAdd(i, constant(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
    i->addIncoming(next, builder_.GetInsertBlock());
    llvm::BranchInst* back = builder_.CreateBr(header);
    if (interleave) {
      llvm::Metadata* count[] = {
          llvm::MDString::get(context_, "llvm.loop.interleave.count"),
          llvm::ConstantAsMetadata::get(builder_.getInt32(kReductionInterleave))};
      llvm::MDNode* loop =
          llvm::MDNode::getDistinct(context_, {nullptr, llvm::MDNode::get(context_, count)});
      loop->replaceOperandWith(0, loop);  // a loop's metadata starts with itself
      back->setMetadata(llvm::LLVMContext::MD_loop, loop);
    }
    builder_.SetInsertPoint(after);
  }

  /// Nested loops over dimensions `axes` of `shape` (outermost first); `body` gets the full
  /// multi-index, whose other dimensions come from `fixed`. The innermost loop interleaves when
  /// `accumulating`.
  void emit_nest(const Shape& shape, const std::vector<int64_t>& axes, std::vector<Value*> fixed,
                 const std::function<void(const std::vector<Value*>&)>& body, bool accumulating,
                 size_t depth = 0) {
    if (depth == axes.size()) {
      body(fixed);
      return;
    }
    const int64_t axis = axes[depth];
    emit_loop(
        constant(0), extent_value(extent(shape[axis])),
        [&](Value* i) {
          fixed[axis] = i;
          emit_nest(shape, axes, fixed, body, accumulating, depth + 1);
        },
        accumulating && depth + 1 == axes.size());
  }

  llvm::AllocaInst* local(llvm::Type* type, Value* initial) {
    llvm::IRBuilder<> at_entry(entry_, entry_->begin());
    llvm::AllocaInst* slot = at_entry.CreateAlloca(type);
    builder_.CreateStore(initial, slot);
    return slot;
  }

  // ---------------------------------------------------------------------------------------
  // Indices

  // Positions are non-negative and within int64_t (value_emitter.h).
  Value* index_constant(int64_t value) { return constant(value); }
  Value* index_scalar(const Node* node, int slot) { return scalar_slot(node, slot); }
  /// Loaded once per phase, at its entry, so every loop of the phase may use it.
  Value* runtime_extent(int slot) {
    Value*& loaded = runtime_extents_[slot];
    if (loaded == nullptr) {
      llvm::IRBuilder<> at_entry(entry_, entry_->begin());
      loaded = at_entry.CreateLoad(
          builder_.getInt64Ty(),
          at_entry.CreateConstInBoundsGEP1_64(builder_.getInt64Ty(), scalars_, slot));
    }
    return loaded;
  }
  Value* index_add(Value* a, Value* b) { return builder_.CreateAdd(a, b, "", false, true); }
  Value* index_scale(Value* x, int64_t factor) {
    return builder_.CreateMul(x, constant(factor), "", factor >= 0, true);
  }
  Value* index_multiply(Value* a, Value* b) { return builder_.CreateMul(a, b, "", true, true); }
  Value* index_divide(Value* x, int64_t divisor) { return index_divide(x, constant(divisor)); }
  Value* index_remainder(Value* x, int64_t divisor) {
    return index_remainder(x, constant(divisor));
  }
  Value* index_divide(Value* x, Value* divisor) { return builder_.CreateUDiv(x, divisor); }
  Value* index_remainder(Value* x, Value* divisor) { return builder_.CreateURem(x, divisor); }
  Value* name_index(Value* x) { return x; }

  // ---------------------------------------------------------------------------------------
  // Values

  /// Whether computing `consumer` reads `producer`, through nodes of the kernel other than
  /// reductions (whose results are read, not their inputs).
  bool reads(const Node* consumer, const Node* producer) const {
    std::vector<const Node*> pending{consumer};
    std::unordered_set<const Node*> seen;
    while (!pending.empty()) {
      const Node* node = pending.back();
      pending.pop_back();
      if (node == producer) return true;
      if (!layout_.position.contains(node) || !seen.insert(node).second) continue;
      if (node != consumer && ir::op_info(node->op).kind == ir::OpKind::Reduction) {
        continue;  // its value at a kept position is ready: its input is not read again
      }
      for (const ir::NodePtr& input : node->inputs) pending.push_back(input.get());
    }
    return false;
  }

  Value* scalar_slot(const Node* node, int slot) {
    Value* address = builder_.CreateConstInBoundsGEP1_64(builder_.getInt64Ty(), scalars_,
                                                         layout_.scalar_slot.at(node) + slot);
    return builder_.CreateLoad(builder_.getInt64Ty(), address);
  }

  Value* scalar_as_double(const Node* node, int slot) {
    return builder_.CreateBitCast(scalar_slot(node, slot), builder_.getDoubleTy());
  }

  Value* cast(const Node* node, Value* x) {
    return emit_cast(builder_, node->inputs[0]->dtype, node->dtype, x);
  }
  Value* unary(const Node* node, Value* x) {
    return emit_unary(builder_, module_, node->op, node->dtype, x);
  }
  Value* binary(const Node* node, Value* x, Value* y) {
    return emit_binary(builder_, module_, node->op, node->inputs[0]->dtype, x, y);
  }
  Value* select(const Node*, Value* condition, Value* if_true, Value* if_false) {
    return builder_.CreateSelect(condition, if_true, if_false);
  }
  [[noreturn]] void refuse(const Node* node) {
    throw plan::UnsupportedKernel(std::string(ir::op_name(node->op)) + " inside a fused kernel");
  }

  Value* load_input(const Node* node, Index& index) {
    llvm::Type* type = storage_type(context_, node->dtype);
    Value* position = node->size() == 1 ? constant(0) : linear_of(index);
    Value* address = builder_.CreateInBoundsGEP(type, buffer_pointers_.at(node), position);
    Value* stored = builder_.CreateAlignedLoad(type, address, llvm::Align(dtype_size(node->dtype)));
    return from_storage(builder_, node->dtype, stored);
  }

  Value* leaf(const Node* node, Index& index) {
    llvm::Type* type = value_type(context_, node->dtype);
    switch (node->op) {
      case Op::Full: {
        Value* bits = scalar_slot(node, 0);
        switch (node->dtype) {
          case DType::Float32:
            return builder_.CreateBitCast(builder_.CreateTrunc(bits, builder_.getInt32Ty()), type);
          case DType::Float64: return builder_.CreateBitCast(bits, type);
          case DType::Int64: return bits;
          default: return builder_.CreateTrunc(bits, type);
        }
      }
      case Op::Arange: {
        Value* position = linear_of(index);
        if (is_floating(node->dtype)) {
          // start + i * step in float64, rounded once.
          Value* offset = builder_.CreateFMul(
              builder_.CreateSIToFP(position, builder_.getDoubleTy()), scalar_as_double(node, 1));
          Value* value = builder_.CreateFAdd(scalar_as_double(node, 0), offset);
          return node->dtype == float32 ? builder_.CreateFPTrunc(value, type) : value;
        }
        Value* value = builder_.CreateAdd(scalar_slot(node, 0),
                                          builder_.CreateMul(position, scalar_slot(node, 1)));
        return node->dtype == int64 ? value : builder_.CreateTrunc(value, type);
      }
      case Op::RandomUniform:
      case Op::RandomNormal: {
        const std::string name = std::string(node->op == Op::RandomUniform ? "lz_random_uniform_"
                                                                           : "lz_random_normal_") +
                                 dtype_short_name(node->dtype);
        return emit_runtime_call(builder_, module_, name.c_str(), type,
                                 {scalar_slot(node, 0), linear_of(index), scalar_as_double(node, 1),
                                  scalar_as_double(node, 2)});
      }
      default: break;
    }
    throw plan::UnsupportedKernel(std::string(ir::op_name(node->op)) + " leaf");
  }

  /// Every input is read at the position clamped into its block, then the block containing
  /// the position is selected: no branches, and no read outside any input.
  Value* concatenate(const Node* node, Index& index) {
    const int64_t axis = node->axes[0];
    const std::vector<Value*> dims = dims_of(index);
    Value* result = nullptr;
    int64_t offset = 0;
    for (const ir::NodePtr& input : node->inputs) {
      const int64_t extent = input->shape[axis];
      if (extent == 0) continue;
      Index at{&input->shape, dims, nullptr};
      Value* local = builder_.CreateSub(dims[axis], constant(offset));
      Value* low =
          builder_.CreateSelect(builder_.CreateICmpSLT(local, constant(0)), constant(0), local);
      at.dims[axis] = builder_.CreateSelect(builder_.CreateICmpSGT(low, constant(extent - 1)),
                                            constant(extent - 1), low);
      Value* value = emit_value(input.get(), at);
      result = result == nullptr
                   ? value
                   : builder_.CreateSelect(builder_.CreateICmpSGE(dims[axis], constant(offset)),
                                           value, result);
      offset += extent;
    }
    // Every input is empty along the axis: the result has no elements, so no loop reaches this
    // value (a reduction over it runs zero times), but the code still needs one.
    if (result == nullptr) return llvm::Constant::getNullValue(value_type(context_, node->dtype));
    return result;
  }

  std::pair<Value*, Value*> gather_position(const Node* node, Value* raw, Value* extent) {
    Value* index =
        node->inputs[1]->dtype == int64 ? raw : builder_.CreateSExt(raw, builder_.getInt64Ty());
    Value* from_end = builder_.CreateAdd(index, extent);
    index = builder_.CreateSelect(builder_.CreateICmpSLT(index, constant(0)), from_end, index);
    Value* inside = builder_.CreateICmpULT(index, extent);
    return {builder_.CreateSelect(inside, index, constant(0)), inside};
  }
  Value* gather_fill(const Node* node) {
    llvm::Type* type = value_type(context_, node->dtype);
    if (is_floating(node->dtype)) return llvm::ConstantFP::getNaN(type);
    if (node->dtype == bool_) return builder_.getTrue();
    return llvm::ConstantInt::get(type, llvm::APInt::getSignedMinValue(type->getIntegerBitWidth()));
  }

  // ---------------------------------------------------------------------------------------
  // Elementwise phases

  /// Whether this kernel's outputs are streamed: the plan's choice for a flat kernel (whose key
  /// holds it), on x86, whose non-temporal stores and fence the JIT emits.
  bool streams_outputs() const {
    return layout_.flat && plan::cpu_streams_outputs(kernel_) &&
           llvm::Triple(llvm::sys::getProcessTriple()).isX86();
  }

  /// The flat loop of a kernel whose outputs are streamed: the positions before the first
  /// multiple of kStreamingGranule, then the rest. Every output's buffer starts at a multiple of
  /// 64 bytes (memory/buffer.h), so from there the vectorizer's stores are known to be aligned,
  /// which non-temporal vector stores need; the JIT marks them (kStreamingStoresAttribute). The
  /// fence then orders them before whatever tells another thread that the phase is done: unlike
  /// ordinary stores, x86 does not keep non-temporal ones in order with later stores.
  void emit_streaming_loops(const std::function<void(Value*)>& body) {
    for (const ir::NodePtr& output : kernel_.outputs) {
      builder_.CreateAlignmentAssumption(module_.getDataLayout(), output_pointer(output.get()), 64);
    }
    Value* aligned = builder_.CreateAnd(builder_.CreateAdd(begin_, constant(kStreamingGranule - 1)),
                                        constant(-kStreamingGranule));
    emit_loop(begin_, builder_.CreateSelect(builder_.CreateICmpSLT(aligned, end_), aligned, end_),
              body);
    emit_loop(aligned, end_, body);
    builder_.CreateCall(llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::x86_sse_sfence));
    function_->addFnAttr(kStreamingStoresAttribute);
  }

  /// A phase over the elements of the loop's range node computing the loop's outputs.
  void emit_elementwise_phase(const plan::ElementwiseLoop& loop) {
    begin_phase(loop.range);
    const Shape& shape = loop.range->shape;
    const auto compute_at = [&](Index& index) {
      memo_.clear();
      for (const Node* output : loop.outputs) {
        Index at = output_index(output, index);
        store(output, emit_value(output, at), index.linear);
      }
      memo_.clear();
    };
    const int64_t inner = shape.empty() ? 1 : shape.back();
    const auto linear_body = [&](Value* i) {
      Index index{&shape, {}, i};
      compute_at(index);
    };
    if (streams_outputs()) {
      emit_streaming_loops(linear_body);
    } else if (layout_.flat || shape.size() < 2 || inner < 8) {
      emit_loop(begin_, end_, linear_body);
    } else {
      // Row by row: the innermost dimension is the inner loop's induction variable.
      Shape outer_shape(shape.begin(), shape.end() - 1);
      Value* row_length = extent_value(extent(inner));
      Value* first_row = builder_.CreateUDiv(begin_, row_length);
      Value* end_row = builder_.CreateUDiv(
          builder_.CreateAdd(end_, builder_.CreateSub(row_length, constant(1))), row_length);
      emit_loop(first_row, end_row, [&](Value* row) {
        Value* row_start = builder_.CreateMul(row, row_length);
        Value* from = builder_.CreateSub(begin_, row_start);
        from = builder_.CreateSelect(builder_.CreateICmpSLT(from, constant(0)), constant(0), from);
        Value* to = builder_.CreateSub(end_, row_start);
        to = builder_.CreateSelect(builder_.CreateICmpSGT(to, row_length), row_length, to);
        Index row_index{&outer_shape, {}, row};
        std::vector<Value*> outer = dims_of(row_index);
        emit_loop(from, to, [&](Value* j) {
          Index index{&shape, outer, builder_.CreateAdd(row_start, j, "", true, true)};
          index.dims.push_back(j);
          compute_at(index);
        });
      });
    }
    end_phase();
  }

  // ---------------------------------------------------------------------------------------
  // Reduction phases

  AccumulatorStart accumulator_start(const Node* reduction) {
    const DType dtype = reduction->inputs[0]->dtype;
    llvm::Type* type = value_type(context_, dtype);
    switch (reduction->op) {
      case Op::Sum:
        // Floating sums accumulate in float64, as the interpreter does.
        if (is_floating(dtype)) {
          return {builder_.getDoubleTy(), llvm::ConstantFP::get(builder_.getDoubleTy(), 0.0)};
        }
        return {type, llvm::ConstantInt::get(type, 0)};
      case Op::Max:
      case Op::Min:
      case Op::Argmax:
      case Op::Argmin: {
        const bool lowest = reduction->op == Op::Max || reduction->op == Op::Argmax;
        Value* identity = nullptr;
        if (is_floating(dtype)) {
          identity = llvm::ConstantFP::getInfinity(type, lowest);
        } else if (dtype == bool_) {
          identity = builder_.getInt1(!lowest);
        } else {
          const unsigned bits = type->getIntegerBitWidth();
          identity =
              llvm::ConstantInt::get(context_, lowest ? llvm::APInt::getSignedMinValue(bits)
                                                      : llvm::APInt::getSignedMaxValue(bits));
        }
        return {type, identity, true, is_index_reduction(*reduction)};
      }
      default: break;
    }
    throw plan::UnsupportedKernel(std::string(ir::op_name(reduction->op)) + " reduction");
  }

  Accumulator start_accumulator(const Node* reduction) {
    const AccumulatorStart start = accumulator_start(reduction);
    Accumulator accumulator;
    accumulator.type = start.type;
    accumulator.value = local(start.type, start.identity);
    if (start.flag) accumulator.flag = local(builder_.getInt1Ty(), builder_.getFalse());
    if (start.index) accumulator.index = local(builder_.getInt64Ty(), constant(0));
    return accumulator;
  }

  void update_accumulator(const Node* reduction, const Accumulator& accumulator, Value* x,
                          const std::vector<Value*>& dims) {
    const DType dtype = reduction->inputs[0]->dtype;
    llvm::Type* type = accumulator.type;
    Value* current = builder_.CreateLoad(type, accumulator.value);
    Value* next = nullptr;
    if (reduction->op == Op::Sum) {
      if (is_floating(dtype)) {
        Value* wide = dtype == float32 ? builder_.CreateFPExt(x, builder_.getDoubleTy()) : x;
        // Reassociation lets the loop keep vector partial sums (a different, equally valid
        // summation order than the interpreter's).
        llvm::FastMathFlags flags;
        flags.setAllowReassoc();
        next = builder_.CreateFAdd(current, wide);
        llvm::cast<llvm::Instruction>(next)->setFastMathFlags(flags);
      } else {
        next = builder_.CreateAdd(current, x);
      }
      builder_.CreateStore(next, accumulator.value);
      return;
    }
    Value* seen_nan = builder_.CreateLoad(builder_.getInt1Ty(), accumulator.flag);
    Value* x_nan = is_floating(dtype) ? builder_.CreateFCmpUNO(x, x) : builder_.getFalse();
    if (is_index_reduction(*reduction)) {
      // The first maximum (minimum) wins; the first NaN counts as either.
      const bool maximum = reduction->op == Op::Argmax;
      Value* better =
          is_floating(dtype)
              ? (maximum ? builder_.CreateFCmpOGT(x, current) : builder_.CreateFCmpOLT(x, current))
          : dtype == bool_
              ? (maximum ? builder_.CreateICmpUGT(x, current) : builder_.CreateICmpULT(x, current))
              : (maximum ? builder_.CreateICmpSGT(x, current) : builder_.CreateICmpSLT(x, current));
      Value* take =
          builder_.CreateAnd(builder_.CreateNot(seen_nan), builder_.CreateOr(x_nan, better));
      Value* best_index = builder_.CreateLoad(builder_.getInt64Ty(), accumulator.index);
      builder_.CreateStore(builder_.CreateSelect(take, dims[reduction->axes[0]], best_index),
                           accumulator.index);
      builder_.CreateStore(builder_.CreateSelect(take, x, current), accumulator.value);
      builder_.CreateStore(builder_.CreateOr(seen_nan, x_nan), accumulator.flag);
      return;
    }
    const bool maximum = reduction->op == Op::Max;
    if (is_floating(dtype)) {
      // Whether a NaN was seen is tracked apart, so the running extremum may assume there are
      // none (no-NaNs flags let the loop vectorize): after a NaN it is poison, but then the
      // flag selects NaN as the result and the poison is never read.
      next = builder_.CreateIntrinsic(maximum ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum,
                                      {type}, {current, x});
      llvm::FastMathFlags flags;
      flags.setNoNaNs();
      flags.setNoSignedZeros();
      llvm::cast<llvm::Instruction>(next)->setFastMathFlags(flags);
      builder_.CreateStore(builder_.CreateOr(seen_nan, x_nan), accumulator.flag);
    } else if (dtype == bool_) {
      next = maximum ? builder_.CreateOr(current, x) : builder_.CreateAnd(current, x);
    } else {
      Value* pick =
          maximum ? builder_.CreateICmpSGT(x, current) : builder_.CreateICmpSLT(x, current);
      next = builder_.CreateSelect(pick, x, current);
    }
    builder_.CreateStore(next, accumulator.value);
  }

  Value* finish_accumulator(const Node* reduction, const Accumulator& accumulator) {
    const DType dtype = reduction->inputs[0]->dtype;
    llvm::Type* type = accumulator.type;
    Value* value = builder_.CreateLoad(type, accumulator.value);
    switch (reduction->op) {
      case Op::Sum:
        return dtype == float32 ? builder_.CreateFPTrunc(value, builder_.getFloatTy()) : value;
      case Op::Argmax:
      case Op::Argmin: return builder_.CreateLoad(builder_.getInt64Ty(), accumulator.index);
      default:
        if (!is_floating(dtype)) return value;
        return builder_.CreateSelect(builder_.CreateLoad(builder_.getInt1Ty(), accumulator.flag),
                                     llvm::ConstantFP::getNaN(type), value);
    }
  }

  /// The state slots of reduction `r`: its value (float64 bits for floats, sign-extended
  /// integers, 0 or 1 for bools) and whether a NaN was seen.
  Value* state_slot(size_t r, int slot) {
    return builder_.CreateConstInBoundsGEP1_64(builder_.getInt64Ty(), state_, 2 * r + slot);
  }

  /// A reduction of a whole tensor split over threads: each reduces its chunk into state slots
  /// (the partial phase), the runtime combines the slots, and the finish phase reads the results.
  void emit_split_reduction(const std::vector<const Node*>& reductions,
                            const plan::ReductionLoops& loops) {
    emit_partial_phase(reductions, loops);
    emit_finish_phase(reductions, loops);
  }

  /// Each thread's chunk reduced into its state slots; the first loop's outputs stored on the way.
  void emit_partial_phase(const std::vector<const Node*>& reductions,
                          const plan::ReductionLoops& loops) {
    begin_phase(reductions.front(), Phase::Range::ReducedElements, 0, Phase::Kind::Partial);
    for (const Node* reduction : reductions) {
      phases_.back().reductions.emplace_back(reduction->op, reduction->inputs[0]->dtype);
    }
    std::vector<Accumulator> accumulators;
    for (const Node* reduction : reductions) accumulators.push_back(start_accumulator(reduction));
    emit_loop(
        begin_, end_,
        [&](Value* r) {
          memo_.clear();
          Index index{&loops.input_shape, {}, r};
          for (size_t j = 0; j < reductions.size(); ++j) {
            update_accumulator(reductions[j], accumulators[j],
                               input_value(*reductions[j], 0, index), {});
          }
          for (const Node* output : loops.in_first_loop)
            store(output, emit_value(output, index), r);
          memo_.clear();
        },
        /*interleave=*/true);
    for (size_t j = 0; j < reductions.size(); ++j) {
      store_state(j, reductions[j]->inputs[0]->dtype, accumulators[j]);
    }
    end_phase();
  }

  /// Reduction j's accumulator written to its state slots (state_slot).
  void store_state(size_t j, DType dtype, const Accumulator& accumulator) {
    llvm::Type* i64 = builder_.getInt64Ty();
    Value* value = builder_.CreateLoad(accumulator.type, accumulator.value);
    if (is_floating(dtype)) {
      if (!value->getType()->isDoubleTy())
        value = builder_.CreateFPExt(value, builder_.getDoubleTy());
      value = builder_.CreateBitCast(value, i64);
    } else if (dtype == bool_) {
      value = builder_.CreateZExt(value, i64);
    } else {
      value = builder_.CreateSExtOrTrunc(value, i64);
    }
    builder_.CreateStore(value, state_slot(j, 0));
    Value* seen_nan = builder_.getFalse();
    if (accumulator.flag) seen_nan = builder_.CreateLoad(builder_.getInt1Ty(), accumulator.flag);
    builder_.CreateStore(builder_.CreateZExt(seen_nan, i64), state_slot(j, 1));
  }

  /// The result of reduction j (`reduction`), read from its combined state slots.
  Value* load_state(size_t j, const Node& reduction) {
    llvm::Type* i64 = builder_.getInt64Ty();
    const DType dtype = reduction.inputs[0]->dtype;
    Value* bits = builder_.CreateLoad(i64, state_slot(j, 0));
    if (!is_floating(dtype)) return builder_.CreateTrunc(bits, value_type(context_, dtype));
    Value* value = builder_.CreateBitCast(bits, builder_.getDoubleTy());
    if (dtype == float32) value = builder_.CreateFPTrunc(value, builder_.getFloatTy());
    if (reduction.op == Op::Sum) return value;
    Value* seen_nan =
        builder_.CreateICmpNE(builder_.CreateLoad(i64, state_slot(j, 1)), constant(0));
    return builder_.CreateSelect(seen_nan, llvm::ConstantFP::getNaN(value->getType()), value);
  }

  /// The results, from the combined state: the first thread stores the outputs at the kept
  /// index, and each thread runs the final loop's outputs over its chunk.
  void emit_finish_phase(const std::vector<const Node*>& reductions,
                         const plan::ReductionLoops& loops) {
    const std::vector<const Node*>& in_final_loop = loops.in_final_loop;
    begin_phase(reductions.front(),
                in_final_loop.empty() ? Phase::Range::One : Phase::Range::ReducedElements, 0,
                Phase::Kind::Finish);
    for (size_t j = 0; j < reductions.size(); ++j) {
      reduction_values_[reductions[j]] = load_state(j, *reductions[j]);
    }
    llvm::BasicBlock* results = llvm::BasicBlock::Create(context_, "results", function_);
    llvm::BasicBlock* rest = llvm::BasicBlock::Create(context_, "rest", function_);
    builder_.CreateCondBr(builder_.CreateICmpEQ(begin_, constant(0)), results, rest);
    builder_.SetInsertPoint(results);
    memo_.clear();
    for (const Node* output : loops.at_kept) {
      Index index{&output->shape, {}, constant(0)};
      store(output, emit_value(output, index), constant(0));
    }
    memo_.clear();
    builder_.CreateBr(rest);
    builder_.SetInsertPoint(rest);
    if (!in_final_loop.empty()) {
      emit_loop(begin_, end_, [&](Value* r) {
        memo_.clear();
        Index index{&loops.input_shape, {}, r};
        for (const Node* output : in_final_loop) store(output, emit_value(output, index), r);
        memo_.clear();
      });
    }
    reduction_values_.clear();
    end_phase();
  }

  /// A final-loop output that reads a reduction's input (softmax's e / sum(e) reads e) gets
  /// that input's value stored into it by the reduction's loop, and the final loop reads it
  /// back instead of computing it again.
  struct Stash {
    const Node* output;
    const Node* input;
  };

  /// The stashes each stage's loop writes.
  std::vector<std::vector<Stash>> stashes_by_stage(const plan::ReductionLoops& loops) const {
    const std::vector<std::vector<const Node*>>& stages = loops.stages;
    std::vector<std::vector<Stash>> stashed(stages.size());
    for (const Node* output : loops.in_final_loop) {
      bool found = false;
      // The last stage first: its input is the nearest to the output (softmax's e, not the x
      // that max reads), so the final loop recomputes the least.
      for (size_t s = stages.size(); s-- > 0 && !found;) {
        for (const Node* reduction : stages[s]) {
          const Node* input = reduction->inputs[0].get();
          if (layout_.position.contains(input) && input->dtype == output->dtype &&
              reads(output, input)) {
            stashed[s].push_back({output, input});
            found = true;
            break;
          }
        }
      }
    }
    return stashed;
  }

  /// For each kept position: a loop nest over the reduced elements per stage, the kept-shaped
  /// outputs, then the final nest (kernel_layout.h).
  void emit_reduction_phase(const plan::ReductionLoops& loops) {
    const std::vector<std::vector<const Node*>>& stages = loops.stages;
    const bool has_index = std::any_of(stages.front().begin(), stages.front().end(),
                                       [](const Node* r) { return is_index_reduction(*r); });
    // plan::kernel_key holds this choice for kernels of runtime sizes.
    if (plan::cpu_splits_across_threads(*stages.front().front()) && !has_index) {
      if (stages.size() > 1) {
        throw plan::UnsupportedKernel("reductions to one value that read each other's results");
      }
      emit_split_reduction(stages.front(), loops);
      return;
    }

    const std::vector<std::vector<Stash>> stashed = stashes_by_stage(loops);
    const int nests = static_cast<int>(stages.size()) + (loops.in_final_loop.empty() ? 0 : 1);
    begin_phase(stages.front().front(), Phase::Range::Elements, nests);
    if (reduces_leading_axes(loops)) {
      emit_column_tiles(loops);
      end_phase();
      return;
    }
    emit_loop(begin_, end_, [&](Value* k) {
      const std::vector<Value*> fixed = kept_dimensions(loops, k);
      for (size_t s = 0; s < stages.size(); ++s) emit_stage_nest(loops, s, stashed[s], fixed);
      store_kept_outputs(loops, k);
      if (!loops.in_final_loop.empty()) emit_final_nest(loops, stashed, fixed);
      reduction_values_.clear();
    });
    end_phase();
  }

  /// The kept-shaped outputs at kept position k, once the reductions' results there are known.
  void store_kept_outputs(const plan::ReductionLoops& loops, Value* k) {
    for (const Node* output : loops.at_kept) {
      Index index{&output->shape, {}, k};
      store(output, emit_value(output, index), k);
    }
    memo_.clear();
  }

  /// Whether the loops reduce the leading axes of their input (a column sum: bias gradients,
  /// means over a batch) in one stage of sums, maxima or minima that writes only kept-shaped
  /// outputs. Consecutive kept positions are then consecutive elements of every reduced row,
  /// which emit_column_tiles reads a run at a time instead of one column after another.
  bool reduces_leading_axes(const plan::ReductionLoops& loops) const {
    if (loops.stages.size() != 1 || !loops.in_first_loop.empty() || !loops.in_final_loop.empty() ||
        loops.axes.size() >= loops.input_shape.size()) {
      return false;
    }
    for (size_t a = 0; a < loops.axes.size(); ++a) {
      if (loops.axes[a] != static_cast<int64_t>(a)) return false;
    }
    return std::none_of(loops.stages.front().begin(), loops.stages.front().end(),
                        [](const Node* r) { return is_index_reduction(*r); });
  }

  /// The phase's kept positions in tiles of up to kColumnTile: per tile, an array of
  /// accumulators per reduction, a loop over the reduced rows whose inner loop adds a contiguous
  /// run of the row into them (vectorized), then the tile's outputs.
  void emit_column_tiles(const plan::ReductionLoops& loops) {
    const std::vector<const Node*>& reductions = loops.stages.front();
    Extent kept_extent, reduced_extent;
    for (size_t d = 0; d < loops.input_shape.size(); ++d) {
      Extent& part = d < loops.axes.size() ? reduced_extent : kept_extent;
      part = product(part, extent(loops.input_shape[d]));
    }
    Value* kept = extent_value(kept_extent);
    Value* reduced = extent_value(reduced_extent);

    struct TileArrays {
      AccumulatorStart start;
      llvm::AllocaInst* values;
      llvm::AllocaInst* flags;  // null without a NaN flag
    };
    std::vector<TileArrays> arrays;
    {
      llvm::IRBuilder<> at_entry(entry_, entry_->begin());
      for (const Node* reduction : reductions) {
        const AccumulatorStart start = accumulator_start(reduction);
        llvm::AllocaInst* flags =
            start.flag ? at_entry.CreateAlloca(builder_.getInt1Ty(), constant(kColumnTile))
                       : nullptr;
        arrays.push_back({start, at_entry.CreateAlloca(start.type, constant(kColumnTile)), flags});
      }
    }
    const auto slot = [&](const TileArrays& tile, Value* j) {
      Accumulator accumulator;
      accumulator.type = tile.start.type;
      accumulator.value = builder_.CreateInBoundsGEP(tile.start.type, tile.values, j);
      if (tile.flags != nullptr) {
        accumulator.flag = builder_.CreateInBoundsGEP(builder_.getInt1Ty(), tile.flags, j);
      }
      return accumulator;
    };

    Value* tiles = builder_.CreateUDiv(
        builder_.CreateAdd(builder_.CreateSub(end_, begin_), constant(kColumnTile - 1)),
        constant(kColumnTile));
    emit_loop(constant(0), tiles, [&](Value* t) {
      Value* first = builder_.CreateAdd(begin_, builder_.CreateMul(t, constant(kColumnTile)));
      Value* left = builder_.CreateSub(end_, first);
      Value* width = builder_.CreateSelect(builder_.CreateICmpSLT(left, constant(kColumnTile)),
                                           left, constant(kColumnTile));
      emit_loop(constant(0), width, [&](Value* j) {
        for (const TileArrays& tile : arrays) {
          const Accumulator accumulator = slot(tile, j);
          builder_.CreateStore(tile.start.identity, accumulator.value);
          if (accumulator.flag) builder_.CreateStore(builder_.getFalse(), accumulator.flag);
        }
      });
      emit_loop(constant(0), reduced, [&](Value* r) {
        Value* row_start = builder_.CreateAdd(builder_.CreateMul(r, kept), first);
        emit_loop(constant(0), width, [&](Value* j) {
          memo_.clear();
          Index index{&loops.input_shape, {}, builder_.CreateAdd(row_start, j)};
          for (size_t i = 0; i < reductions.size(); ++i) {
            update_accumulator(reductions[i], slot(arrays[i], j),
                               input_value(*reductions[i], 0, index), {});
          }
          memo_.clear();
        });
      });
      emit_loop(constant(0), width, [&](Value* j) {
        for (size_t i = 0; i < reductions.size(); ++i) {
          reduction_values_[reductions[i]] = finish_accumulator(reductions[i], slot(arrays[i], j));
        }
        store_kept_outputs(loops, builder_.CreateAdd(first, j));
        reduction_values_.clear();
      });
    });
  }

  /// The index of the input at kept position k: one value per input dimension, the kept
  /// dimensions' indices and nullptr for the reduced ones (which emit_nest loops over).
  std::vector<Value*> kept_dimensions(const plan::ReductionLoops& loops, Value* k) {
    Index kept_index{&loops.kept_shape, {}, k};
    const std::vector<Value*> kept_dims = dims_of(kept_index);
    std::vector<Value*> fixed(loops.input_shape.size(), nullptr);
    for (size_t d = 0, next = 0; d < loops.input_shape.size(); ++d) {
      if (std::find(loops.axes.begin(), loops.axes.end(), int64_t(d)) == loops.axes.end()) {
        fixed[d] = kept_dims[next++];
      }
    }
    return fixed;
  }

  /// Stage s's nest over the reduced elements: its reductions accumulate, the first stage stores
  /// the first loop's outputs, and the stage's stashes are written; the results are then known.
  void emit_stage_nest(const plan::ReductionLoops& loops, size_t s,
                       const std::vector<Stash>& stashes, const std::vector<Value*>& fixed) {
    const std::vector<const Node*>& reductions = loops.stages[s];
    std::vector<Accumulator> accumulators;
    for (const Node* reduction : reductions) accumulators.push_back(start_accumulator(reduction));
    emit_nest(
        loops.input_shape, loops.axes, fixed,
        [&](const std::vector<Value*>& dims) {
          memo_.clear();
          Index index{&loops.input_shape, dims, nullptr};
          // A stash stores a reduction's input: the value the reduction accumulates.
          std::unordered_map<const Node*, Value*> inputs;
          for (size_t r = 0; r < reductions.size(); ++r) {
            Value* x = input_value(*reductions[r], 0, index);
            inputs.emplace(reductions[r]->inputs[0].get(), x);
            update_accumulator(reductions[r], accumulators[r], x, dims);
          }
          if (s == 0) {
            for (const Node* output : loops.in_first_loop) {
              store(output, emit_value(output, index), linear_of(index));
            }
          }
          for (const Stash& stash : stashes) {
            store(stash.output, inputs.at(stash.input), linear_of(index));
          }
          memo_.clear();
        },
        /*accumulating=*/true);
    for (size_t r = 0; r < reductions.size(); ++r) {
      reduction_values_[reductions[r]] = finish_accumulator(reductions[r], accumulators[r]);
    }
  }

  /// The final nest: the final loop's outputs, reading each stashed value back instead of
  /// computing it again.
  void emit_final_nest(const plan::ReductionLoops& loops,
                       const std::vector<std::vector<Stash>>& stashed,
                       const std::vector<Value*>& fixed) {
    emit_nest(
        loops.input_shape, loops.axes, fixed,
        [&](const std::vector<Value*>& dims) {
          memo_.clear();
          Index index{&loops.input_shape, dims, nullptr};
          for (const std::vector<Stash>& stage_stashes : stashed) {
            for (const Stash& stash : stage_stashes) {
              llvm::Type* type = storage_type(context_, stash.output->dtype);
              Value* address =
                  builder_.CreateInBoundsGEP(type, output_pointer(stash.output), linear_of(index));
              Value* stored = builder_.CreateAlignedLoad(
                  type, address, llvm::Align(dtype_size(stash.output->dtype)));
              remember(stash.input, index, from_storage(builder_, stash.output->dtype, stored));
            }
          }
          for (const Node* output : loops.in_final_loop) {
            store(output, emit_value(output, index), linear_of(index));
          }
          memo_.clear();
        },
        /*accumulating=*/false);
  }

  const plan::Kernel& kernel_;
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

}  // namespace

LoweredKernel lower_kernel(const plan::Kernel& kernel, plan::Sizes sizes,
                           llvm::LLVMContext& context, const std::string& name) {
  LoweredKernel lowered;
  lowered.module = std::make_unique<llvm::Module>(name, context);
  lowered.phases = KernelEmitter(kernel, sizes, *lowered.module, name).emit();
  return lowered;
}

}  // namespace lz::codegen
