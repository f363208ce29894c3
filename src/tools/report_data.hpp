// What `kerntune report` shows of a tuning database, gathered with the op registry and the
// models: per tuning key the problem's size, every config's time (measured or predicted) and
// tile, the winner's and runner-up's waves, and the baseline timings of a bench CSV; per device
// the roofline's ceilings. Reads the database only; report_json.hpp writes the result.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/op_spec.hpp"
#include "tools/bench_csv.hpp"

namespace kt::cli {

struct ReportFilter {
  std::vector<std::string> ops;  // op names (OpSpec::name); empty: every op
  std::string device;            // a device fingerprint as stored; empty: every device
};

// One config of a problem with a time: measured (status ok) or the model's (status predicted).
struct ReportConfig {
  std::string config_key;
  bool predicted = false;   // the model's time without a GPU, not a measurement
  double us = 0;            // the measured median, or the model's time when predicted
  double predicted_us = 0;  // the model's time stored beside it (compiled registers); 0: unknown
  double spread_pct = 0;    // (p90 - p10) / median of a measurement
  bool finalist = false;    // the finalists' interleaved re-measurement (the pick's timing)
  std::optional<ConfigTile> tile;
};

// The winner or the runner-up, with its waves on the device as the model counts them.
struct ReportPick {
  std::string config_key;
  double us = 0;
  bool predicted = false;
  std::optional<WaveStats> waves;  // nullopt: the op's model counts none, or the device is unknown
};

struct ReportProblem {
  cache::TuningKey key;
  std::string op;
  ProblemSummary summary;
  bool current_versions = true;  // the benchmark protocol and template version of this build
  std::optional<std::pair<std::string, std::string>> tile_axes;  // ConfigTile's names
  std::optional<ReportPick> winner;
  std::optional<ReportPick> runner_up;  // the fastest other config of the winner's kind
  std::vector<ReportConfig> configs;    // one per (config, measured or predicted), fastest first
  std::map<std::string, int> failures;  // the other outcomes, by status
  std::vector<BenchCsvRow> bench;       // the bench CSV's rows of this problem
};

struct ReportDevice {
  std::string fingerprint;
  // The device as the model knows it (fleet::device_of_fingerprint: the built-in profile of its
  // compute capability at its SM count): the roofline's ceilings and the waves. nullopt when no
  // profile has its compute capability.
  std::optional<DeviceDesc> model;
};

struct ReportData {
  std::string database;
  int schema_version = 0;
  std::string bench_file;               // empty: none given
  std::vector<ReportDevice> devices;    // by fingerprint
  std::vector<ReportProblem> problems;  // by device, op, problem key
  std::vector<std::string> notes;       // what was left out, and why
};

// Every tuning key of `db` with a winner or a measurement that `filter` selects, with `bench`
// (read from `bench_file`) attached by problem key. Rows of an op that is not registered are left
// out with a note, as are bench rows of problems the report does not hold. Throws kt::Error
// (kInvalidArgument) when `filter` names an unregistered op or a device the database has no rows
// of, when nothing is left to report, and when a bench row's problem is reported on more than
// one device (a bench CSV names none: the filter's device picks one).
ReportData gather_report(const cache::Database& db, const ReportFilter& filter,
                         const std::vector<BenchCsvRow>& bench, const std::string& bench_file);

}  // namespace kt::cli
