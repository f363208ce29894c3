// `kerntune bench`: the kernel the runtime dispatches from the database beside the op's library
// baseline (cuBLASLt for GEMM) and a copy of the same bytes, in one process on the same inputs,
// with TFLOP/s, TB/s and the ratios; --csv appends rows for bench/results. Each op's harness is
// its tuning facet's bench() (tuner/op_tuning.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "runtime/cuda_driver.hpp"
#include "tools/bench_csv.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"
#include "tools/json_reports.hpp"
#include "tuner/op_tuning.hpp"

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
  bool json = false;
  int benchmark = -1;  // RuntimeOptions::benchmark_candidates
};

// Throws unless rows can go to `path`: a new file, or one that starts with kBenchCsvHeader, so rows
// are never mixed into a file of another kind.
void check_csv_target(const std::string& path) {
  if (!std::filesystem::exists(path)) return;
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  if (first != kBenchCsvHeader)
    throw_invalid(
        fmt::format("--csv {} exists and is not a `kerntune bench` CSV (its first line differs "
                    "from this version's header); name a new file, or remove this one",
                    path));
}

std::ofstream open_csv(const std::string& path) {
  const bool exists = std::filesystem::exists(path);
  std::ofstream csv(path, std::ios::app);
  if (!csv) throw_invalid(fmt::format("cannot write --csv {}", path));
  if (!exists) csv << kBenchCsvHeader << '\n';
  return csv;
}

// Per microsecond -> per second, in units of 10^12.
double rate(double amount, const tune::Timing& t) {
  return t.median_us > 0 ? amount / t.median_us / 1e6 : 0.0;
}

std::string csv_field(std::string text) {
  for (char& c : text)
    if (c == ',' || c == '\n') c = ';';
  return text;
}

void run_dispatch_overhead(Runtime& runtime, const std::vector<std::string>& keys,
                           const std::string& database_path, bool json) {
  std::vector<tune::DispatchOverhead> overheads;
  for (const std::string& key : keys)
    overheads.push_back(
        OpRegistry::instance().by_key(key).tuning->dispatch_overhead(runtime, key, database_path));
  if (json) {
    fmt::print("{}\n", dispatch_overhead_json(database_path, keys, overheads));
    return;
  }
  fmt::print("{:<34} {:<44} {:>12} {:>12} {:>12}\n", "problem", "config", "runtime us",
             "raw launch us", "overhead us");
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const tune::DispatchOverhead& d = overheads[i];
    fmt::print("{:<34} {:<44} {:>12.3f} {:>12.3f} {:>12.3f}\n", keys[i], d.config_key, d.runtime_us,
               d.raw_launch_us, d.overhead_us());
  }
}

void run(const BenchCliOptions& o) {
  const std::vector<std::string> keys = o.problem.problem_keys();
  if (!o.csv.empty()) check_csv_target(o.csv);
  std::string reason;
  if (!rt::gpu_available(&reason))
    throw Error(ErrorKind::kUnsupported,
                fmt::format("bench measures on a GPU and there is none ({}); `kerntune explain` "
                            "predicts instead",
                            reason));
  std::ofstream csv;
  if (!o.csv.empty()) csv = open_csv(o.csv);
  // Read-only, as the runtime serves a shipped database: bench never creates, migrates or writes
  // it (a kernel whose cubin is not stored is compiled for this run only).
  RuntimeOptions ro;
  ro.database_path = resolve_database_path(o.db);
  ro.read_only = true;
  ro.benchmark_candidates = o.benchmark;
  auto runtime = Runtime::open(ro);
  if (o.dispatch_overhead) return run_dispatch_overhead(*runtime, keys, ro.database_path, o.json);

  tune::OpBenchOptions bo;
  bo.rounds = o.rounds;
  bo.reps_per_round = o.reps;
  bo.baseline = !o.no_baseline;
  // TB/s: the fewest bytes the problem moves (inputs read once, outputs written once) over the
  // median time; "copy": a device-to-device copy of those bytes timed alike; "of copy":
  // kerntune's share of its bandwidth. "ratio": the baseline's time over kerntune's.
  std::size_t width = 34;  // the problem column fits every key
  for (const std::string& key : keys) width = std::max(width, key.size());
  if (!o.json)
    fmt::print("{:<{}} {:<44} {:<13} {:>9} {:>9} {:>8} {:>8} {:>8} {:>7} {:>7}  {}\n", "problem",
               width, "config", "grade", "kt TF/s", "base", "kt TB/s", "base", "copy", "of copy",
               "ratio", "check");
  double log_sum = 0;
  int counted = 0;
  std::vector<std::string> details, json_rows;
  std::set<std::string> notes;
  for (const std::string& key : keys) {
    const OpEntry& op = OpRegistry::instance().by_key(key);
    const ProblemSummary s = op.spec->summarize(key);
    const tune::OpBenchRow r = op.tuning->bench(*runtime, key, bo);
    std::string check = r.check.passed ? "ok" : "FAILED: " + r.check.detail;
    if (r.baseline.num_reps > 0 && !r.baseline_check.passed)
      check += "; " + r.baseline_name + " FAILED: " + r.baseline_check.detail;
    if (!r.baseline_error.empty()) notes.insert(r.baseline_error);
    if (o.json)
      json_rows.push_back(bench_row_json(key, s, r));
    else
      fmt::print(
          "{:<{}} {:<44} {:<13} {:>9.1f} {:>9.1f} {:>8.2f} {:>8.2f} {:>8.2f} {:>6.0f}% {:>7.3f}  "
          "{}\n",
          key, width, r.dispatch.config_key, r.dispatch.grade, rate(s.flops, r.kerntune),
          rate(s.flops, r.baseline), rate(s.min_bytes, r.kerntune), rate(s.min_bytes, r.baseline),
          rate(s.min_bytes, r.copy), 100 * r.of_copy(), r.ratio(), check);
    if (r.ratio() > 0) {
      log_sum += std::log(r.ratio());
      ++counted;
    }
    if (csv.is_open())
      csv << fmt::format(
          "{},{},{},{:.3f},{:.2f},{:.1f},{:.3f},{},{:.3f},{:.2f},{:.1f},{:.3f},{:.4f},{:.3g},"
          "{:.3g},{:.3f},{:.3f},{:.4f},{}\n",
          key, r.dispatch.config_key, r.dispatch.grade, r.kerntune.median_us,
          r.kerntune.spread_pct(), rate(s.flops, r.kerntune), rate(s.min_bytes, r.kerntune),
          r.baseline_name, r.baseline.median_us, r.baseline.spread_pct(), rate(s.flops, r.baseline),
          rate(s.min_bytes, r.baseline), r.ratio(), r.check.relative_error,
          r.baseline_check.relative_error, r.copy.median_us, rate(s.min_bytes, r.copy), r.of_copy(),
          csv_field(r.baseline_detail));
    if (!r.baseline_detail.empty())
      details.push_back(
          fmt::format("{:<{}} {}: {}", key, width, r.baseline_name, r.baseline_detail));
  }
  const double geomean = counted > 0 ? std::exp(log_sum / counted) : 0;
  if (o.json) {
    fmt::print("{}\n",
               bench_run_json(ro.database_path, json_rows, geomean, {notes.begin(), notes.end()}));
    return;
  }
  if (counted > 0)
    fmt::print("geometric mean ratio (baseline time / kerntune time): {:.3f}\n", geomean);
  for (const std::string& note : notes) fmt::print("baseline: {}\n", note);
  if (!details.empty()) {
    // Which kernel the library ran (for cuBLASLt: cublasLt.h's enum values).
    fmt::print("the baselines' picks:\n");
    for (const auto& line : details) fmt::print("  {}\n", line);
  }
}

}  // namespace

void register_bench(CLI::App& app) {
  auto o = std::make_shared<BenchCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Time the dispatched kernel beside the op's library and a same-bytes copy (needs a GPU)");
  add_problem_options(*cmd, o->problem);
  add_database_option(*cmd, o->db);
  cmd->add_flag("--no-baseline", o->no_baseline, "Skip the library baseline (cuBLASLt for gemm)");
  cmd->add_option("--rounds", o->rounds, "Interleaved rounds")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--reps", o->reps, "Timed repetitions per round")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--csv", o->csv,
                  "Append one CSV row per problem to this file (a new file, or one this command "
                  "wrote; any other existing file is refused)");
  add_benchmark_option(*cmd, o->benchmark,
                       "Serve each problem in benchmark mode, timing this many configs; 0: off "
                       "(default: $KERNTUNE_BENCHMARK, else off)");
  cmd->add_flag("--dispatch-overhead", o->dispatch_overhead,
                "Measure the host cost of the runtime's launch on a hit versus a raw "
                "cuLaunchKernel (gemm)");
  cmd->add_flag("--json", o->json,
                "One JSON object: database, problems [{problem, config, grade, kerntune, check, "
                "baseline, copy, ratio, of_copy, ...}], geomean_ratio, notes");
  cmd->footer(
      "Examples:\n"
      "  kerntune bench --shape 4096x4096x4096               # beside cuBLASLt\n"
      "  kerntune bench --suite decode --csv decode.csv      # and a copy of the same bytes\n"
      "  kerntune bench --op attention --shape b=4,h=16,s=4096,d=128 --causal\n"
      "The kernel is the one the runtime would serve from the database (see `grade`: tuned,\n"
      "nearest or model); every output is checked against a reference on fresh random data.");
  cmd->callback([o] { run(*o); });
}

}  // namespace kt::cli
