// The --json documents of the commands that need a GPU to run (`tune` measuring, `bench`), as
// functions over their results, so that a test without a GPU can build and parse them. Each
// returns one JSON value (no newline); its schema is stated at its declaration.
#pragma once

#include <string>
#include <vector>

#include "core/op_spec.hpp"
#include "tuner/op_bench.hpp"
#include "tuner/problem_tuner.hpp"

namespace kt::cli {

// A problem `tune` tuned: {"problem", "skipped": false, "run_id", "resumed", "device",
// "predicted", "candidates", "compiled", "cache_hits", "failed", "compile_s", "measure_s",
// "worker_restarts", "outcomes": {status: count}, "failures": [{"config", "status", "detail"}],
// "winner" and "runner_up": a candidate or null, "winner_model_rank": 1-based or null,
// "timing": {"wall_s", "compile_s", "compile_cpu_s", "measure_s", "setup_s", "wait_s",
// "measured", "stopped_early", "compiled_ahead", "ahead_used"} (TuneReport's fields),
// "calibration": the model's family factors in words, "" when uncalibrated}. A
// candidate: {"config", "us" (the measured median, or the model's time when predicted),
// "predicted", "predicted_us", "spread_pct" (null when predicted), "registers", "spill_bytes",
// "tflops", "gb_per_s" (at "us")}.
std::string tune_report_json(const tune::TuneReport& report);

// A problem `tune` skipped, finished before with the same options: {"problem", "skipped": true,
// "run_id", "winner": {"config", "us", "predicted"}}.
std::string finished_tuning_json(const std::string& problem_key,
                                 const tune::FinishedTuning& finished);

// `tune --json`: {"database", "predicted", "device_profile" (the profile predicted for; null
// when measuring), "no_gpu_reason" (why predicting without --predict; null otherwise),
// "problems": [the entries above, in the order tuned]}.
std::string tune_run_json(const std::string& database, bool predicted,
                          const std::string& device_profile, const std::string& no_gpu_reason,
                          const std::vector<std::string>& problems);

// One problem `bench` measured: {"problem", "config", "grade", "tuned_problem", "predicted",
// "kerntune": timing, "check": check, "baseline": {"name", "timing", "check"} or null (none
// ran), "baseline_error", "baseline_detail", "copy": timing, "ratio" (baseline time / kerntune
// time; null without a baseline), "of_copy" (copy time / kerntune time; null without one)}. A
// timing:
// {"median_us", "spread_pct", "num_reps", "tflops", "tb_per_s"} (the rates of the problem's
// FLOPs and minimum bytes); a check: {"passed", "relative_error", "tolerance", "detail"}.
std::string bench_row_json(const std::string& problem_key, const ProblemSummary& summary,
                           const tune::OpBenchRow& row);

// `bench --json`: {"database", "problems": [the rows above], "geomean_ratio" (over the rows with
// a baseline; null when none), "notes": [why a baseline did not run]}.
std::string bench_run_json(const std::string& database, const std::vector<std::string>& rows,
                           double geomean_ratio, const std::vector<std::string>& notes);

// `bench --dispatch-overhead --json`: {"database", "problems": [{"problem", "config",
// "runtime_us", "raw_launch_us", "overhead_us"}]}.
std::string dispatch_overhead_json(const std::string& database,
                                   const std::vector<std::string>& problem_keys,
                                   const std::vector<tune::DispatchOverhead>& overheads);

}  // namespace kt::cli
