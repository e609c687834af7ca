// A step of the "fuse" pass after collectives move: each matmul takes the kernel that computes
// from its product row by row as its epilogue, run on the product's rows while they are in cache.
#pragma once

#include "plan/fusion_plan.h"

namespace lz::passes {

/// Gives each float matmul kernel (plan::is_matmul_kernel) its epilogue (Kernel::epilogue): the
/// first later kernel that reads the product and computes from it row by row, so that rows of
/// its outputs need only the same rows of the product. That is a kernel whose nodes that depend
/// on the product are elementwise ops (bias, activation, casts, a residual add) or reductions
/// over the product's last axis (a softmax), and whose outputs have the product's shape or one
/// value per row. Everything else it reads must be computed before the matmul runs, for it runs
/// at the matmul's place. The runtime then computes the product in blocks of rows, each going
/// through the epilogue at once: the product reaches memory only when another kernel or the user
/// reads it too.
void attach_matmul_epilogues(plan::FusionPlan& plan);

}  // namespace lz::passes
