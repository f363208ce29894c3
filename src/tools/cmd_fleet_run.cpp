// `kerntune fleet run`: tunes one shard of a manifest into its database: resumable (the same
// command continues a shard stopped at any moment), a progress line per item with the shard's
// ETA, one tuning worker per --devices entry, predicted winners without a GPU.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cache/row_checks.hpp"
#include "core/env.hpp"
#include "core/manifest.hpp"
#include "fleet/shard_run.hpp"
#include "tools/fleet_commands.hpp"
#include "tools/json_text.hpp"
#include "tuner/test_faults.hpp"

namespace kt::cli {

namespace {

struct RunOptions {
  std::string manifest;
  std::string shard = "1/1";
  std::string db;
  std::string out = ".";
  std::vector<int> devices;
  bool predict = false;
  tune::IsolationOptions isolation;
  bool json = false;
};

std::string eta_text(double eta_s) {
  return eta_s < 0 ? std::string("ETA ?") : fmt::format("ETA {:.0f}s", eta_s);
}

// One progress line on stderr per item event.
void print_event(const fleet::Shard& shard, const fleet::ItemEvent& e) {
  const std::string head = fmt::format("[shard {} | {}/{} items | {}]", shard.text(), e.done,
                                       e.total, eta_text(e.eta_s));
  const std::string what =
      fmt::format("{} on {}", e.item.problem_key, e.item.key.device_fingerprint);
  switch (e.kind) {
    case fleet::ItemEvent::Kind::kStarted:
      fmt::print(stderr, "{} tuning {} (worker {}, {})\n", head, what, e.worker,
                 e.measured ? "measuring" : "predicting");
      break;
    case fleet::ItemEvent::Kind::kSkipped:
      fmt::print(stderr, "{} {}: done before, winner {} {:.1f} us\n", head, what,
                 cache::printable(e.config_key), e.winner_us);
      break;
    case fleet::ItemEvent::Kind::kTuned:
      fmt::print(stderr, "{} {}: {} winner {} {:.1f} us in {:.1f}s{}\n", head, what,
                 e.measured ? "measured" : "predicted", e.config_key, e.winner_us, e.item_s,
                 e.resumed ? " (resumed a killed run)" : "");
      break;
    case fleet::ItemEvent::Kind::kFailed:
      fmt::print(stderr, "{} {}: FAILED: {}\n", head, what, cache::printable(e.error));
      break;
  }
  std::fflush(stderr);
}

void run(RunOptions o) {
  if (auto faults = env::test_faults()) o.isolation.test_faults = tune::parse_test_faults(*faults);
  fleet::ShardRunOptions options;
  options.manifest = read_manifest(o.manifest);
  options.shard = fleet::parse_shard(o.shard);
  options.db_path =
      o.db.empty()
          ? (std::filesystem::path(o.out) / fleet::shard_database_name(options.shard)).string()
          : o.db;
  options.devices = o.devices;
  options.predict = o.predict;
  options.isolation = o.isolation;
  if (const auto parent = std::filesystem::path(options.db_path).parent_path(); !parent.empty())
    std::filesystem::create_directories(parent);
  fmt::print(stderr, "fleet run: shard {} of {} into {}\n", options.shard.text(), o.manifest,
             options.db_path);
  const fleet::ShardRunReport r =
      fleet::run_shard(options, [&](const fleet::ItemEvent& e) { print_event(options.shard, e); });
  if (o.json) {
    std::vector<std::string> failures;
    for (const std::string& f : r.failures) failures.push_back(json_string(f));
    fmt::print(
        "{{\"manifest\": {}, \"shard\": {}, \"database\": {}, \"items\": {}, \"skipped\": {}, "
        "\"tuned\": {}, \"measured\": {}, \"failed\": {}, \"failures\": [{}], \"no_gpu_reason\": "
        "{}}}\n",
        json_string(o.manifest), json_string(options.shard.text()), json_string(options.db_path),
        r.total, r.skipped, r.tuned, r.measured, r.failed, fmt::join(failures, ", "),
        r.no_gpu_reason.empty() ? "null" : json_string(r.no_gpu_reason));
  } else {
    fmt::print(
        "shard {}: {} items: {} tuned ({} measured, {} predicted), {} done before, {} "
        "failed; database {}\n",
        options.shard.text(), r.total, r.tuned, r.measured, r.tuned - r.measured, r.skipped,
        r.failed, options.db_path);
    if (!r.no_gpu_reason.empty() && r.tuned > 0)
      fmt::print("nothing was measured: {}; the winners are the model's picks\n", r.no_gpu_reason);
    for (const std::string& f : r.failures) fmt::print("  failed: {}\n", f);
  }
  if (r.failed > 0) {
    fmt::print(stderr,
               "kerntune: {} items of shard {} failed (listed above); run the same command again "
               "to retry them\n",
               r.failed, options.shard.text());
    throw CLI::RuntimeError(1);
  }
}

}  // namespace

void register_fleet_run(CLI::App& fleet) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = fleet.add_subcommand(
      "run",
      "Tune one shard of a manifest into its database (run it again to resume after a kill)");
  cmd->add_option("--manifest", o->manifest, "The fleet manifest (docs/FLEET.md)")->required();
  cmd->add_option("--shard", o->shard,
                  "Which shard, I/N (1-based): items I, I+N, I+2N, ... of `fleet plan`")
      ->capture_default_str();
  cmd->add_option("--out", o->out, "Directory of the shard's database, shard-I-of-N.db")
      ->capture_default_str();
  cmd->add_option("--db", o->db, "The shard's database (default: OUT/shard-I-of-N.db)");
  cmd->add_option("--devices", o->devices,
                  "GPU ordinals, one tuning worker each, e.g. 0,1,2,3 (an ordinal may repeat; "
                  "default 0); items are shared out over them")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--predict", o->predict,
                "Rank by the model only, even with a GPU (winners stored as predicted)");
  cmd->add_option("--candidate-timeout", o->isolation.candidate_timeout_s,
                  "Seconds a candidate may take on the GPU before it is killed (as `tune`)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--compile-timeout", o->isolation.compile_timeout_s,
                  "Seconds one candidate may take to compile (as `tune`)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", o->json,
                "One JSON object on stdout at the end: manifest, shard, database, items, "
                "skipped, tuned, measured, failed, failures, no_gpu_reason (progress stays on "
                "stderr)");
  cmd->callback([o] { run(*o); });
}

}  // namespace kt::cli
