#include "report.h"

#include <cstdio>
#include <ostream>

namespace lazuli_bench {
namespace {

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

std::string format_optional(const char* pattern, const std::optional<double>& value) {
  return value ? format(pattern, *value) : "-";
}

std::string json_string(const std::string& text) {
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      quoted += escaped;
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

std::string json_number(const std::optional<double>& value) {
  return value ? format("%.6g", *value) : "null";
}

// Column widths of the timing table.
constexpr const char* kTimingRow = "%-10s %-6s %-22s %-15s %11s %8s %8s %8s  %s\n";
constexpr const char* kCompileRow = "%-10s %-22s %10s %10s   %-30s %-30s\n";

}  // namespace

std::optional<double> Row::gigabytes_per_second() const {
  if (!median_ms || *median_ms <= 0) return std::nullopt;
  return static_cast<double>(minimal_bytes) / (*median_ms * 1e6);
}

std::optional<double> Row::ratio_to_hand() const {
  if (!median_ms || !hand_ms || *hand_ms <= 0) return std::nullopt;
  return *median_ms / *hand_ms;
}

void Report::section(const std::string& title) {
  out_ << "\n" << title << "\n";
  current_ = Table::None;
}

void Report::note(const std::string& text) { out_ << "  note: " << text << "\n"; }

void Report::start_table(Table table) {
  if (current_ == table) return;
  current_ = table;
  char line[256];
  if (table == Table::Timing) {
    std::snprintf(line, sizeof(line), kTimingRow, "workload", "size", "shape", "variant",
                  "median ms", "GB/s", "x hand", "kernels", "check");
  } else {
    std::snprintf(line, sizeof(line), kCompileRow, "workload", "shape", "first ms", "second ms",
                  "first: compiled/hits/misses/kernels", "second: compiled/hits/misses/kernels");
  }
  out_ << line;
}

void Report::add(Row row) {
  start_table(Table::Timing);
  char line[512];
  std::snprintf(line, sizeof(line), kTimingRow, row.workload.c_str(), row.size.c_str(),
                row.shape.c_str(), row.variant.c_str(),
                format_optional("%.3f", row.median_ms).c_str(),
                format_optional("%.2f", row.gigabytes_per_second()).c_str(),
                format_optional("%.2f", row.ratio_to_hand()).c_str(),
                format_optional("%.0f", row.kernels_per_run).c_str(), row.check.c_str());
  out_ << line << std::flush;
  rows_.push_back(std::move(row));
}

void Report::add(CompileRow row) {
  start_table(Table::Compile);
  auto counters = [](int64_t compiled, int64_t hits, int64_t misses, int64_t kernels) {
    return std::to_string(compiled) + "/" + std::to_string(hits) + "/" + std::to_string(misses) +
           "/" + std::to_string(kernels);
  };
  char line[512];
  std::snprintf(
      line, sizeof(line), kCompileRow, row.workload.c_str(), row.shape.c_str(),
      format("%.3f", row.first_ms).c_str(), format("%.3f", row.second_ms).c_str(),
      counters(row.first_compiled, row.first_cache_hits, row.first_cache_misses, row.first_kernels)
          .c_str(),
      counters(row.second_compiled, row.second_cache_hits, row.second_cache_misses,
               row.second_kernels)
          .c_str());
  out_ << line << std::flush;
  compile_rows_.push_back(std::move(row));
}

bool Report::has_mismatch() const {
  for (const Row& row : rows_) {
    if (row.mismatch) return true;
  }
  return false;
}

void Report::write_json(std::ostream& out) const {
  out << "{\n  \"rows\": [";
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& row = rows_[i];
    out << (i == 0 ? "\n" : ",\n") << "    {\"suite\": " << json_string(row.suite)
        << ", \"workload\": " << json_string(row.workload)
        << ", \"size\": " << json_string(row.size) << ", \"shape\": " << json_string(row.shape)
        << ", \"variant\": " << json_string(row.variant)
        << ", \"median_ms\": " << json_number(row.median_ms)
        << ", \"minimal_bytes\": " << row.minimal_bytes
        << ", \"gb_per_s\": " << json_number(row.gigabytes_per_second())
        << ", \"ratio_to_hand\": " << json_number(row.ratio_to_hand())
        << ", \"kernels_per_run\": " << json_number(row.kernels_per_run)
        << ", \"check\": " << json_string(row.check)
        << ", \"mismatch\": " << (row.mismatch ? "true" : "false") << "}";
  }
  out << "\n  ],\n  \"compile\": [";
  for (size_t i = 0; i < compile_rows_.size(); ++i) {
    const CompileRow& row = compile_rows_[i];
    out << (i == 0 ? "\n" : ",\n") << "    {\"suite\": " << json_string(row.suite)
        << ", \"workload\": " << json_string(row.workload)
        << ", \"shape\": " << json_string(row.shape)
        << ", \"first_ms\": " << json_number(row.first_ms)
        << ", \"second_ms\": " << json_number(row.second_ms)
        << ", \"first\": {\"kernels_compiled\": " << row.first_compiled
        << ", \"cache_hits\": " << row.first_cache_hits
        << ", \"cache_misses\": " << row.first_cache_misses
        << ", \"kernels_launched\": " << row.first_kernels << "}"
        << ", \"second\": {\"kernels_compiled\": " << row.second_compiled
        << ", \"cache_hits\": " << row.second_cache_hits
        << ", \"cache_misses\": " << row.second_cache_misses
        << ", \"kernels_launched\": " << row.second_kernels << "}}";
  }
  out << "\n  ]\n}\n";
}

}  // namespace lazuli_bench
