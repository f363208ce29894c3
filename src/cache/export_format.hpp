// The layout of `kerntune cache export`: one CSV record per measurement or winner under a
// header line, `kind` first, and its strict inverse, which names the line of every problem.
// Also the canonical text of a time, shared with the measurement identity (row_sha256).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/database.hpp"

namespace kt::cache {

// `value` as text that reads back to the same double: the shortest round-trip form, with every
// NaN as "nan" and -0 as "0" (SQLite stores NaN as NULL and may store -0.0 as 0).
std::string canonical_real(double value);

// The header of the export, in order. Measurement rows leave `predicted` empty; winner rows
// leave status, spread_pct, num_reps, tflops, sm_clock_mhz, predicted_us and detail empty.
const std::vector<std::string>& export_columns();

// The fields of one export record, in export_columns() order.
std::vector<std::string> export_fields(const Measurement& measurement);
std::vector<std::string> export_fields(const Winner& winner);

struct ExportContents {
  std::vector<Measurement> measurements;
  std::vector<Winner> winners;
  std::vector<std::int64_t> measurement_lines;  // the line each measurement starts on
  std::vector<std::int64_t> winner_lines;       // the line each winner starts on
};

// Reads and parses an export. Columns may come in any order but must be exactly those of
// export_columns(). Throws kt::Error (kNotFound) when the file cannot be read, and
// (kInvalidArgument) "<path>:<line>: <problem>" for malformed CSV, an unknown or missing column,
// a row of the wrong width, an unknown kind or status, a value that is not a number, or a
// value in a column the row's kind leaves empty.
ExportContents read_export(const std::string& path);

}  // namespace kt::cache
