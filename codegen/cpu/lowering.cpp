#include "codegen/cpu/lowering.h"

#include <functional>
#include <string>
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
#include "codegen/cpu/kernel_emitter.h"
#include "codegen/cpu/random_numbers.h"
#include "lazuli/error.h"
#include "plan/kernel_layout.h"
#include "plan/kernel_signature.h"
#include "plan/unsupported_kernel.h"

namespace lz::codegen {
namespace detail {
namespace {

/// Vectors per iteration of a reduction loop: independent accumulators to hide part of a vector
/// add's latency, yet few enough that a row of 16 float32 still runs as vector code (at 4, the
/// mlp's (131072,16) softmax took 14 ms instead of 1.8).
constexpr int kReductionInterleave = 2;
// Streamed outputs are written from a position that is a multiple of this on (elements), where
// each output's address is a multiple of 64 bytes, whatever its dtype.
constexpr int64_t kStreamingGranule = 64;

}  // namespace

std::vector<Phase> KernelEmitter::emit() {
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

// ---------------------------------------------------------------------------------------
// Phase functions

/// Starts `<name>_phase<i>`: a wrapper with the generic signature that calls a body taking
/// each buffer as its own noalias pointer (so loops vectorize without overlap checks).
void KernelEmitter::begin_phase(const Node* range_node, Phase::Range range, int reduced_loops,
                                Phase::Kind kind) {
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

void KernelEmitter::end_phase() { builder_.CreateRetVoid(); }

Value* KernelEmitter::output_pointer(const Node* output) {
  for (size_t i = 0; i < kernel_.outputs.size(); ++i) {
    if (kernel_.outputs[i].get() == output) {
      // An output written over an input is stored through that input's pointer: one noalias
      // pointer that the loop reads and writes at the same positions.
      const bool over_input = i < written_over_.size() && written_over_[i] >= 0;
      return function_->getArg(over_input ? written_over_[i] : kernel_.inputs.size() + i);
    }
  }
  throw Error("internal: node is not an output of the kernel");
}

void KernelEmitter::store(const Node* output, Value* value, Value* position) {
  llvm::Type* type = storage_type(context_, output->dtype);
  Value* address = builder_.CreateInBoundsGEP(type, output_pointer(output), position);
  builder_.CreateAlignedStore(to_storage(builder_, output->dtype, value), address,
                              llvm::Align(dtype_size(output->dtype)));
}

// ---------------------------------------------------------------------------------------
// Loops

Value* KernelEmitter::constant(int64_t value) {
  return builder_.getInt64(static_cast<uint64_t>(value));
}

/// for (i = begin; i < end; ++i) body(i), leaving the builder after the loop. `interleave`
/// asks the vectorizer for several vectors per iteration (independent accumulators).
void KernelEmitter::emit_loop(Value* begin, Value* end, const std::function<void(Value*)>& body,
                              bool interleave) {
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
void KernelEmitter::emit_nest(const Shape& shape, const std::vector<int64_t>& axes,
                              std::vector<Value*> fixed,
                              const std::function<void(const std::vector<Value*>&)>& body,
                              bool accumulating, size_t depth) {
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

llvm::AllocaInst* KernelEmitter::local(llvm::Type* type, Value* initial) {
  llvm::IRBuilder<> at_entry(entry_, entry_->begin());
  llvm::AllocaInst* slot = at_entry.CreateAlloca(type);
  builder_.CreateStore(initial, slot);
  return slot;
}

// ---------------------------------------------------------------------------------------
// Indices

// Positions are non-negative and within int64_t (value_emitter.h).
Value* KernelEmitter::index_constant(int64_t value) { return constant(value); }

Value* KernelEmitter::index_scalar(const Node* node, int slot) { return scalar_slot(node, slot); }

/// Loaded once per phase, at its entry, so every loop of the phase may use it.
Value* KernelEmitter::runtime_extent(int slot) {
  Value*& loaded = runtime_extents_[slot];
  if (loaded == nullptr) {
    llvm::IRBuilder<> at_entry(entry_, entry_->begin());
    loaded = at_entry.CreateLoad(builder_.getInt64Ty(), at_entry.CreateConstInBoundsGEP1_64(
                                                            builder_.getInt64Ty(), scalars_, slot));
  }
  return loaded;
}

Value* KernelEmitter::index_add(Value* a, Value* b) {
  return builder_.CreateAdd(a, b, "", false, true);
}

Value* KernelEmitter::index_scale(Value* x, int64_t factor) {
  return builder_.CreateMul(x, constant(factor), "", factor >= 0, true);
}

Value* KernelEmitter::index_multiply(Value* a, Value* b) {
  return builder_.CreateMul(a, b, "", true, true);
}

Value* KernelEmitter::index_divide(Value* x, int64_t divisor) {
  return index_divide(x, constant(divisor));
}

Value* KernelEmitter::index_remainder(Value* x, int64_t divisor) {
  return index_remainder(x, constant(divisor));
}

Value* KernelEmitter::index_divide(Value* x, Value* divisor) {
  return builder_.CreateUDiv(x, divisor);
}

Value* KernelEmitter::index_remainder(Value* x, Value* divisor) {
  return builder_.CreateURem(x, divisor);
}

Value* KernelEmitter::name_index(Value* x) { return x; }

// ---------------------------------------------------------------------------------------
// Values

/// Whether computing `consumer` reads `producer`, through nodes of the kernel other than
/// reductions (whose results are read, not their inputs).
bool KernelEmitter::reads(const Node* consumer, const Node* producer) const {
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

Value* KernelEmitter::scalar_slot(const Node* node, int slot) {
  Value* address = builder_.CreateConstInBoundsGEP1_64(builder_.getInt64Ty(), scalars_,
                                                       layout_.scalar_slot.at(node) + slot);
  return builder_.CreateLoad(builder_.getInt64Ty(), address);
}

Value* KernelEmitter::scalar_as_double(const Node* node, int slot) {
  return builder_.CreateBitCast(scalar_slot(node, slot), builder_.getDoubleTy());
}

Value* KernelEmitter::cast(const Node* node, Value* x) {
  return emit_cast(builder_, node->inputs[0]->dtype, node->dtype, x);
}

Value* KernelEmitter::unary(const Node* node, Value* x) {
  return emit_unary(builder_, module_, node->op, node->dtype, x);
}

Value* KernelEmitter::binary(const Node* node, Value* x, Value* y) {
  return emit_binary(builder_, module_, node->op, node->inputs[0]->dtype, x, y);
}

Value* KernelEmitter::select(const Node*, Value* condition, Value* if_true, Value* if_false) {
  return builder_.CreateSelect(condition, if_true, if_false);
}

[[noreturn]] void KernelEmitter::refuse(const Node* node) {
  throw plan::UnsupportedKernel(std::string(ir::op_name(node->op)) + " inside a fused kernel");
}

Value* KernelEmitter::load_input(const Node* node, Index& index) {
  llvm::Type* type = storage_type(context_, node->dtype);
  Value* position = node->size() == 1 ? constant(0) : linear_of(index);
  Value* address = builder_.CreateInBoundsGEP(type, buffer_pointers_.at(node), position);
  Value* stored = builder_.CreateAlignedLoad(type, address, llvm::Align(dtype_size(node->dtype)));
  return from_storage(builder_, node->dtype, stored);
}

Value* KernelEmitter::leaf(const Node* node, Index& index) {
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
        Value* offset = builder_.CreateFMul(builder_.CreateSIToFP(position, builder_.getDoubleTy()),
                                            scalar_as_double(node, 1));
        Value* value = builder_.CreateFAdd(scalar_as_double(node, 0), offset);
        return node->dtype == float32 ? builder_.CreateFPTrunc(value, type) : value;
      }
      Value* value = builder_.CreateAdd(scalar_slot(node, 0),
                                        builder_.CreateMul(position, scalar_slot(node, 1)));
      return node->dtype == int64 ? value : builder_.CreateTrunc(value, type);
    }
    case Op::RandomNormal: {  // a floating dtype; inline, so the loop vectorizes
      Value* value = emit_normal_element(builder_, module_, scalar_slot(node, 0), linear_of(index),
                                         scalar_as_double(node, 1), scalar_as_double(node, 2));
      return node->dtype == float64 ? value : builder_.CreateFPTrunc(value, type);
    }
    case Op::RandomUniform: {
      const std::string name = std::string("lz_random_uniform_") + dtype_short_name(node->dtype);
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
Value* KernelEmitter::concatenate(const Node* node, Index& index) {
  const int64_t axis = node->axes()[0];
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

std::pair<Value*, Value*> KernelEmitter::gather_position(const Node* node, Value* raw,
                                                         Value* extent) {
  Value* index =
      node->inputs[1]->dtype == int64 ? raw : builder_.CreateSExt(raw, builder_.getInt64Ty());
  Value* from_end = builder_.CreateAdd(index, extent);
  index = builder_.CreateSelect(builder_.CreateICmpSLT(index, constant(0)), from_end, index);
  Value* inside = builder_.CreateICmpULT(index, extent);
  return {builder_.CreateSelect(inside, index, constant(0)), inside};
}

Value* KernelEmitter::gather_fill(const Node* node) {
  llvm::Type* type = value_type(context_, node->dtype);
  if (is_floating(node->dtype)) return llvm::ConstantFP::getNaN(type);
  if (node->dtype == bool_) return builder_.getTrue();
  return llvm::ConstantInt::get(type, llvm::APInt::getSignedMinValue(type->getIntegerBitWidth()));
}

// ---------------------------------------------------------------------------------------
// Elementwise phases

/// Whether this kernel's outputs are streamed: the plan's choice for a flat kernel (whose key
/// holds it), on x86, whose non-temporal stores and fence the JIT emits.
bool KernelEmitter::streams_outputs() const {
  return layout_.flat && plan::cpu_streams_outputs(kernel_) &&
         llvm::Triple(llvm::sys::getProcessTriple()).isX86();
}

/// The flat loop of a kernel whose outputs are streamed: the positions before the first
/// multiple of kStreamingGranule, then the rest. Every output's buffer starts at a multiple of
/// 64 bytes (memory/buffer.h), so from there the vectorizer's stores are known to be aligned,
/// which non-temporal vector stores need; the JIT marks them (kStreamingStoresAttribute). The
/// fence then orders them before whatever tells another thread that the phase is done: unlike
/// ordinary stores, x86 does not keep non-temporal ones in order with later stores.
void KernelEmitter::emit_streaming_loops(const std::function<void(Value*)>& body) {
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
void KernelEmitter::emit_elementwise_phase(const plan::ElementwiseLoop& loop) {
  begin_phase(loop.range);
  const Shape& shape = loop.range->shape;
  // Every output's value before any store: an output written over an input
  // (plan::WrittenOver) is stored only after each read of that input at the position.
  std::vector<Value*> values(loop.outputs.size());
  const auto compute_at = [&](Index& index) {
    memo_.clear();
    for (size_t i = 0; i < loop.outputs.size(); ++i) {
      Index at = output_index(loop.outputs[i], index);
      values[i] = emit_value(loop.outputs[i], at);
    }
    for (size_t i = 0; i < loop.outputs.size(); ++i) {
      store(loop.outputs[i], values[i], index.linear);
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

}  // namespace detail

LoweredKernel lower_kernel(const plan::Kernel& kernel, plan::Sizes sizes,
                           const plan::WrittenOver& written_over, llvm::LLVMContext& context,
                           const std::string& name) {
  LoweredKernel lowered;
  lowered.module = std::make_unique<llvm::Module>(name, context);
  lowered.phases = detail::KernelEmitter(kernel, sizes, written_over, *lowered.module, name).emit();
  return lowered;
}

}  // namespace lz::codegen
