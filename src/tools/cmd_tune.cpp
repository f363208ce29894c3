// `kerntune tune`: tunes each shape on the GPU (or, without one, predicts with a device
// profile) and stores every candidate's result and the winner in the database. Candidates run
// in worker processes; a run killed before it finished is resumed by the same command, and a
// problem that command finished before is skipped (--retune tunes it again).
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <memory>
#include <utility>

#include "cache/row_checks.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "runtime/cuda_driver.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"
#include "tools/json_reports.hpp"
#include "tuner/problem_tuner.hpp"

namespace kt::cli {

namespace {

struct TuneCliOptions {
  ProblemOptions problem;
  std::string db;
  std::string profile = "h200";
  bool predict = false;
  bool retune = false;
  std::string search = "default";
  int candidates = 0;  // 0: the op's whole search
  int finalists = 3;
  int device = 0;
  std::vector<std::string> configs;
  std::uint64_t seed = 0;
  tune::IsolationOptions isolation;
  bool json = false;
};

// The summary of one tuning run: failures, winner and runner-up.
void print_report(const tune::TuneReport& r) {
  int failed = 0;
  std::map<std::string, int> by_status;
  for (const auto& c : r.candidates) {
    failed += c.status != cache::Status::kOk;
    ++by_status[cache::to_string(c.status)];
  }
  fmt::print(
      "{}: {} candidates ({} compiled, {} from cache, {} failed or rejected); compile "
      "{:.1f}s, measure {:.1f}s\n",
      r.problem_key, r.candidates.size(), r.num_compiled, r.num_cache_hits, failed,
      r.pipeline.compile_busy_s, r.pipeline.measure_busy_s);
  if (!r.predicted)
    fmt::print(
        "  wall {:.1f}s: {} measured ({} stopped early), {} compiled ahead ({} used); NVRTC "
        "{:.1f} cpu-s, benchmark setup {:.1f}s, GPU waited for compiles {:.1f}s\n",
        r.wall_s, r.num_measured, r.num_stopped_early, r.pipeline.num_speculative, r.num_ahead_used,
        r.pipeline.compile_cpu_s, r.pipeline.setup_s, r.wait_s);
  if (!r.calibration.empty()) fmt::print("  model calibrated: {}\n", r.calibration);
  std::string counts;
  for (const auto& [status, n] : by_status) counts += fmt::format(" {}={}", status, n);
  fmt::print("  run {}{}: worker restarts {}; outcomes{}\n", r.run_id,
             r.resumed ? " (resumed)" : "", r.num_worker_restarts, counts);
  for (const auto& c : r.candidates)
    if (c.status != cache::Status::kOk)
      fmt::print("  {} {}: {}\n", c.config_key, cache::to_string(c.status),
                 c.detail.substr(0, c.detail.find('\n')));
  // Memory-bound ops report bandwidth over their minimum bytes; the rest TFLOP/s.
  auto rate = [&](double us) {
    return r.summary.memory_bound ? fmt::format("{:.0f} GB/s", r.summary.min_bytes / us / 1e3)
                                  : fmt::format("{:.0f} TFLOP/s", r.summary.flops / us / 1e6);
  };
  auto line = [&](const char* title, std::size_t i) {
    const auto& c = r.candidates[i];
    if (r.predicted)
      fmt::print("  {:<10} {}  predicted {:.1f} us ({}), {} regs\n", title, c.config_key,
                 c.predicted_us, rate(c.predicted_us), c.registers);
    else
      fmt::print("  {:<10} {}  {:.1f} us +-{:.1f}% ({}; model said {:.1f} us)\n", title,
                 c.config_key, c.timing.median_us, c.timing.spread_pct(), rate(c.timing.median_us),
                 c.predicted_us);
  };
  if (r.winner) line("winner", *r.winner);
  if (r.runner_up) line("runner-up", *r.runner_up);
  if (!r.winner) fmt::print("  no candidate succeeded: nothing stored as the winner\n");
  if (r.winner_model_rank >= 0)
    fmt::print("  the model ranked the winner #{} of the measured candidates\n",
               r.winner_model_rank + 1);
}

// The text lines of a run; with --json, stdout holds only the document printed at the end
// (progress goes to stderr either way).
template <typename... Args>
void say(const TuneCliOptions& o, fmt::format_string<Args...> format, Args&&... args) {
  if (!o.json) fmt::print(format, std::forward<Args>(args)...);
}

void run(TuneCliOptions o) {
  if (auto faults = env::test_faults()) o.isolation.test_faults = tune::parse_test_faults(*faults);
  const std::vector<std::string> problems = o.problem.problem_keys();
  bool predict = o.predict;
  std::string reason;
  if (o.predict) {
    say(o,
        "Predicting (--predict): candidates are compiled and ranked by the model for "
        "device profile {}; results are stored as predicted, not measured.\n",
        o.profile);
  } else if (!rt::gpu_available(&reason)) {
    predict = true;
    say(o,
        "No GPU found ({}): predicting for device profile {} instead; candidates are "
        "compiled and ranked by the model, results stored as predicted, not measured.\n",
        reason, o.profile);
  }
  tune::TuneOptions options;
  options.search = o.search == "wide" ? tune::SearchMode::kWide : tune::SearchMode::kDefault;
  options.max_candidates = o.candidates;
  options.finalists = o.finalists;
  options.device_ordinal = o.device;
  options.seed = o.seed;
  auto suite = std::make_shared<SuitePosition>();
  suite->count = problems.size();
  options.progress = progress_printer(suite);
  options.configs = o.configs;
  options.predict_only = predict;
  options.device = device_profile(o.profile);
  options.isolation = o.isolation;
  cache::Database db = open_database(o.db);
  say(o, "database: {}\n", db.path());
  std::size_t skipped = 0;
  std::vector<std::string> json_problems;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    suite->index = i;
    suite->shape_start = std::chrono::steady_clock::now();
    if (problems.size() > 1) say(o, "problem {} of {}: {}\n", i + 1, problems.size(), problems[i]);
    if (!o.retune) {
      if (auto done = tune::find_finished(problems[i], db, options)) {
        say(o,
            "{}: skipped, finished before with these options by run {}: winner {} {:.1f} us "
            "({}); --retune tunes it again\n",
            problems[i], cache::printable(done->run.run_id),
            cache::printable(done->winner.config_key), done->winner.median_us,
            done->winner.predicted ? "predicted" : "measured");
        if (o.json) json_problems.push_back(finished_tuning_json(problems[i], *done));
        ++skipped;
        continue;
      }
    }
    const tune::TuneReport report = tune::tune_problem(problems[i], db, options);
    if (o.json)
      json_problems.push_back(tune_report_json(report));
    else
      print_report(report);
    suite->tuned_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - suite->shape_start)
            .count();
    ++suite->tuned;
  }
  if (skipped > 0)
    say(o,
        "skipped {} of {} problems finished before with these options (--retune tunes "
        "them again)\n",
        skipped, problems.size());
  if (o.json)
    fmt::print("{}\n", tune_run_json(db.path(), predict, o.profile, reason, json_problems));
}

}  // namespace

void register_tune(CLI::App& app) {
  auto o = std::make_shared<TuneCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Find the fastest config per shape on this GPU and store it (predicts without a GPU)");
  add_problem_options(*cmd, o->problem);
  add_database_option(*cmd, o->db);
  add_profile_option(*cmd, o->profile);
  cmd->add_flag("--predict", o->predict, "Rank by the model only, even with a GPU present");
  cmd->add_flag("--retune", o->retune,
                "Tune problems again that a run with the same options finished before (by "
                "default they are skipped, so a killed --suite picks up where it stopped)");
  CLI::Option* search =
      cmd->add_option("--search", o->search,
                      "default: the op's search (gemm's local rounds around the fastest shapes); "
                      "wide: one round of the model's top --candidates configs, every valid config "
                      "without --candidates: the reference a default search is judged against")
          ->check(CLI::IsMember({"default", "wide"}))
          ->capture_default_str();
  CLI::Option* candidates =
      cmd->add_option("--candidates", o->candidates,
                      "At most N candidates per problem over every round of the op's search: "
                      "no more are compiled or measured (default: no cap: gemm tries the "
                      "model's best config of 24 tile shapes, then up to 3 local rounds around "
                      "the fastest; attention its whole config space; other ops the model's "
                      "top 24)")
          ->check(CLI::Range(1, 4096));
  cmd->add_option("--finalists", o->finalists, "Candidates re-measured interleaved before the pick")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--config", o->configs,
                  "Explicit candidate config keys (repeatable): exactly these are tried")
      ->excludes(candidates)
      ->excludes(search);
  cmd->add_option("--device", o->device, "CUDA device ordinal")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the random inputs (default: fresh)");
  cmd->add_option("--candidate-timeout", o->isolation.candidate_timeout_s,
                  "Seconds a candidate may take on the GPU (at least; 50x its predicted time "
                  "when longer) before its worker is killed and it is recorded as timeout")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--compile-timeout", o->isolation.compile_timeout_s,
                  "Seconds one candidate may take to compile before it is recorded as timeout")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--retry-blocklisted", o->isolation.retry_blocklisted,
                "Also try kernels on the blocklist (ones that crashed, faulted or hung before "
                "on this device and toolkit; see `kerntune cache blocklist`)");
  cmd->add_flag("--json", o->json,
                "One JSON object on stdout at the end: database, predicted, device_profile, "
                "no_gpu_reason, problems [{problem, skipped, run_id, candidates, outcomes, "
                "failures, winner, runner_up, timing {wall_s, compile_s, ...}, ...}] (progress "
                "stays on stderr)");
  cmd->callback([o] { run(*o); });
}

}  // namespace kt::cli
