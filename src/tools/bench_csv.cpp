// The reader of `kerntune bench --csv` files (bench_csv.hpp): every field it keeps is checked
// before it is trusted.
#include "tools/bench_csv.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cache/csv.hpp"
#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/text.hpp"

namespace kt::cli {

namespace {

constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t(64) << 20;
constexpr std::size_t kMaxNameBytes = 200;

// The columns a report reads, by position in kBenchCsvHeader.
enum Column : std::size_t {
  kProblem = 0,
  kConfig = 1,
  kGrade = 2,
  kKerntuneUs = 3,
  kBaseline = 7,
  kBaselineUs = 8,
};

std::string read_text(const std::string& path) {
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(path, error);
  std::ifstream in(path, std::ios::binary);
  if (error || !in)
    throw Error(ErrorKind::kNotFound, fmt::format("cannot read bench CSV '{}': {}", path,
                                                  error ? error.message() : std::strerror(errno)));
  if (bytes > kMaxFileBytes)
    throw_invalid(fmt::format("{}:1: {} bytes is larger than a bench CSV can be ({} MiB at most)",
                              path, bytes, kMaxFileBytes >> 20));
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

// `text` when it is a name of at most kMaxNameBytes printable ASCII characters.
const std::string& checked_name(const std::string& text, const char* column) {
  if (text.size() > kMaxNameBytes)
    throw_invalid(
        fmt::format("{} is {} bytes long (at most {})", column, text.size(), kMaxNameBytes));
  for (char c : text)
    if (c < 0x20 || c > 0x7e)
      throw_invalid(fmt::format("{} holds the byte {:#04x}: expected printable ASCII", column,
                                static_cast<unsigned char>(c)));
  return text;
}

double checked_time(const std::string& text, const char* column) {
  const double us = parse_real(text, column);
  if (!std::isfinite(us) || us < 0)
    throw_invalid(fmt::format("{} = '{}' is not a time in microseconds", column, text));
  return us;
}

BenchCsvRow read_row(const cache::csv::Record& record) {
  const std::vector<std::string>& f = record.fields;
  BenchCsvRow row;
  row.line = record.line;
  row.problem_key = checked_name(f[kProblem], "problem");
  op_spec_for_key(row.problem_key).summarize(row.problem_key);  // throws naming a bad key
  row.config_key = checked_name(f[kConfig], "config");
  row.grade = checked_name(f[kGrade], "grade");
  row.kerntune_us = checked_time(f[kKerntuneUs], "kerntune_us");
  if (row.kerntune_us <= 0) throw_invalid("kerntune_us is 0: bench measured no time");
  row.baseline = checked_name(f[kBaseline], "baseline");
  row.baseline_us = checked_time(f[kBaselineUs], "baseline_us");
  if (row.baseline.empty() && row.baseline_us > 0)
    throw_invalid(fmt::format("baseline_us is {} but no baseline is named", f[kBaselineUs]));
  return row;
}

}  // namespace

std::vector<BenchCsvRow> read_bench_csv(const std::string& path) {
  const std::vector<cache::csv::Record> records = cache::csv::parse(read_text(path), path);
  const std::vector<std::string_view> columns = split(kBenchCsvHeader, ',');
  if (records.empty() || fmt::format("{}", fmt::join(records.front().fields, ",")) !=
                             std::string_view(kBenchCsvHeader))
    throw_invalid(fmt::format(
        "{}:1: not a CSV of this version of `kerntune bench --csv`: its first line should be "
        "'{}'",
        path, kBenchCsvHeader));
  std::vector<BenchCsvRow> rows;
  for (std::size_t i = 1; i < records.size(); ++i) {
    const cache::csv::Record& record = records[i];
    try {
      if (record.fields.size() != columns.size())
        throw_invalid(
            fmt::format("{} fields, the header has {}", record.fields.size(), columns.size()));
      rows.push_back(read_row(record));
    } catch (const Error& e) {
      throw_invalid(fmt::format("{}:{}: {}", path, record.line, e.what()));
    }
  }
  return rows;
}

}  // namespace kt::cli
