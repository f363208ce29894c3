// The --json documents of `tune` and `bench` (tools/json_reports.hpp), built from results made
// here, since measuring needs a GPU: python3's json parses each, every field of the schema is
// there, failures' text is escaped, and what was not measured is null.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "support/cli_runner.hpp"
#include "support/file_bytes.hpp"
#include "support/scratch_dir.hpp"
#include "tools/json_reports.hpp"

namespace kt::testing {
namespace {

using cli::bench_row_json;
using cli::bench_run_json;
using cli::dispatch_overhead_json;
using cli::finished_tuning_json;
using cli::tune_report_json;
using cli::tune_run_json;

// `expression` of the JSON document `json` (as `d`), printed by python3.
std::string python_of(const std::string& json, const std::string& expression) {
  ScratchDir dir;
  write_file_bytes(dir.file("d.json"), json);
  const CliResult r = run_shell(
      "python3 -c " +
      shell_quote("import json, sys; d = json.load(sys.stdin); print(" + expression + ")") + " <" +
      shell_quote(dir.file("d.json")));
  EXPECT_EQ(r.status, 0) << json << "\n" << r.output;
  return r.output;
}

tune::Candidate candidate(const std::string& config, double median_us, double predicted_us) {
  tune::Candidate c;
  c.config_key = config;
  c.predicted_us = predicted_us;
  c.timing = tune::summarize({median_us * 0.99, median_us, median_us * 1.01});
  c.registers = 128;
  return c;
}

tune::TuneReport measured_report() {
  tune::TuneReport r;
  r.op = "gemm";
  r.problem_key = "gemm:bf16:bf16:nt:4096x4096x4096";
  r.summary = {2.0 * 4096 * 4096 * 4096, 3.0 * 4096 * 4096 * 2, false};
  r.device_fingerprint = "NVIDIA H200/cc90/132sm";
  r.run_id = "run-1";
  r.candidates = {candidate("sm90.a", 200, 190), candidate("sm90.b", 210, 180),
                  candidate("sm90.c", 0, 170)};
  r.candidates[2].status = cache::Status::kIllegalAddress;
  r.candidates[2].detail = "CUDA_ERROR_ILLEGAL_ADDRESS\n\"at\" \x01 line 2";
  r.winner = 0;
  r.runner_up = 1;
  r.num_compiled = 2;
  r.num_cache_hits = 1;
  r.winner_model_rank = 1;
  r.resumed = true;
  return r;
}

TEST(CliJsonReports, TuneReportOfAMeasuredRunHasEveryField) {
  const std::string json = tune_report_json(measured_report());
  EXPECT_EQ(python_of(json,
                      "d['problem'], d['skipped'], d['run_id'], d['resumed'], d['predicted'], "
                      "d['candidates'], d['compiled'], d['cache_hits'], d['failed'], "
                      "d['outcomes'], d['winner_model_rank'], d['device']"),
            "gemm:bf16:bf16:nt:4096x4096x4096 False run-1 True False 3 2 1 1 "
            "{'illegal_address': 1, 'ok': 2} 2 NVIDIA H200/cc90/132sm\n");
  EXPECT_EQ(python_of(json,
                      "d['winner']['config'], d['winner']['us'], d['winner']['predicted'], "
                      "d['winner']['predicted_us'], round(d['winner']['tflops'], 1), "
                      "d['winner']['spread_pct'] > 0, d['runner_up']['config'], "
                      "d['failures'][0]['status'], "
                      "d['failures'][0]['detail'] == 'CUDA_ERROR_ILLEGAL_ADDRESS\\n\"at\" "
                      "\\x01 line 2'"),
            "sm90.a 200 False 190 687.2 True sm90.b illegal_address True\n");
}

TEST(CliJsonReports, TuneReportSaysWhereTheTimeWentAndHowTheModelWasCalibrated) {
  tune::TuneReport r = measured_report();
  r.wall_s = 4.5;
  r.pipeline.compile_busy_s = 3.25;
  r.pipeline.compile_cpu_s = 40;
  r.pipeline.measure_busy_s = 1.5;
  r.pipeline.setup_s = 0.75;
  r.wait_s = 0.5;
  r.num_measured = 60;
  r.num_stopped_early = 41;
  r.pipeline.num_speculative = 12;
  r.num_ahead_used = 9;
  r.calibration = "sm90 x0.980 (200 rows, 8 problems)";
  EXPECT_EQ(python_of(tune_report_json(r),
                      "*[d['timing'][k] for k in ('wall_s', 'compile_s', 'compile_cpu_s', "
                      "'measure_s', 'setup_s', 'wait_s', 'measured', 'stopped_early', "
                      "'compiled_ahead', 'ahead_used')], d['calibration']"),
            "4.5 3.25 40 1.5 0.75 0.5 60 41 12 9 sm90 x0.980 (200 rows, 8 problems)\n");
}

TEST(CliJsonReports, TuneReportOfAPredictedRunHasNoSpreadAndNoWinnerIsNull) {
  tune::TuneReport r = measured_report();
  r.predicted = true;
  r.winner_model_rank = -1;
  EXPECT_EQ(python_of(tune_report_json(r),
                      "d['predicted'], d['winner']['us'], d['winner']['spread_pct'], "
                      "d['winner_model_rank']"),
            "True 190 None None\n");
  r.winner.reset();
  r.runner_up.reset();
  EXPECT_EQ(python_of(tune_report_json(r), "d['winner'], d['runner_up']"), "None None\n");
}

TEST(CliJsonReports, TuneRunHoldsTunedAndSkippedProblems) {
  tune::FinishedTuning done;
  done.run.run_id = "run-0";
  done.winner.config_key = "sm90.z";
  done.winner.median_us = 99.5;
  const std::string skipped = finished_tuning_json("gemm:bf16:bf16:nt:64x64x64", done);
  EXPECT_EQ(python_of(tune_run_json("/db/k.db", false, "h200", "",
                                    {tune_report_json(measured_report()), skipped}),
                      "d['database'], d['predicted'], d['device_profile'], d['no_gpu_reason'], "
                      "[p['skipped'] for p in d['problems']], d['problems'][1]['winner']"),
            "/db/k.db False None None [False, True] {'config': 'sm90.z', 'us': 99.5, "
            "'predicted': False}\n");
  EXPECT_EQ(python_of(tune_run_json("/db/k.db", true, "a100", "no CUDA driver", {}),
                      "d['predicted'], d['device_profile'], d['no_gpu_reason'], d['problems']"),
            "True a100 no CUDA driver []\n");
}

tune::OpBenchRow bench_row(bool with_baseline) {
  tune::OpBenchRow r;
  r.dispatch.config_key = "sm90.a";
  r.dispatch.grade = "exact";
  r.dispatch.tuned_problem_key = "gemm:bf16:bf16:nt:4096x4096x4096";
  r.dispatch.predicted = false;
  r.kerntune = tune::summarize({100, 100, 100});
  r.check.passed = true;
  r.check.relative_error = 1e-3;
  r.check.tolerance = 2e-2;
  r.copy = tune::summarize({50, 50, 50});
  if (with_baseline) {
    r.baseline_name = "cuBLASLt";
    r.baseline = tune::summarize({110, 110, 110});
    r.baseline_check.passed = false;
    r.baseline_check.detail = "nan at (0, 0)";
    r.baseline_detail = "algo 6, tile 128x256";
  } else {
    r.baseline_error = "libcublasLt.so not found";
  }
  return r;
}

TEST(CliJsonReports, BenchRowsCarryTimingsChecksAndTheRatio) {
  const ProblemSummary s{2e9, 1e8, false};
  const std::string json = bench_run_json(
      "/db/k.db",
      {bench_row_json("gemm:a", s, bench_row(true)), bench_row_json("gemm:b", s, bench_row(false))},
      1.1, {"libcublasLt.so not found"});
  EXPECT_EQ(python_of(json,
                      "d['database'], d['geomean_ratio'], d['notes'], "
                      "[(p['problem'], p['config'], p['grade'], p['predicted']) for p in "
                      "d['problems']]"),
            "/db/k.db 1.1 ['libcublasLt.so not found'] [('gemm:a', 'sm90.a', 'exact', False), "
            "('gemm:b', 'sm90.a', 'exact', False)]\n");
  EXPECT_EQ(python_of(json,
                      "[d['problems'][0][k] for k in ('kerntune', 'check')], "
                      "d['problems'][0]['baseline']['name'], "
                      "d['problems'][0]['baseline']['timing']['median_us'], "
                      "d['problems'][0]['baseline']['check']['detail'], "
                      "round(d['problems'][0]['ratio'], 3), d['problems'][0]['of_copy'], "
                      "d['problems'][0]['baseline_detail'], d['problems'][0]['tuned_problem']"),
            "[{'median_us': 100, 'spread_pct': 0, 'num_reps': 3, 'tflops': 20, 'tb_per_s': 1}, "
            "{'passed': True, 'relative_error': 0.001, 'tolerance': 0.02, 'detail': ''}] cuBLASLt "
            "110 nan at (0, 0) 1.1 0.5 algo 6, tile 128x256 gemm:bf16:bf16:nt:4096x4096x4096\n");
  EXPECT_EQ(python_of(json,
                      "d['problems'][1]['baseline'], d['problems'][1]['ratio'], "
                      "d['problems'][1]['baseline_error']"),
            "None None libcublasLt.so not found\n");
  EXPECT_EQ(python_of(bench_run_json("/db/k.db", {}, 0, {}), "d['geomean_ratio'], d['problems']"),
            "None []\n");
}

TEST(CliJsonReports, DispatchOverheadRowsParse) {
  tune::DispatchOverhead d;
  d.config_key = "sm90.a";
  d.runtime_us = 2.5;
  d.raw_launch_us = 2.0;
  EXPECT_EQ(python_of(dispatch_overhead_json("/db/k.db", {"gemm:a"}, {d}),
                      "d['problems'][0]['problem'], d['problems'][0]['overhead_us']"),
            "gemm:a 0.5\n");
}

}  // namespace
}  // namespace kt::testing
