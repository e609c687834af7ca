#include "codegen/cuda/reduction_source.h"

#include "codegen/cuda/element_source.h"

namespace lz::codegen::cuda {
namespace {

using ir::Op;

/// The argmax (argmin) index before any element was taken: larger than every real index, so it
/// loses every tie, and read as 0 when nothing was taken (every element equals the identity).
constexpr const char* kNoIndex = "9223372036854775807LL";

const char* accumulator_type(const ReductionState& r) {
  if (r.node->op == Op::Sum && is_floating(r.dtype)) return "double";  // as the interpreter
  return value_type(r.dtype);
}

/// The type a value travels in through shuffles and shared memory.
const char* shuffle_type(const ReductionState& r) {
  return r.dtype == bool_ && r.node->op != Op::Sum ? "int" : accumulator_type(r);
}

bool tracks_nan(const ReductionState& r) { return r.node->op != Op::Sum && is_floating(r.dtype); }

std::string state_name(const char* part, const ReductionState& r, const char* prefix = "") {
  return std::string(prefix) + part + std::to_string(r.number);
}

/// max and argmax look for the largest element, min and argmin for the smallest.
bool seeks_maximum(const ReductionState& r) {
  return r.node->op == Op::Max || r.node->op == Op::Argmax;
}

std::string identity(const ReductionState& r) {
  if (r.node->op == Op::Sum) return is_floating(r.dtype) ? "0.0" : "0";
  return extremum_identity(r.dtype, seeks_maximum(r));
}

void declare_state_reset(SourceWriter& out, const ReductionState& r) {
  out.line(state_name("acc", r) + " = " + identity(r) + ";");
  if (tracks_nan(r)) out.line(state_name("nan", r) + " = false;");
  if (tracks_index(r)) out.line(state_name("idx", r) + " = " + kNoIndex + ";");
}

/// Combines the states of the 32 lanes of a warp into lane 0.
void combine_warp(SourceWriter& out, const std::vector<ReductionState>& reductions) {
  out.open("for (int offset = 16; offset > 0; offset >>= 1)");
  for (const ReductionState& r : reductions) {
    const std::string shuffle = "__shfl_down_sync(0xffffffffu, ";
    out.line("const " + std::string(accumulator_type(r)) + " " + state_name("acc", r, "other_") +
             " = (" + accumulator_type(r) + ")" + shuffle + "(" + shuffle_type(r) + ")" +
             state_name("acc", r) + ", offset);");
    if (tracks_nan(r)) {
      out.line("const bool " + state_name("nan", r, "other_") + " = " + shuffle + "(int)" +
               state_name("nan", r) + ", offset) != 0;");
    }
    if (tracks_index(r)) {
      out.line("const lz_i64 " + state_name("idx", r, "other_") + " = " + shuffle +
               state_name("idx", r) + ", offset);");
    }
    combine_state(out, r, "other_");
  }
  out.close();
}

}  // namespace

bool tracks_index(const ReductionState& r) {
  return r.node->op == Op::Argmax || r.node->op == Op::Argmin;
}

void declare_state(SourceWriter& out, const ReductionState& r) {
  out.line(std::string(accumulator_type(r)) + " " + state_name("acc", r) + " = " + identity(r) +
           ";");
  if (tracks_nan(r)) out.line("bool " + state_name("nan", r) + " = false;");
  if (tracks_index(r)) out.line("lz_i64 " + state_name("idx", r) + " = " + kNoIndex + ";");
}

void update_state(SourceWriter& out, const ReductionState& r, const std::string& x,
                  const std::string& position) {
  const std::string acc = state_name("acc", r);
  const std::string nan = state_name("nan", r);
  switch (r.node->op) {
    case Op::Sum:
      out.line(acc + " = " +
               (is_floating(r.dtype) ? acc + " + (double)" + x
                                     : reference_call("wrapping_add", r.dtype, acc + ", " + x)) +
               ";");
      return;
    case Op::Argmax:
    case Op::Argmin: {
      const std::string idx = state_name("idx", r);
      const std::string better = seeks_maximum(r) ? " > " : " < ";
      if (tracks_nan(r)) {
        out.open("if (!" + nan + ")");
        out.line("if (" + x + " != " + x + ") { " + nan + " = true; " + idx + " = " + position +
                 "; } else if (" + x + better + acc + ") { " + acc + " = " + x + "; " + idx +
                 " = " + position + "; }");
        out.close();
      } else {
        out.line("if (" + x + better + acc + ") { " + acc + " = " + x + "; " + idx + " = " +
                 position + "; }");
      }
      return;
    }
    default: break;
  }
  const bool maximum = r.node->op == Op::Max;
  if (r.dtype == bool_) {
    out.line(acc + " = " + acc + (maximum ? " || " : " && ") + x + ";");
  } else if (tracks_nan(r)) {
    out.line("if (" + x + " != " + x + ") " + nan + " = true; else if (" + x +
             (maximum ? " > " : " < ") + acc + ") " + acc + " = " + x + ";");
  } else {
    out.line("if (" + x + (maximum ? " > " : " < ") + acc + ") " + acc + " = " + x + ";");
  }
}

/// Folds the state named with prefix `other` into the running state.
void combine_state(SourceWriter& out, const ReductionState& r, const char* other) {
  const std::string acc = state_name("acc", r);
  const std::string nan = state_name("nan", r);
  const std::string idx = state_name("idx", r);
  const std::string other_acc = state_name("acc", r, other);
  const std::string other_nan = state_name("nan", r, other);
  const std::string other_idx = state_name("idx", r, other);
  switch (r.node->op) {
    case Op::Sum:
      out.line(acc + " = " +
               (is_floating(r.dtype)
                    ? acc + " + " + other_acc
                    : reference_call("wrapping_add", r.dtype, acc + ", " + other_acc)) +
               ";");
      return;
    case Op::Argmax:
    case Op::Argmin: {
      const std::string better = seeks_maximum(r) ? " > " : " < ";
      std::string take = "(" + other_acc + better + acc + " || (" + other_acc + " == " + acc +
                         " && " + other_idx + " < " + idx + "))";
      if (tracks_nan(r)) {
        out.open("if (" + other_nan + " && (!" + nan + " || " + other_idx + " < " + idx + "))");
        out.line(nan + " = true; " + idx + " = " + other_idx + ";");
        out.close();
        take = "!" + nan + " && !" + other_nan + " && " + take;
      }
      out.line("if (" + take + ") { " + acc + " = " + other_acc + "; " + idx + " = " + other_idx +
               "; }");
      return;
    }
    default: break;
  }
  const bool maximum = r.node->op == Op::Max;
  if (r.dtype == bool_) {
    out.line(acc + " = " + acc + (maximum ? " || " : " && ") + other_acc + ";");
    return;
  }
  if (tracks_nan(r)) out.line(nan + " = " + nan + " || " + other_nan + ";");
  out.line("if (" + other_acc + (maximum ? " > " : " < ") + acc + ") " + acc + " = " + other_acc +
           ";");
}

/// The reduction's result from its final state.
std::string result_expression(const ReductionState& r) {
  const std::string acc = state_name("acc", r);
  switch (r.node->op) {
    case Op::Sum: return r.dtype == float32 ? "(float)" + acc : acc;
    case Op::Argmax:
    case Op::Argmin: {
      const std::string idx = state_name("idx", r);
      return "(" + idx + " == " + kNoIndex + " ? 0 : " + idx + ")";
    }
    default:
      if (!tracks_nan(r)) return acc;
      return state_name("nan", r) + " ? " + (r.dtype == float32 ? "lz_nan_f32()" : "lz_nan_f64()") +
             " : " + acc;
  }
}

void declare_shared_state(SourceWriter& out, const std::vector<ReductionState>& reductions) {
  for (const ReductionState& r : reductions) {
    out.line("__shared__ " + std::string(shuffle_type(r)) + " " + state_name("shared_acc", r) +
             "[32];");
    if (tracks_nan(r)) out.line("__shared__ int " + state_name("shared_nan", r) + "[32];");
    if (tracks_index(r)) out.line("__shared__ lz_i64 " + state_name("shared_idx", r) + "[32];");
  }
}

/// Combines the states of every thread of the block; every thread ends with the result.
/// Every thread of the block must reach it.
void combine_block(SourceWriter& out, const std::vector<ReductionState>& reductions) {
  const auto to_shared = [&](const std::string& slot) {
    for (const ReductionState& r : reductions) {
      out.line(state_name("shared_acc", r) + "[" + slot + "] = (" + shuffle_type(r) + ")" +
               state_name("acc", r) + ";");
      if (tracks_nan(r)) {
        out.line(state_name("shared_nan", r) + "[" + slot + "] = " + state_name("nan", r) + ";");
      }
      if (tracks_index(r)) {
        out.line(state_name("shared_idx", r) + "[" + slot + "] = " + state_name("idx", r) + ";");
      }
    }
  };
  const auto from_shared = [&](const std::string& slot) {
    for (const ReductionState& r : reductions) {
      out.line(state_name("acc", r) + " = (" + accumulator_type(r) + ")" +
               state_name("shared_acc", r) + "[" + slot + "];");
      if (tracks_nan(r)) {
        out.line(state_name("nan", r) + " = " + state_name("shared_nan", r) + "[" + slot +
                 "] != 0;");
      }
      if (tracks_index(r)) {
        out.line(state_name("idx", r) + " = " + state_name("shared_idx", r) + "[" + slot + "];");
      }
    }
  };
  combine_warp(out, reductions);
  out.open("if ((threadIdx.x & 31) == 0)");
  to_shared("threadIdx.x >> 5");
  out.close();
  out.line("__syncthreads();");
  out.open("if (threadIdx.x < 32)");
  out.open("if (threadIdx.x < (blockDim.x >> 5))");
  from_shared("threadIdx.x");
  out.close();
  out.open("else");
  for (const ReductionState& r : reductions) declare_state_reset(out, r);
  out.close();
  combine_warp(out, reductions);
  out.open("if (threadIdx.x == 0)");
  to_shared("0");
  out.close();
  out.close();
  out.line("__syncthreads();");
  from_shared("0");
  out.line("__syncthreads();");  // the shared slots are free for the next combination
}

/// Words of the state of reduction r in the workspace, from `base`: value (float64 bits for
/// floats, sign-extended integers, 0 or 1 for bools), NaN seen, argmax index.
void write_state(SourceWriter& out, const ReductionState& r, const std::string& base) {
  const std::string slot = base + " + " + std::to_string(kStateWords * r.number);
  const std::string acc = state_name("acc", r);
  const std::string value = is_floating(r.dtype)
                                ? "(lz_u64)__double_as_longlong((double)" + acc + ")"
                                : "(lz_u64)(lz_i64)" + acc;
  out.line("workspace[" + slot + "] = " + value + ";");
  if (tracks_nan(r)) out.line("workspace[" + slot + " + 1] = " + state_name("nan", r) + ";");
  if (tracks_index(r)) {
    out.line("workspace[" + slot + " + 2] = (lz_u64)" + state_name("idx", r) + ";");
  }
}

/// Declares the state of reduction r read from the workspace at `base`, with `prefix`.
void read_state(SourceWriter& out, const ReductionState& r, const std::string& base,
                const char* prefix) {
  const std::string slot = base + " + " + std::to_string(kStateWords * r.number);
  const std::string word = "workspace[" + slot + "]";
  const std::string type = accumulator_type(r);
  std::string value;
  if (is_floating(r.dtype)) {
    value = "(" + type + ")__longlong_as_double((lz_i64)" + word + ")";
  } else if (r.dtype == bool_) {
    value = "(" + word + " != 0)";
  } else {
    value = "(" + type + ")(lz_i64)" + word;
  }
  out.line("const " + type + " " + state_name("acc", r, prefix) + " = " + value + ";");
  if (tracks_nan(r)) {
    out.line("const bool " + state_name("nan", r, prefix) + " = workspace[" + slot + " + 1] != 0;");
  }
  if (tracks_index(r)) {
    out.line("const lz_i64 " + state_name("idx", r, prefix) + " = (lz_i64)workspace[" + slot +
             " + 2];");
  }
}

}  // namespace lz::codegen::cuda
