// The results: a table printed row by row as measurements finish, and the same rows as JSON.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace lazuli_bench {

/// One measured variant of one workload at one size.
struct Row {
  std::string suite;
  std::string workload;
  std::string size;   // as given on the command line: "16M"
  std::string shape;  // what that size means for this workload: "(4096,4096)"
  std::string variant;
  std::optional<double> median_ms;        // empty: not measured (the numpy column without numpy)
  int64_t minimal_bytes = 0;              // inputs read once + output written once
  std::optional<double> hand_ms;          // the hand-written loop's median, for the ratio
  std::optional<double> kernels_per_run;  // lazuli variants: kernels launched per evaluation
  std::string check;                      // "ok (...)", "MISMATCH: ...", or empty: not checked
  bool mismatch = false;

  std::optional<double> gigabytes_per_second() const;
  std::optional<double> ratio_to_hand() const;
};

/// The first and second evaluation of one freshly recorded graph shape.
struct CompileRow {
  std::string suite;
  std::string workload;
  std::string shape;
  double first_ms = 0;
  double second_ms = 0;
  // lz::stats() differences over each evaluation.
  int64_t first_compiled = 0, first_cache_hits = 0, first_cache_misses = 0, first_kernels = 0;
  int64_t second_compiled = 0, second_cache_hits = 0, second_cache_misses = 0, second_kernels = 0;
};

/// Collects rows and prints each as it arrives, under a header printed when a new table starts.
class Report {
 public:
  explicit Report(std::ostream& out) : out_(out) {}

  /// Prints a title line above the next table.
  void section(const std::string& title);
  /// Prints a line of explanation under the current table.
  void note(const std::string& text);
  void add(Row row);
  void add(CompileRow row);

  bool has_mismatch() const;
  /// The timing rows so far, in the order they were added.
  const std::vector<Row>& rows() const { return rows_; }
  /// {"rows": [...], "compile": [...]} with one object per row.
  void write_json(std::ostream& out) const;

 private:
  enum class Table { None, Timing, Compile };
  void start_table(Table table);

  std::ostream& out_;
  Table current_ = Table::None;
  std::vector<Row> rows_;
  std::vector<CompileRow> compile_rows_;
};

}  // namespace lazuli_bench
