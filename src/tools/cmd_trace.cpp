// `kerntune trace`: one config's launch, phase by phase across its CTAs (for an sm90 GEMM: when
// the first load went out, when the main loop ended, how long split-K's publish, wait and reduce
// took, when C was stored; for fa3 attention: when the first tile's Q landed, its first S, its
// last P·V, its O stored, the CTA's last tile done), from the template's %globaltimer marks, and
// with --per-cta each CTA's SM and phases. The op's tuning facet runs it (OpTuning::trace); ops
// and families without marks refuse.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"
#include "tuner/op_tuning.hpp"

namespace kt::cli {

namespace {

struct TraceOptions {
  ProblemOptions problem;
  std::vector<std::string> configs;
  int reps = 30;
  bool per_cta = false;
};

// One row per traced CTA: its SM, its phases (us after the first CTA's entry; '-' where it
// stamped none) and its SM's clock, the placement behind the summary's spreads.
void print_per_cta(const tune::KernelTrace& t) {
  const bool units = std::any_of(t.ctas.begin(), t.ctas.end(),
                                 [](const tune::KernelTraceCta& cta) { return cta.units >= 0; });
  std::string head = fmt::format("  {:>5} {:>5}", "cta", "sm");
  for (const std::string& label : t.event_labels) head += fmt::format(" {:>8}", label);
  fmt::print("{} {:>8}{}\n", head, "MHz", units ? fmt::format(" {:>6}", "tiles") : "");
  for (const tune::KernelTraceCta& cta : t.ctas) {
    std::string row = fmt::format("  {:>5} {:>5}", cta.cta, cta.sm);
    for (const double us : cta.us)
      row += us >= 0 ? fmt::format(" {:>8.2f}", us) : fmt::format(" {:>8}", "-");
    row += cta.sm_mhz > 0 ? fmt::format(" {:>8.0f}", cta.sm_mhz) : fmt::format(" {:>8}", "-");
    if (units) row += fmt::format(" {:>6}", cta.units);
    fmt::print("{}\n", row);
  }
}

void run(const TraceOptions& o) {
  for (const std::string& problem_key : o.problem.problem_keys())
    for (const std::string& key : o.configs)
      OpRegistry::instance().by_key(problem_key).tuning->check_traceable(problem_key, key);
  std::string reason;
  if (!rt::gpu_available(&reason))
    throw Error(ErrorKind::kUnsupported,
                fmt::format("trace runs the kernel on a GPU and there is none ({})", reason));
  // The traced kernel is compiled here and never stored: no database, only a context.
  const rt::BoundContext context(0);
  const rt::ScopedCurrent current(context.context());
  for (const std::string& problem_key : o.problem.problem_keys())
    for (const std::string& key : o.configs) {
      const tune::KernelTrace t =
          OpRegistry::instance().by_key(problem_key).tuning->trace(problem_key, key, o.reps);
      fmt::print(
          "{} {}: {} CTAs, launch {:.2f} us median ({:.2f} min, flush before each), "
          "check {}\n",
          problem_key, key, t.grid, t.median_us, t.min_us,
          t.check_passed ? "ok" : "FAILED: " + t.check_detail);
      fmt::print(
          "  {:<18} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8}   (us after the first CTA's entry)\n",
          "phase", "CTAs", "min", "p10", "median", "p90", "max");
      for (const auto& ph : t.phases)
        fmt::print("  {:<18} {:>5} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f}\n", ph.name,
                   ph.ctas, ph.min_us, ph.p10_us, ph.median_us, ph.p90_us, ph.max_us);
      if (t.sm_mhz_median > 0)
        fmt::print(
            "  SM clock, entry to main loop done: {:.0f} MHz median ({:.0f} p10, {:.0f} p90)\n",
            t.sm_mhz_median, t.sm_mhz_p10, t.sm_mhz_p90);
      if (o.per_cta) print_per_cta(t);
    }
}

}  // namespace

void register_trace(CLI::App& app) {
  auto o = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "trace",
      "Where one kernel launch spends its time, phase by phase across its CTAs (sm90 GEMM and "
      "fa3 attention configs; needs a GPU)");
  add_problem_options(*cmd, o->problem);
  cmd->add_option("--config", o->configs, "sm90 GEMM or fa3 attention config key (repeatable)")
      ->required();
  cmd->add_option("--reps", o->reps, "Timed launches (the trace is the last one's)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_flag("--per-cta", o->per_cta,
                "Also print each traced CTA's SM and phases (where the launch placed it)");
  cmd->footer(
      "Examples:\n"
      "  kerntune trace --shape 512x512x32768 --config sm90.bm128.bn128.bk64.s5.c2.e0.cl1.g8.sk8\n"
      "  kerntune trace --op attention --shape b=32,h=16,s=512,d=128 --causal \\\n"
      "      --config fa3.bm128.bn128.s2.pp\n"
      "The config is compiled with -DKT_TRACE (marks that are compiled out of every tuned and\n"
      "served kernel), checked on fresh random data, launched --reps times after an L2 flush,\n"
      "and the last launch's per-CTA timestamps are summarized (a persistent attention CTA's\n"
      "phases are its first tile's), with the clock the SMs ran at from entry to main loop done\n"
      "(%clock64 over %globaltimer: on the H200 compute-bound kernels run at 1.4-1.7 GHz under\n"
      "their power limit, below the nominal 1.98). --per-cta\n"
      "lists them with each CTA's SM: CTAs b and b + 1 of a plain launch share a TPC, a cluster\n"
      "launch packs consecutive clusters into one GPC (bench/NOTES.md, \"Where cluster pairs\n"
      "lose\").");
  cmd->callback([o] { run(*o); });
}

}  // namespace kt::cli
