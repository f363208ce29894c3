// The --json documents of `tune` and `bench`, composed from json_text's strings and numbers.
#include "tools/json_reports.hpp"

#include <fmt/format.h>

#include <map>

#include "tools/json_text.hpp"

namespace kt::cli {

namespace {

const char* json_bool(bool value) { return value ? "true" : "false"; }

// A JSON array of values already in JSON.
std::string json_array(const std::vector<std::string>& values) {
  return fmt::format("[{}]", fmt::join(values, ", "));
}

std::string candidate_json(const tune::TuneReport& r, const tune::Candidate& c) {
  const double us = r.predicted ? c.predicted_us : c.timing.median_us;
  return fmt::format(
      "{{\"config\": {}, \"us\": {}, \"predicted\": {}, \"predicted_us\": {}, \"spread_pct\": {}, "
      "\"registers\": {}, \"spill_bytes\": {}, \"tflops\": {}, \"gb_per_s\": {}}}",
      json_string(c.config_key), json_number(us), json_bool(r.predicted),
      json_number(c.predicted_us), r.predicted ? "null" : json_number(c.timing.spread_pct()),
      c.registers, c.spill_bytes, json_number(r.summary.flops / us / 1e6),
      json_number(r.summary.min_bytes / us / 1e3));
}

std::string timing_json(const ProblemSummary& s, const tune::Timing& t) {
  return fmt::format(
      "{{\"median_us\": {}, \"spread_pct\": {}, \"num_reps\": {}, \"tflops\": {}, \"tb_per_s\": "
      "{}}}",
      json_number(t.median_us), json_number(t.spread_pct()), t.num_reps,
      json_number(t.median_us > 0 ? s.flops / t.median_us / 1e6 : 0),
      json_number(t.median_us > 0 ? s.min_bytes / t.median_us / 1e6 : 0));
}

std::string check_json(const tune::OutputCheck& c) {
  return fmt::format(
      "{{\"passed\": {}, \"relative_error\": {}, \"tolerance\": {}, \"detail\": {}}}",
      json_bool(c.passed), json_number(c.relative_error), json_number(c.tolerance),
      json_string(c.detail));
}

// Where a tuning's time went (TuneReport's fields of the same names).
std::string tune_timing_json(const tune::TuneReport& r) {
  return fmt::format(
      "{{\"wall_s\": {}, \"compile_s\": {}, \"compile_cpu_s\": {}, \"measure_s\": {}, "
      "\"setup_s\": {}, \"wait_s\": {}, \"measured\": {}, \"stopped_early\": {}, "
      "\"compiled_ahead\": {}, \"ahead_used\": {}}}",
      json_number(r.wall_s), json_number(r.pipeline.compile_busy_s),
      json_number(r.pipeline.compile_cpu_s), json_number(r.pipeline.measure_busy_s),
      json_number(r.pipeline.setup_s), json_number(r.wait_s), r.num_measured, r.num_stopped_early,
      r.pipeline.num_speculative, r.num_ahead_used);
}

}  // namespace

std::string tune_report_json(const tune::TuneReport& r) {
  int failed = 0;
  std::map<std::string, int> by_status;
  std::vector<std::string> failures;
  for (const tune::Candidate& c : r.candidates) {
    ++by_status[cache::to_string(c.status)];
    if (c.status == cache::Status::kOk) continue;
    ++failed;
    failures.push_back(fmt::format("{{\"config\": {}, \"status\": {}, \"detail\": {}}}",
                                   json_string(c.config_key),
                                   json_string(cache::to_string(c.status)), json_string(c.detail)));
  }
  std::vector<std::string> outcomes;
  for (const auto& [status, n] : by_status)
    outcomes.push_back(fmt::format("{}: {}", json_string(status), n));
  auto pick = [&](const std::optional<std::size_t>& i) {
    return i ? candidate_json(r, r.candidates.at(*i)) : std::string("null");
  };
  return fmt::format(
      "{{\"problem\": {}, \"skipped\": false, \"run_id\": {}, \"resumed\": {}, \"device\": {}, "
      "\"predicted\": {}, \"candidates\": {}, \"compiled\": {}, \"cache_hits\": {}, \"failed\": "
      "{}, \"compile_s\": {}, \"measure_s\": {}, \"worker_restarts\": {}, \"outcomes\": {{{}}}, "
      "\"failures\": {}, \"winner\": {}, \"runner_up\": {}, \"winner_model_rank\": {}, "
      "\"timing\": {}, \"calibration\": {}}}",
      json_string(r.problem_key), json_string(r.run_id), json_bool(r.resumed),
      json_string(r.device_fingerprint), json_bool(r.predicted), r.candidates.size(),
      r.num_compiled, r.num_cache_hits, failed, json_number(r.pipeline.compile_busy_s),
      json_number(r.pipeline.measure_busy_s), r.num_worker_restarts, fmt::join(outcomes, ", "),
      json_array(failures), pick(r.winner), pick(r.runner_up),
      r.winner_model_rank >= 0 ? std::to_string(r.winner_model_rank + 1) : "null",
      tune_timing_json(r), json_string(r.calibration));
}

std::string finished_tuning_json(const std::string& problem_key,
                                 const tune::FinishedTuning& finished) {
  return fmt::format(
      "{{\"problem\": {}, \"skipped\": true, \"run_id\": {}, \"winner\": {{\"config\": {}, "
      "\"us\": {}, \"predicted\": {}}}}}",
      json_string(problem_key), json_string(finished.run.run_id),
      json_string(finished.winner.config_key), json_number(finished.winner.median_us),
      json_bool(finished.winner.predicted));
}

std::string tune_run_json(const std::string& database, bool predicted,
                          const std::string& device_profile, const std::string& no_gpu_reason,
                          const std::vector<std::string>& problems) {
  return fmt::format(
      "{{\"database\": {}, \"predicted\": {}, \"device_profile\": {}, \"no_gpu_reason\": {}, "
      "\"problems\": {}}}",
      json_string(database), json_bool(predicted), predicted ? json_string(device_profile) : "null",
      no_gpu_reason.empty() ? "null" : json_string(no_gpu_reason), json_array(problems));
}

std::string bench_row_json(const std::string& problem_key, const ProblemSummary& s,
                           const tune::OpBenchRow& r) {
  const std::string baseline =
      r.baseline.num_reps > 0
          ? fmt::format("{{\"name\": {}, \"timing\": {}, \"check\": {}}}",
                        json_string(r.baseline_name), timing_json(s, r.baseline),
                        check_json(r.baseline_check))
          : "null";
  return fmt::format(
      "{{\"problem\": {}, \"config\": {}, \"grade\": {}, \"tuned_problem\": {}, \"predicted\": {}, "
      "\"kerntune\": {}, \"check\": {}, \"baseline\": {}, \"baseline_error\": {}, "
      "\"baseline_detail\": {}, \"copy\": {}, \"ratio\": {}, \"of_copy\": {}}}",
      json_string(problem_key), json_string(r.dispatch.config_key), json_string(r.dispatch.grade),
      json_string(r.dispatch.tuned_problem_key), json_bool(r.dispatch.predicted),
      timing_json(s, r.kerntune), check_json(r.check), baseline, json_string(r.baseline_error),
      json_string(r.baseline_detail), timing_json(s, r.copy),
      r.ratio() > 0 ? json_number(r.ratio()) : "null",
      r.of_copy() > 0 ? json_number(r.of_copy()) : "null");
}

std::string bench_run_json(const std::string& database, const std::vector<std::string>& rows,
                           double geomean_ratio, const std::vector<std::string>& notes) {
  std::vector<std::string> quoted;
  for (const std::string& note : notes) quoted.push_back(json_string(note));
  return fmt::format("{{\"database\": {}, \"problems\": {}, \"geomean_ratio\": {}, \"notes\": {}}}",
                     json_string(database), json_array(rows),
                     geomean_ratio > 0 ? json_number(geomean_ratio) : "null", json_array(quoted));
}

std::string dispatch_overhead_json(const std::string& database,
                                   const std::vector<std::string>& problem_keys,
                                   const std::vector<tune::DispatchOverhead>& overheads) {
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < problem_keys.size() && i < overheads.size(); ++i) {
    const tune::DispatchOverhead& d = overheads[i];
    rows.push_back(fmt::format(
        "{{\"problem\": {}, \"config\": {}, \"runtime_us\": {}, \"raw_launch_us\": {}, "
        "\"overhead_us\": {}}}",
        json_string(problem_keys[i]), json_string(d.config_key), json_number(d.runtime_us),
        json_number(d.raw_launch_us), json_number(d.overhead_us())));
  }
  return fmt::format("{{\"database\": {}, \"problems\": {}}}", json_string(database),
                     json_array(rows));
}

}  // namespace kt::cli
