// The CSV `kerntune bench --csv` writes: its header (which names this version of the format) and
// a reader that takes such a file as hostile input, for `kerntune report --bench`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kt::cli {

inline constexpr const char* kBenchCsvHeader =
    "problem,config,grade,kerntune_us,kerntune_spread_pct,kerntune_tflops,kerntune_tbps,baseline,"
    "baseline_us,baseline_spread_pct,baseline_tflops,baseline_tbps,ratio,kerntune_rel_error,"
    "baseline_rel_error,copy_us,copy_tbps,of_copy,baseline_detail";

// What a report takes from one row of a bench CSV: the times bench measured in one process, the
// kernel the runtime dispatched and the library beside it.
struct BenchCsvRow {
  std::int64_t line = 0;    // where the row is in the file (1-based)
  std::string problem_key;  // a key of a registered op
  std::string config_key;   // the config the runtime dispatched
  std::string grade;        // its dispatch grade ("exact", "predicted", ...)
  double kerntune_us = 0;   // median, > 0
  std::string baseline;     // the library's name; empty when the op has none in the CLI
  double baseline_us = 0;   // median; 0 when it did not run (none, or it failed)

  // The baseline's time over kerntune's (> 1: kerntune faster); 0 without a baseline.
  double ratio() const { return baseline_us > 0 ? baseline_us / kerntune_us : 0; }
};

// The rows of a file `kerntune bench --csv` wrote, in file order. Throws kt::Error (kNotFound)
// when it cannot be read, and (kInvalidArgument) "<path>:<line>: <problem>" for a file larger
// than 64 MiB, malformed CSV, a first line other than kBenchCsvHeader (another file, or another
// version's), a record of another width, a problem key no registered op parses, a time that is
// not a finite number (kerntune's must be > 0, the baseline's >= 0, and 0 when none is named),
// or a name (config, grade, baseline) that is longer than 200 bytes or holds
// anything but printable ASCII. The ratio column is not read: ratio() recomputes it.
std::vector<BenchCsvRow> read_bench_csv(const std::string& path);

}  // namespace kt::cli
