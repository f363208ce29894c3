// `kerntune bench`: the kernel the runtime dispatches from the database beside cuBLASLt, in one
// process on the same inputs, with TFLOP/s and the ratio; --csv appends rows for bench/results.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/error.hpp"
#include "ops/attention/attention_bench.hpp"
#include "ops/gemm/cublaslt_gemm.hpp"
#include "ops/gemm/gemm_bench.hpp"
#include "runtime/cuda_driver.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"

namespace kt::cli {

namespace {

struct BenchCliOptions {
  ProblemOptions problem;
  std::string db;
  bool no_baseline = false;
  int rounds = 5;
  int reps = 10;
  std::string csv;
  bool dispatch_overhead = false;
};

void run_attention(Runtime& runtime, const BenchCliOptions& o) {
  fmt::print(
      "(library baselines for attention run beside kerntune from Python: "
      "python3 python/bench_attention.py)\n");
  fmt::print("{:<46} {:<22} {:<13} {:>10} {:>9}  {}\n", "problem", "config", "grade", "us",
             "TFLOP/s", "check");
  for (const std::string& key : o.problem.problem_keys()) {
    const AttentionProblem p = parse_attention_key(key);
    const tune::AttentionBenchRow r = tune::bench_attention(runtime, p, o.reps);
    fmt::print("{:<46} {:<22} {:<13} {:>10.1f} {:>9.1f}  {}\n", to_key(p), r.dispatch.config_key,
               r.dispatch.grade, r.timing.median_us, r.tflops(),
               r.check.passed ? "ok" : "FAILED: " + r.check.detail);
  }
}

void run(const BenchCliOptions& o) {
  const std::string op = o.problem.spec().name();
  if (op != "gemm" && op != "attention")
    throw Error(ErrorKind::kUnsupported,
                fmt::format("bench times gemm beside cuBLASLt and attention alone; {} is timed "
                            "beside its baselines by bench/{}_vs_torch.py",
                            op, op));
  const bool attention = op == "attention";
  std::string reason;
  if (!rt::gpu_available(&reason))
    throw Error(ErrorKind::kUnsupported,
                fmt::format("bench measures on a GPU and there is none ({}); `kerntune explain` "
                            "predicts instead",
                            reason));
  RuntimeOptions ro;
  ro.database_path = resolve_database_path(o.db);
  auto runtime = Runtime::open(ro);
  if (attention) return run_attention(*runtime, o);
  std::vector<GemmProblem> problems;
  for (const std::string& key : o.problem.problem_keys()) problems.push_back(parse_gemm_key(key));
  if (o.dispatch_overhead) {
    fmt::print("{:<34} {:<44} {:>12} {:>12} {:>12}\n", "problem", "config", "gemm() us",
               "raw launch us", "overhead us");
    for (const GemmProblem& p : problems) {
      const auto d = tune::measure_dispatch_overhead(*runtime, p, ro.database_path);
      fmt::print("{:<34} {:<44} {:>12.3f} {:>12.3f} {:>12.3f}\n", to_key(p), d.config_key,
                 d.runtime_us, d.raw_launch_us, d.overhead_us());
    }
    return;
  }
  tune::GemmBenchOptions bo;
  bo.rounds = o.rounds;
  bo.reps_per_round = o.reps;
  bo.baseline = !o.no_baseline;
  std::ofstream csv;
  if (!o.csv.empty()) {
    const bool fresh = !std::filesystem::exists(o.csv);
    csv.open(o.csv, std::ios::app);
    if (!csv) throw Error(ErrorKind::kInvalidArgument, fmt::format("cannot write {}", o.csv));
    if (fresh)
      csv
          << ("problem,m,n,k,config,grade,kerntune_us,kerntune_spread_pct,kerntune_tflops,"
              "cublaslt_us,cublaslt_spread_pct,cublaslt_tflops,ratio,kerntune_rel_error,"
              "cublaslt_rel_error,copy_us,kerntune_tbps,cublaslt_tbps,copy_tbps,of_copy,"
              "cublaslt_algorithm\n");
  }
  fmt::print("baseline: cuBLASLt {}\n", tune::CublasLtGemm::library_path());
  // TB/s: the fewest bytes the problem moves (A and B read once, C written once) over the
  // median time; the figure of merit where the problem is memory-bound (decoding, small M).
  // "copy": the TB/s of a device-to-device copy moving the same bytes, timed alike; "of copy":
  // kerntune's share of it.
  fmt::print("{:<34} {:<44} {:<13} {:>9} {:>9} {:>8} {:>8} {:>8} {:>7} {:>7}  {}\n", "problem",
             "config", "grade", "kt TF/s", "cuBLAS", "kt TB/s", "cuBLAS", "copy", "of copy",
             "ratio", "check");
  double log_sum = 0;
  int counted = 0;
  std::vector<std::string> algorithms;
  for (const GemmProblem& p : problems) {
    const tune::GemmBenchRow r = tune::bench_gemm(*runtime, p, bo);
    std::string check = r.kerntune_check.passed ? "ok" : "FAILED: " + r.kerntune_check.detail;
    if (!r.baseline_error.empty()) check += "; baseline: " + r.baseline_error;
    auto tbps = [&](const tune::Timing& t) {
      return t.median_us > 0 ? p.min_bytes() / t.median_us / 1e6 : 0.0;
    };
    fmt::print(
        "{:<34} {:<44} {:<13} {:>9.1f} {:>9.1f} {:>8.2f} {:>8.2f} {:>8.2f} {:>6.0f}% {:>7.3f}  "
        "{}\n",
        to_key(p), r.dispatch.config_key, r.dispatch.grade, r.kerntune_tflops(),
        r.baseline_tflops(), tbps(r.kerntune), tbps(r.baseline), tbps(r.copy), 100 * r.of_copy(),
        r.ratio(), check);
    if (r.ratio() > 0) {
      log_sum += std::log(r.ratio());
      ++counted;
    }
    if (csv.is_open())
      csv << fmt::format(
          "{},{},{},{},{},{},{:.3f},{:.2f},{:.1f},{:.3f},{:.2f},{:.1f},{:.4f},{:.3g},{:.3g},"
          "{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},{}\n",
          to_key(p), p.m, p.n, p.k, r.dispatch.config_key, r.dispatch.grade, r.kerntune.median_us,
          r.kerntune.spread_pct(), r.kerntune_tflops(), r.baseline.median_us,
          r.baseline.spread_pct(), r.baseline_tflops(), r.ratio(), r.kerntune_check.relative_error,
          r.baseline_check.relative_error, r.copy.median_us, tbps(r.kerntune), tbps(r.baseline),
          tbps(r.copy), r.of_copy(), r.baseline_algorithm);
    algorithms.push_back(fmt::format("{:<34} {}", to_key(p), r.baseline_algorithm));
  }
  if (counted > 0)
    fmt::print("geometric mean ratio (cuBLASLt time / kerntune time): {:.3f}\n",
               std::exp(log_sum / counted));
  if (bo.baseline) {
    // Which kernel cuBLASLt ran: the enum values of cublasLt.h (cublasLtMatmulTile_t, ...).
    fmt::print("cuBLASLt's heuristic picks (cublasLt.h enum values):\n");
    for (const auto& line : algorithms) fmt::print("  {}\n", line);
  }
}

}  // namespace

void register_bench(CLI::App& app) {
  auto o = std::make_shared<BenchCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Time the dispatched kernel beside cuBLASLt in one process (needs a GPU)");
  add_problem_options(*cmd, o->problem);
  add_database_option(*cmd, o->db);
  cmd->add_flag("--no-baseline", o->no_baseline, "Skip cuBLASLt");
  cmd->add_option("--rounds", o->rounds, "Interleaved rounds")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--reps", o->reps, "Timed repetitions per round")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--csv", o->csv, "Append one CSV row per problem to this file");
  cmd->add_flag("--dispatch-overhead", o->dispatch_overhead,
                "Measure the host cost of Runtime::gemm on a hit versus a raw cuLaunchKernel");
  cmd->callback([o] { run(*o); });
}

}  // namespace kt::cli
