// The CSV layout of `kerntune cache export` and its strict inverse.
#include "cache/export_format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "cache/csv.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace kt::cache {

namespace {

constexpr const char* kMeasurementKind = "measurement";
constexpr const char* kWinnerKind = "winner";

// The fields every kind of row starts with: kind, the tuning key, config_key.
std::vector<std::string> leading_fields(const char* kind, const TuningKey& key,
                                        const std::string& config_key) {
  return {kind,
          key.problem_key,
          key.device_fingerprint,
          std::to_string(key.protocol_version),
          std::to_string(key.template_version),
          config_key};
}

}  // namespace

std::string canonical_real(double value) {
  if (std::isnan(value)) return "nan";
  if (value == 0) return "0";
  return fmt::format("{}", value);
}

const std::vector<std::string>& export_columns() {
  static const std::vector<std::string> columns = {
      "kind",       "problem_key",  "device_fingerprint", "protocol_version", "template_version",
      "config_key", "status",       "median_us",          "spread_pct",       "num_reps",
      "tflops",     "sm_clock_mhz", "predicted_us",       "predicted",        "detail",
      "run_id",     "created_unix"};
  return columns;
}

std::vector<std::string> export_fields(const Measurement& m) {
  std::vector<std::string> fields = leading_fields(kMeasurementKind, m.key, m.config_key);
  fields.insert(
      fields.end(),
      {to_string(m.status), canonical_real(m.median_us), canonical_real(m.spread_pct),
       std::to_string(m.num_reps), canonical_real(m.tflops), std::to_string(m.sm_clock_mhz),
       canonical_real(m.predicted_us), "", m.detail, m.run_id, std::to_string(m.created_unix)});
  return fields;
}

std::vector<std::string> export_fields(const Winner& w) {
  std::vector<std::string> fields = leading_fields(kWinnerKind, w.key, w.config_key);
  fields.insert(fields.end(),
                {"", canonical_real(w.median_us), "", "", "", "", "", w.predicted ? "1" : "0", "",
                 w.run_id, std::to_string(w.created_unix)});
  return fields;
}

namespace {

// One data row of an imported CSV, addressed by column name. Every accessor marks its column
// used; check_unused() then rejects values in columns the row's kind does not have.
class CsvRow {
 public:
  CsvRow(const std::map<std::string, std::size_t>& index, const csv::Record& record)
      : index_(index), record_(record), used_(record.fields.size(), false) {}

  const std::string& text(const std::string& column) {
    const std::size_t at = index_.at(column);
    used_[at] = true;
    return record_.fields[at];
  }

  int integer(const std::string& column) {
    const std::int64_t value = int64(column);
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
      throw_invalid(fmt::format("{} = {} is out of range", column, value));
    return static_cast<int>(value);
  }

  std::int64_t int64(const std::string& column) { return parse_int(text(column), column); }

  double real(const std::string& column) { return parse_real(text(column), column); }

  void check_unused(const std::string& kind) const {
    for (const auto& [name, at] : index_) {
      if (!used_[at] && !record_.fields[at].empty()) {
        throw_invalid(fmt::format("column {} holds '{}', but {} rows leave it empty", name,
                                  record_.fields[at], kind));
      }
    }
  }

 private:
  const std::map<std::string, std::size_t>& index_;
  const csv::Record& record_;
  std::vector<bool> used_;
};

TuningKey read_key(CsvRow& row) {
  TuningKey key;
  key.problem_key = row.text("problem_key");
  key.device_fingerprint = row.text("device_fingerprint");
  key.protocol_version = row.integer("protocol_version");
  key.template_version = row.integer("template_version");
  return key;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ErrorKind::kNotFound,
                fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw Error(ErrorKind::kInvalidArgument,
                fmt::format("error reading '{}': {}", path, std::strerror(errno)));
  }
  return std::move(text).str();
}

}  // namespace

ExportContents read_export(const std::string& path) {
  const std::string text = read_whole_file(path);
  const std::vector<csv::Record> records = csv::parse(text, path);
  if (records.empty()) {
    throw_invalid(
        fmt::format("{}:1: the file is empty; expected a header line starting with "
                    "'kind,' (as written by `kerntune cache export`)",
                    path));
  }
  const csv::Record& header = records.front();
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < header.fields.size(); ++i) {
    const std::string& name = header.fields[i];
    const auto& known = export_columns();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw_invalid(fmt::format("{}:{}: unknown column '{}' in the header; expected {}", path,
                                header.line, name, fmt::join(known, ",")));
    }
    if (!index.emplace(name, i).second) {
      throw_invalid(
          fmt::format("{}:{}: column '{}' appears twice in the header", path, header.line, name));
    }
  }
  for (const std::string& name : export_columns()) {
    if (!index.contains(name)) {
      throw_invalid(fmt::format("{}:{}: the header lacks column '{}'; expected {}", path,
                                header.line, name, fmt::join(export_columns(), ",")));
    }
  }

  ExportContents contents;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const csv::Record& record = records[r];
    try {
      if (record.fields.size() != header.fields.size()) {
        throw_invalid(fmt::format("{} fields, but the header has {}", record.fields.size(),
                                  header.fields.size()));
      }
      CsvRow row(index, record);
      const std::string& kind = row.text("kind");
      if (kind == kMeasurementKind) {
        Measurement m;
        m.key = read_key(row);
        m.config_key = row.text("config_key");
        m.status = parse_status(row.text("status"));
        m.median_us = row.real("median_us");
        m.spread_pct = row.real("spread_pct");
        m.num_reps = row.integer("num_reps");
        m.tflops = row.real("tflops");
        m.sm_clock_mhz = row.integer("sm_clock_mhz");
        m.predicted_us = row.real("predicted_us");
        m.detail = row.text("detail");
        m.run_id = row.text("run_id");
        m.created_unix = row.int64("created_unix");
        row.check_unused(kind);
        contents.measurements.push_back(std::move(m));
        contents.measurement_lines.push_back(record.line);
      } else if (kind == kWinnerKind) {
        Winner w;
        w.key = read_key(row);
        w.config_key = row.text("config_key");
        w.median_us = row.real("median_us");
        const std::string& predicted = row.text("predicted");
        if (predicted != "0" && predicted != "1")
          throw_invalid(fmt::format("predicted = '{}': expected 0 or 1", predicted));
        w.predicted = predicted == "1";
        w.run_id = row.text("run_id");
        w.created_unix = row.int64("created_unix");
        row.check_unused(kind);
        contents.winners.push_back(std::move(w));
        contents.winner_lines.push_back(record.line);
      } else {
        throw_invalid(
            fmt::format("kind = '{}': expected {} or {}", kind, kMeasurementKind, kWinnerKind));
      }
    } catch (const Error& error) {
      throw Error(ErrorKind::kInvalidArgument,
                  fmt::format("{}:{}: {}", path, record.line, error.what()));
    }
  }
  return contents;
}

}  // namespace kt::cache
