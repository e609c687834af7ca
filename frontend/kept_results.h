// The keep policy of a launch: which results an evaluation writes out, and which held ones it
// leaves pending because they are cheap to compute again.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/node.h"
#include "lazuli/tensor.h"

namespace lz::frontend {

/// Which results an evaluation writes out, and how many held ones it leaves pending.
struct KeptResults {
  std::vector<bool> keep;
  std::vector<ir::Node*> left;  // held, left pending
};

/// Whether each node's result must outlive this evaluation: it does when someone outside the
/// graph (a user's Tensor, a pending node not being evaluated now) still holds it. Every other
/// result is an intermediate that lives only inside this evaluation.
///
/// A blocking point on some results (`graph.outputs`, the requested ones; waitall and the node
/// budget request none and keep everything held) writes out only those, plus the held results
/// that are expensive to compute again. A held intermediate stays pending, as if never
/// evaluated, when it and everything it reads that is not written out now is cheap to recompute
/// (is_cheap_to_recompute): a C++ temporary of a one-line expression, or `a * b` in
/// `sum(a * b).item()`, costs no buffer and no store. A later read computes it from the
/// results written out, never a matmul or a reduction again. A node is left pending once: when
/// an evaluation computes it again, it is written out if still held, and what reads it is not
/// left pending, so a loop such as `x = x * 0.9 + 1; sum(x).item();` recomputes at most one
/// step and its graph cannot grow.
KeptResults results_to_keep(const ir::Graph& graph, const ir::Wiring& wiring);

/// Marks the results of `tensors` that are still pending as state that the next step reads (an
/// optimizer's new parameters and moments), as if an evaluation had left them pending once: an
/// evaluation that computes one writes it out if it is held. Left pending at one step (cheap to
/// recompute from the gradients the loop holds) and written at the next, the state would give
/// every other step another graph, and the plan cache would miss.
void keep_when_computed(const std::vector<Tensor>& tensors);

/// Whether every node of `graph` is a pending result to keep or an input, directly or not, of
/// one: then the graph that the kept results alone reach has the same nodes (perhaps in another
/// order, which is as deterministic as the walk's).
bool only_kept_results_need(const ir::Graph& graph, const ir::Wiring& wiring,
                            const std::vector<bool>& keep);

}  // namespace lz::frontend
