#include "plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace lazuli_bench {
namespace {

constexpr double kWidth = 960;
constexpr double kLabelWidth = 170;  // variant names left of the bars
constexpr double kValueWidth = 90;   // the time printed right of the longest bar
constexpr double kBarHeight = 13;
constexpr double kBarGap = 3;
constexpr double kGroupGap = 14;
constexpr double kHeaderHeight = 18;  // a group's "workload size shape" line
constexpr double kTop = 48;           // title and axis labels
constexpr double kBottom = 24;

/// A colour per variant, so that each framework reads the same in every group.
const char* colour_of(const std::string& variant) {
  if (variant == "lazuli fused") return "#1f5fbf";
  if (variant == "lazuli one-liner") return "#5b8fe0";
  if (variant == "lazuli unfused") return "#a9c1e8";
  if (variant == "hand (omp)") return "#404040";
  if (variant == "eigen") return "#3a9a4a";
  if (variant == "numpy") return "#e08a1e";
  if (variant == "jax") return "#c8382c";
  if (variant == "torch") return "#8e5bb5";
  if (variant == "torch.compile") return "#b99ad6";
  if (variant == "drjit") return "#8c6239";
  return "#909090";
}

std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

}  // namespace

void write_svg_plot(const std::vector<Row>& rows, const std::string& title, std::ostream& out) {
  std::vector<const Row*> measured;
  for (const Row& row : rows) {
    if (row.median_ms && *row.median_ms > 0) measured.push_back(&row);
  }
  double low = 1, high = 1;
  if (!measured.empty()) {
    low = high = *measured.front()->median_ms;
    for (const Row* row : measured) {
      low = std::min(low, *row->median_ms);
      high = std::max(high, *row->median_ms);
    }
  }
  // Whole decades, so that the grid lines fall on 0.1, 1, 10 ms.
  const double first_decade = std::floor(std::log10(low));
  const double last_decade = std::max(first_decade + 1, std::ceil(std::log10(high)));
  const double plot_width = kWidth - kLabelWidth - kValueWidth;
  const auto x_of = [&](double milliseconds) {
    return kLabelWidth +
           (std::log10(milliseconds) - first_decade) / (last_decade - first_decade) * plot_width;
  };

  // Groups: consecutive rows of one suite, workload and size.
  double height = kTop;
  for (size_t i = 0; i < measured.size(); ++i) {
    const bool starts_group = i == 0 || measured[i]->workload != measured[i - 1]->workload ||
                              measured[i]->size != measured[i - 1]->size ||
                              measured[i]->suite != measured[i - 1]->suite;
    if (starts_group) height += (i == 0 ? 0 : kGroupGap) + kHeaderHeight;
    height += kBarHeight + kBarGap;
  }
  height += kBottom;

  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kLabelWidth << "\" y=\"18\" font-size=\"14\" font-weight=\"bold\">"
      << escaped(title) << "</text>\n";
  for (double decade = first_decade; decade <= last_decade; ++decade) {
    const double x = x_of(std::pow(10.0, decade));
    out << "<line x1=\"" << x << "\" y1=\"" << kTop - 12 << "\" x2=\"" << x << "\" y2=\""
        << height - kBottom << "\" stroke=\"#dddddd\"/>\n"
        << "<text x=\"" << x << "\" y=\"" << kTop - 16 << "\" text-anchor=\"middle\" fill=\"#666\">"
        << number(std::pow(10.0, decade)) << " ms</text>\n";
  }
  double y = kTop;
  for (size_t i = 0; i < measured.size(); ++i) {
    const Row& row = *measured[i];
    const bool starts_group = i == 0 || row.workload != measured[i - 1]->workload ||
                              row.size != measured[i - 1]->size ||
                              row.suite != measured[i - 1]->suite;
    if (starts_group) {
      y += (i == 0 ? 0 : kGroupGap) + kHeaderHeight;
      out << "<text x=\"4\" y=\"" << y - 5 << "\" font-weight=\"bold\">"
          << escaped(row.workload + " " + row.size + " " + row.shape) << "</text>\n";
    }
    const double end = x_of(*row.median_ms);
    const double start = x_of(std::pow(10.0, first_decade));
    out << "<text x=\"" << kLabelWidth - 6 << "\" y=\"" << y + kBarHeight - 3
        << "\" text-anchor=\"end\">" << escaped(row.variant) << "</text>\n"
        << "<rect x=\"" << start << "\" y=\"" << y << "\" width=\"" << std::max(1.0, end - start)
        << "\" height=\"" << kBarHeight << "\" fill=\"" << colour_of(row.variant) << "\"/>\n"
        << "<text x=\"" << end + 4 << "\" y=\"" << y + kBarHeight - 3 << "\">"
        << number(*row.median_ms) << " ms" << (row.mismatch ? " MISMATCH" : "") << "</text>\n";
    y += kBarHeight + kBarGap;
  }
  out << "</svg>\n";
}

}  // namespace lazuli_bench
