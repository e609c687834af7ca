// Failures of launched work that no blocking point has raised yet, for waitall to raise.
#pragma once

#include <exception>

namespace lz::frontend {

/// Notes the failure of a result that a launch computed (not one inherited from an input).
void add_unreported_failure(const std::exception_ptr& error);

/// Failures of launched work that no blocking point has raised yet: a blocking point that
/// raises one forgets it; waitall raises the earliest and forgets them all (null when none).
void forget_failure(const std::exception_ptr& error);
std::exception_ptr take_earliest_failure();

}  // namespace lz::frontend
