// The timing rows as a picture: one horizontal bar per variant, grouped by workload and size, on
// a logarithmic time axis, for people who would rather look than read (lazuli-bench --plot).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "report.h"

namespace lazuli_bench {

/// Writes `rows` that have a median as an SVG document titled `title`.
void write_svg_plot(const std::vector<Row>& rows, const std::string& title, std::ostream& out);

}  // namespace lazuli_bench
