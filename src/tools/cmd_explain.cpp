// `kerntune explain`: the model's figures for a config of any op (OpSpec::explain: CTAs,
// occupancy, waves, efficiencies, predicted time); without --config, the measured winner and
// runner-up from the database when there are any, else the model's pick and its runner-up.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/versions.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"
#include "tuner/run_ledger.hpp"

namespace kt::cli {

namespace {

struct ExplainOptions {
  ProblemOptions problem;
  std::string config;
  std::string profile = "h200";
  std::string db;
};

void print_config(const OpSpec& op, const std::string& title, const std::string& problem_key,
                  const std::string& config_key, const DeviceDesc& device,
                  const std::string& measured) {
  fmt::print("{}: {}{}\n{}", title, config_key, measured,
             op.explain(problem_key, config_key, device));
}

// The measured winner and runner-up for the profile's device in the database, one row per
// config: the interleaved re-measurement where there is one (the pick was made by it), else the
// latest row.
std::vector<cache::Measurement> measured_best(const OpSpec& op, const std::string& problem_key,
                                              const DeviceDesc& device, const std::string& db) {
  std::map<std::string, cache::Measurement> latest;
  try {
    cache::Database database = open_database(db);
    for (auto& m : database.measurements({problem_key, device.fingerprint(),
                                          kBenchmarkProtocolVersion, op.template_version()})) {
      if (m.status != cache::Status::kOk) continue;
      auto [kept, inserted] = latest.try_emplace(m.config_key, m);
      if (!inserted &&
          (m.detail == tune::kFinalistDetail || kept->second.detail != tune::kFinalistDetail))
        kept->second = std::move(m);
    }
  } catch (const Error&) {
  }
  std::vector<cache::Measurement> measured;
  for (auto& [config, m] : latest) measured.push_back(std::move(m));
  std::sort(measured.begin(), measured.end(),
            [](const auto& a, const auto& b) { return a.median_us < b.median_us; });
  if (measured.size() > 2) measured.resize(2);
  return measured;
}

void run(const ExplainOptions& o) {
  const DeviceDesc& device = device_profile(o.profile);
  const OpSpec& op = o.problem.spec();
  for (const std::string& p : o.problem.problem_keys()) {
    const ProblemSummary s = op.summarize(p);
    fmt::print("{} on {} ({:.3g} GFLOP, {:.1f} MB minimum traffic, intensity {:.1f} FLOP/B)\n", p,
               o.profile, s.flops / 1e9, s.min_bytes / 1e6, s.flops / s.min_bytes);
    if (!o.config.empty()) {
      if (auto why = op.validate_config(p, o.config, device))
        throw_invalid(fmt::format("{}: {}", o.config, *why));
      print_config(op, "config", p, o.config, device, "");
      continue;
    }
    const std::vector<cache::Measurement> measured = measured_best(op, p, device, o.db);
    const char* measured_titles[] = {"measured winner", "measured runner-up"};
    for (std::size_t i = 0; i < measured.size(); ++i) {
      const auto& m = measured[i];
      print_config(op, measured_titles[i], p, m.config_key, device,
                   fmt::format(" (measured {:.1f} us, model error {:+.0f}%)", m.median_us,
                               100 * (m.predicted_us - m.median_us) / m.median_us));
    }
    if (!measured.empty()) continue;
    const std::vector<RankedConfigKey> ranked = op.ranked_configs(p, device);
    const char* titles[] = {"model's pick", "runner-up"};
    for (std::size_t i = 0; i < std::min<std::size_t>(2, ranked.size()); ++i)
      print_config(op, titles[i], p, ranked[i].config_key, device, "");
  }
}

}  // namespace

void register_explain(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Show the model's reasoning: tiles, waves, efficiencies, predicted time");
  add_problem_options(*cmd, o->problem);
  cmd->add_option("--config", o->config,
                  "Config key to explain (default: the model's pick and runner-up)");
  add_profile_option(*cmd, o->profile);
  add_database_option(*cmd, o->db);
  cmd->callback([o] { run(*o); });
}

}  // namespace kt::cli
