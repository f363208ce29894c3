// Gathers what `kerntune report` shows (report_data.hpp) from a database's rows, the op registry
// and the models.
#include "tools/report_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "fleet/work_plan.hpp"
#include "tools/config_timings.hpp"
#include "tuner/run_ledger.hpp"

namespace kt::cli {

namespace {

using KeyTuple = std::tuple<std::string, std::string, int, int>;  // device, problem, versions

KeyTuple tuple_of(const cache::TuningKey& k) {
  return {k.device_fingerprint, k.problem_key, k.protocol_version, k.template_version};
}

// Every row of `db` by tuning key, and the keys that have a winner or a row.
struct RowsByKey {
  std::map<KeyTuple, std::vector<cache::Measurement>> measurements;
  std::map<KeyTuple, cache::Winner> winners;
  std::map<KeyTuple, cache::TuningKey> keys;
};

RowsByKey rows_by_key(const cache::Database& db) {
  RowsByKey rows;
  for (cache::Measurement& m : db.all_measurements()) {
    rows.keys.emplace(tuple_of(m.key), m.key);
    rows.measurements[tuple_of(m.key)].push_back(std::move(m));
  }
  for (cache::Winner& w : db.all_winners()) {
    rows.keys.emplace(tuple_of(w.key), w.key);
    rows.winners.emplace(tuple_of(w.key), std::move(w));
  }
  return rows;
}

void check_filter(const ReportFilter& filter, const RowsByKey& rows) {
  for (const std::string& op : filter.ops) op_spec(op);  // throws listing the registered ops
  if (filter.device.empty()) return;
  std::set<std::string> devices;
  for (const auto& [tuple, key] : rows.keys) devices.insert(key.device_fingerprint);
  if (!devices.contains(filter.device))
    throw_invalid(fmt::format(
        "--device '{}': the database has no rows of that device (its "
        "devices: {})",
        filter.device, devices.empty() ? "none" : fmt::format("{}", fmt::join(devices, ", "))));
}

std::optional<ConfigTile> tile_of(const OpSpec& op, const std::string& config_key) {
  try {
    return op.tile_of(config_key);
  } catch (const Error&) {
    return std::nullopt;  // a key of an older grammar: no tile, still listed
  }
}

ReportPick pick_of(const OpSpec& op, const std::string& problem_key, const std::string& config,
                   double us, bool predicted, const std::optional<DeviceDesc>& device) {
  ReportPick pick{config, us, predicted, std::nullopt};
  if (!device) return pick;
  try {
    pick.waves = op.waves(problem_key, config, *device);
  } catch (const Error&) {
    pick.waves = std::nullopt;
  }
  return pick;
}

// The configs of one key with a usable time (status ok or predicted, a finite positive time),
// fastest first, and the other outcomes counted.
void add_configs(const OpSpec& op, const std::vector<cache::Measurement>& rows,
                 ReportProblem& problem) {
  for (cache::Status status : {cache::Status::kOk, cache::Status::kPredicted})
    for (const cache::Measurement& m : config_timings(rows, status)) {
      if (!std::isfinite(m.median_us) || m.median_us <= 0) continue;
      ReportConfig c{m.config_key,
                     status == cache::Status::kPredicted,
                     m.median_us,
                     std::isfinite(m.predicted_us) && m.predicted_us > 0 ? m.predicted_us : 0,
                     std::isfinite(m.spread_pct) ? m.spread_pct : 0,
                     m.detail == tune::kFinalistDetail,
                     tile_of(op, m.config_key)};
      if (c.tile && !problem.tile_axes) problem.tile_axes = {c.tile->x_name, c.tile->y_name};
      problem.configs.push_back(std::move(c));
    }
  std::stable_sort(problem.configs.begin(), problem.configs.end(),
                   [](const auto& a, const auto& b) { return a.us < b.us; });
  for (const cache::Measurement& m : rows)
    if (m.status != cache::Status::kOk && m.status != cache::Status::kPredicted)
      ++problem.failures[cache::to_string(m.status)];
}

// The stored winner, and the fastest other config of its kind (measured or predicted).
void add_picks(const OpSpec& op, const cache::Winner& winner,
               const std::optional<DeviceDesc>& device, ReportProblem& problem) {
  const std::string& key = problem.key.problem_key;
  problem.winner = pick_of(op, key, winner.config_key, winner.median_us, winner.predicted, device);
  for (const ReportConfig& c : problem.configs) {
    if (c.predicted != winner.predicted || c.config_key == winner.config_key) continue;
    problem.runner_up = pick_of(op, key, c.config_key, c.us, c.predicted, device);
    break;
  }
}

void attach_bench(const std::vector<BenchCsvRow>& bench, ReportData& data) {
  std::set<std::string> noted;
  for (const BenchCsvRow& row : bench) {
    std::vector<ReportProblem*> matches;
    for (ReportProblem& p : data.problems)
      if (p.key.problem_key == row.problem_key) matches.push_back(&p);
    std::set<std::string> devices;
    for (const ReportProblem* p : matches) devices.insert(p->key.device_fingerprint);
    if (devices.size() > 1)
      throw_invalid(fmt::format(
          "{}:{}: {} is in the report on {} devices ({}), and a bench CSV names none: pass "
          "--device with the one bench ran on",
          data.bench_file, row.line, row.problem_key, devices.size(), fmt::join(devices, ", ")));
    if (matches.empty()) {
      if (noted.insert(row.problem_key).second)
        data.notes.push_back(fmt::format("{}: bench rows of {}, which the report does not hold",
                                         data.bench_file, row.problem_key));
      continue;
    }
    // Several tuning keys of one device (older template versions): each shows the bench rows.
    for (ReportProblem* p : matches) p->bench.push_back(row);
  }
}

}  // namespace

ReportData gather_report(const cache::Database& db, const ReportFilter& filter,
                         const std::vector<BenchCsvRow>& bench, const std::string& bench_file) {
  const RowsByKey rows = rows_by_key(db);
  check_filter(filter, rows);
  ReportData data;
  data.database = db.path();
  data.schema_version = db.summary().schema_version;
  data.bench_file = bench_file;
  std::map<std::string, ReportDevice> devices;
  for (const auto& [tuple, key] : rows.keys) {
    if (!filter.device.empty() && key.device_fingerprint != filter.device) continue;
    const OpEntry* entry = OpRegistry::instance().find_by_key(key.problem_key);
    if (entry != nullptr && !filter.ops.empty() &&
        std::find(filter.ops.begin(), filter.ops.end(), entry->spec->name()) == filter.ops.end())
      continue;
    ReportProblem problem{key};
    try {
      if (entry == nullptr) throw_invalid("not a problem key of a registered op");
      problem.summary = entry->spec->summarize(key.problem_key);
    } catch (const Error& e) {
      if (filter.ops.empty())
        data.notes.push_back(fmt::format("{} on {}: left out: {}", key.problem_key,
                                         key.device_fingerprint, e.what()));
      continue;
    }
    const OpSpec& op = *entry->spec;
    problem.op = op.name();
    problem.current_versions = key.protocol_version == kBenchmarkProtocolVersion &&
                               key.template_version == op.template_version();
    auto [device, inserted] = devices.try_emplace(key.device_fingerprint);
    if (inserted)
      device->second = {key.device_fingerprint,
                        fleet::device_of_fingerprint(key.device_fingerprint)};
    if (const auto found = rows.measurements.find(tuple); found != rows.measurements.end())
      add_configs(op, found->second, problem);
    if (const auto found = rows.winners.find(tuple); found != rows.winners.end())
      add_picks(op, found->second, device->second.model, problem);
    else
      data.notes.push_back(fmt::format("{} on {}: no winner stored (a run that did not finish)",
                                       key.problem_key, key.device_fingerprint));
    data.problems.push_back(std::move(problem));
  }
  if (data.problems.empty())
    throw_invalid(fmt::format(
        "nothing to report: '{}' holds no tuning results{}; `kerntune tune --db '{}' ...` makes "
        "some",
        db.path(),
        filter.ops.empty() && filter.device.empty() ? "" : " that --op and --device select",
        db.path()));
  std::stable_sort(data.problems.begin(), data.problems.end(), [](const auto& a, const auto& b) {
    return std::tie(a.key.device_fingerprint, a.op, a.key.problem_key, a.key.template_version) <
           std::tie(b.key.device_fingerprint, b.op, b.key.problem_key, b.key.template_version);
  });
  for (auto& [fingerprint, device] : devices) data.devices.push_back(std::move(device));
  attach_bench(bench, data);
  return data;
}

}  // namespace kt::cli
