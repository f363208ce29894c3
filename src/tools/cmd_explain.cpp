// `kerntune explain`: the model's figures for a config of any op (OpSpec::explain: CTAs,
// occupancy, waves, efficiencies, predicted time); without --config, the measured winner and
// runner-up from the database when there are any, else the model's pick and its runner-up, and
// what the runtime would serve on the profile's device (its dispatch grade and whether the cubin
// is stored). Reads the database only: never creates or migrates it.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "generator/generated_source.hpp"
#include "runtime/op_dispatch.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"
#include "tools/config_timings.hpp"
#include "tools/json_text.hpp"

namespace kt::cli {

namespace {

struct ExplainOptions {
  ProblemOptions problem;
  std::string config;
  std::string profile = "h200";
  std::string db;
  bool json = false;
  int benchmark = 0;  // list benchmark mode's candidates for this many configs
};

// One config explained: the given one, or the winner or runner-up (measured or the model's).
struct ExplainedConfig {
  std::string role;  // "given", "winner", "runner_up"
  std::string config_key;
  double predicted_us = 0;            // the model's time (as stored beside a measurement)
  std::optional<double> measured_us;  // the database's median, for a measured one
  std::string explanation;            // OpSpec::explain: several lines
};

// What the runtime would serve on the device (the first of the dispatch grades' choices).
struct ExplainedDispatch {
  rt::DispatchChoice choice;
  bool cubin_stored = false;  // found by source key, as a machine without NVRTC finds it
  std::vector<rt::DispatchChoice> benchmark;  // with --benchmark N: the configs it would time
};

struct ExplainedProblem {
  std::string problem_key;
  ProblemSummary summary;
  std::string source;  // "given" (--config), "measured" (the database's) or "model"
  std::vector<ExplainedConfig> configs;
  std::optional<ExplainedDispatch> dispatch;  // without --config
};

// The runtime's dispatch of `p` on `device` from `database` (null: none) with the default
// workspace (and the scratch the problem cannot run without).
ExplainedDispatch explain_dispatch(const OpSpec& op, const DeviceDesc& device,
                                   const cache::Database* database, const std::string& p,
                                   int benchmark) {
  ExplainedDispatch d;
  const std::int64_t cap = rt::workspace_cap_for(op, p, device, std::int64_t(64) << 20);
  d.choice = rt::choose_config(database, op, p, device, cap);
  if (benchmark > 1 && d.choice.grade != rt::DispatchGrade::kExact)
    d.benchmark = rt::benchmark_choices(database, op, p, device, cap, std::size_t(benchmark));
  if (database != nullptr) {
    const gen::GeneratedSource source =
        gen::generate(op, p, d.choice.config_key, "", device.arch());
    d.cubin_stored = !database->find_cubins_by_source(gen::source_key(source), source.arch).empty();
  }
  return d;
}

// The measured winner and runner-up for the profile's device in the database, one row per
// config (config_timings).
std::vector<cache::Measurement> measured_best(const OpSpec& op, const std::string& problem_key,
                                              const DeviceDesc& device,
                                              const cache::Database& database) {
  std::vector<cache::Measurement> measured =
      config_timings(database.measurements({problem_key, device.fingerprint(),
                                            kBenchmarkProtocolVersion, op.template_version()}),
                     cache::Status::kOk);
  std::sort(measured.begin(), measured.end(),
            [](const auto& a, const auto& b) { return a.median_us < b.median_us; });
  if (measured.size() > 2) measured.resize(2);
  return measured;
}

// `database`: null when there is none to read (the model's picks are explained then).
ExplainedProblem explain_problem(const ExplainOptions& o, const OpSpec& op,
                                 const DeviceDesc& device, const cache::Database* database,
                                 const std::string& p) {
  ExplainedProblem e{p, op.summarize(p), "given", {}};
  auto add = [&](const char* role, const std::string& config, double predicted_us,
                 std::optional<double> measured_us) {
    e.configs.push_back({role, config, predicted_us, measured_us, op.explain(p, config, device)});
  };
  if (!o.config.empty()) {
    if (auto why = op.validate_config(p, o.config, device))
      throw_invalid(fmt::format("{}: {}", o.config, *why));
    add("given", o.config, op.predicted_us(p, o.config, device), std::nullopt);
    return e;
  }
  e.dispatch = explain_dispatch(op, device, database, p, o.benchmark);
  const char* roles[] = {"winner", "runner_up"};
  const std::vector<cache::Measurement> measured = database != nullptr
                                                       ? measured_best(op, p, device, *database)
                                                       : std::vector<cache::Measurement>{};
  e.source = measured.empty() ? "model" : "measured";
  for (std::size_t i = 0; i < measured.size(); ++i)
    add(roles[i], measured[i].config_key, measured[i].predicted_us, measured[i].median_us);
  if (measured.empty()) {
    const std::vector<RankedConfigKey> ranked = op.ranked_configs(p, device);
    for (std::size_t i = 0; i < std::min<std::size_t>(2, ranked.size()); ++i)
      add(roles[i], ranked[i].config_key, ranked[i].predicted_us, std::nullopt);
  }
  return e;
}

void print_text(const ExplainOptions& o, const std::vector<ExplainedProblem>& problems) {
  for (const ExplainedProblem& e : problems) {
    const ProblemSummary& s = e.summary;
    fmt::print("{} on {} ({:.3g} GFLOP, {:.1f} MB minimum traffic, intensity {:.1f} FLOP/B)\n",
               e.problem_key, o.profile, s.flops / 1e9, s.min_bytes / 1e6, s.flops / s.min_bytes);
    for (const ExplainedConfig& c : e.configs) {
      const bool winner = c.role == "winner";
      const char* title = c.role == "given" ? "config"
                          : e.source == "measured"
                              ? (winner ? "measured winner" : "measured runner-up")
                              : (winner ? "model's pick" : "runner-up");
      std::string measured;
      if (c.measured_us)
        measured = fmt::format(" (measured {:.1f} us, model error {:+.0f}%)", *c.measured_us,
                               100 * (c.predicted_us - *c.measured_us) / *c.measured_us);
      fmt::print("{}: {}{}\n{}", title, c.config_key, measured, c.explanation);
    }
    if (e.dispatch) {
      const rt::DispatchChoice& c = e.dispatch->choice;
      fmt::print("runtime would serve: {} (grade {}{}); {}\n", c.config_key, rt::to_string(c.grade),
                 c.tuned_device.empty()
                     ? std::string()
                     : fmt::format(", tuned for {} on {}", c.tuned_problem_key, c.tuned_device),
                 e.dispatch->cubin_stored ? "its cubin is stored"
                                          : "no stored cubin: compiled on first use");
      if (!e.dispatch->benchmark.empty())
        fmt::print("benchmark mode would time, on the first call:\n");
      for (const rt::DispatchChoice& b : e.dispatch->benchmark)
        fmt::print("  {} ({})\n", b.config_key, rt::to_string(b.grade));
    }
  }
}

// `explain --json`: {"device_profile", "device", "database" (its path; null with --config,
// which reads none), "database_error" (why it was not read; null when it was or there is none),
// "problems": [{"problem", "gflop", "min_bytes", "flop_per_byte", "source": "given" | "measured" |
// "model", "configs": [{"role": "given" | "winner" | "runner_up", "config", "predicted_us",
// "measured_us" (null unless measured), "explanation" (the text's lines, one string)}],
// "dispatch": {"grade", "config", "tuned_problem", "tuned_device" (null for the model's pick),
// "cubin_stored", "benchmark": [{"config", "grade"}] (with --benchmark N and no exact winner: the
// configs benchmark mode would time; else empty)} (null with --config)}]}.
void print_json(const ExplainOptions& o, const DeviceDesc& device, const std::string& database,
                const std::string& database_error, const std::vector<ExplainedProblem>& problems) {
  std::vector<std::string> items;
  for (const ExplainedProblem& e : problems) {
    std::vector<std::string> configs;
    for (const ExplainedConfig& c : e.configs)
      configs.push_back(fmt::format(
          "{{\"role\": {}, \"config\": {}, \"predicted_us\": {}, \"measured_us\": {}, "
          "\"explanation\": {}}}",
          json_string(c.role), json_string(c.config_key), json_number(c.predicted_us),
          c.measured_us ? json_number(*c.measured_us) : "null", json_string(c.explanation)));
    std::string dispatch = "null";
    if (e.dispatch) {
      const rt::DispatchChoice& c = e.dispatch->choice;
      std::vector<std::string> benchmark;
      for (const rt::DispatchChoice& b : e.dispatch->benchmark)
        benchmark.push_back(fmt::format("{{\"config\": {}, \"grade\": {}}}",
                                        json_string(b.config_key),
                                        json_string(rt::to_string(b.grade))));
      dispatch = fmt::format(
          "{{\"grade\": {}, \"config\": {}, \"tuned_problem\": {}, \"tuned_device\": {}, "
          "\"cubin_stored\": {}, \"benchmark\": [{}]}}",
          json_string(rt::to_string(c.grade)), json_string(c.config_key),
          c.tuned_problem_key.empty() ? "null" : json_string(c.tuned_problem_key),
          c.tuned_device.empty() ? "null" : json_string(c.tuned_device),
          e.dispatch->cubin_stored ? "true" : "false", fmt::join(benchmark, ", "));
    }
    items.push_back(fmt::format(
        "{{\"problem\": {}, \"gflop\": {}, \"min_bytes\": {}, \"flop_per_byte\": {}, "
        "\"source\": {}, \"configs\": [{}], \"dispatch\": {}}}",
        json_string(e.problem_key), json_number(e.summary.flops / 1e9),
        json_number(e.summary.min_bytes), json_number(e.summary.flops / e.summary.min_bytes),
        json_string(e.source), fmt::join(configs, ", "), dispatch));
  }
  fmt::print(
      "{{\"device_profile\": {}, \"device\": {}, \"database\": {}, \"database_error\": {}, "
      "\"problems\": [{}]}}\n",
      json_string(o.profile), json_string(device.fingerprint()),
      database.empty() ? "null" : json_string(database),
      database_error.empty() ? "null" : json_string(database_error), fmt::join(items, ", "));
}

void run(const ExplainOptions& o) {
  const DeviceDesc& device = device_profile(o.profile);
  const OpSpec& op = o.problem.spec();
  const std::vector<std::string> keys = o.problem.problem_keys();
  // Read-only: explain never creates or migrates a database. One it cannot read is reported
  // (stderr, and "database_error" in JSON) and the model's picks explained instead.
  std::string path, database_error;
  std::optional<cache::Database> database;
  if (o.config.empty()) {
    try {
      path = resolve_database_path(o.db);
      database = open_existing_database(o.db);
    } catch (const Error& e) {
      database_error = e.what();
      fmt::print(stderr, "kerntune: the database was not read, so the model's picks follow: {}\n",
                 e.what());
    }
  }
  std::vector<ExplainedProblem> problems;
  for (const std::string& p : keys)
    problems.push_back(explain_problem(o, op, device, database ? &*database : nullptr, p));
  if (o.json)
    print_json(o, device, path, database_error, problems);
  else
    print_text(o, problems);
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
  add_benchmark_option(*cmd, o->benchmark,
                       "List the configs benchmark mode would time for each problem without an "
                       "exact winner");
  cmd->add_flag("--json", o->json,
                "One JSON object: device_profile, device, database, database_error, problems "
                "[{problem, gflop, min_bytes, "
                "flop_per_byte, source, configs [{role, config, predicted_us, measured_us, "
                "explanation}]}]");
  cmd->callback([o] { run(*o); });
}

}  // namespace kt::cli
