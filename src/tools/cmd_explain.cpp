// `kerntune explain`: the model's figures for a config (CTAs, occupancy, waves, wave and tile
// efficiency, predicted time); without --config, the model's pick and its runner-up, and the
// measured winner and runner-up from the database when there are any.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/arith.hpp"
#include "core/attention_config.hpp"
#include "core/error.hpp"
#include "core/gemm_model.hpp"
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

void print_estimate(const std::string& title, const GemmProblem& p, const GemmConfig& c,
                    const DeviceDesc& d, const std::string& measured) {
  const GemmEstimate e = estimate(p, c, d);
  fmt::print("{}: {}\n", title, to_key(c));
  fmt::print("  tiles        {} x {} = {} tiles of {}x{}{}\n", e.tiles_m, e.tiles_n,
             e.tiles_m * e.tiles_n, c.tile_m, c.tile_n,
             c.split_k > 1 ? fmt::format(", x{} K splits = {} CTAs", c.split_k, e.num_ctas) : "");
  fmt::print("  tile eff.    {:.1f}% of the covered MxN is useful ({:.1f}% wasted)\n",
             100 * e.tile_efficiency, 100 * (1 - e.tile_efficiency));
  if (c.family == GemmFamily::kSm90)
    fmt::print(
        "  warps        {}\n",
        c.warp_specialized
            ? fmt::format("a producer warpgroup (one thread issues the TMA loads) + {} "
                          "consumer warpgroup(s){}",
                          c.consumers, c.consumers == 2 ? ", registers split by setmaxnreg" : "")
            : fmt::format("{} consumer warpgroup(s), no producer warpgroup: consumer 0's "
                          "thread issues the TMA loads",
                          c.consumers));
  fmt::print("  occupancy    {} CTA/SM ({} threads, ~{} regs, {} B smem; limited by {})\n",
             e.occupancy.ctas_per_sm, e.threads, e.regs_per_thread, e.smem_bytes,
             e.occupancy.limiter);
  fmt::print("  waves        {} on {} SMs (last wave {} of {} slots), wave efficiency {:.1f}%\n",
             e.waves.waves, d.num_sms, e.waves.last_wave_ctas, e.waves.slots,
             100 * e.waves.efficiency);
  if (const StreamKRegion sk = stream_k_region(p, c, d.num_sms); sk.units > 0)
    fmt::print(
        "  stream-K     the last {} tiles shared out by K: {} k-tiles of {} on each of {} "
        "CTAs, after {} whole tiles each\n",
        sk.units, sk.iters, sk.units * k_tiles(p, c), d.num_sms,
        (work_units(p, c) - sk.units) / d.num_sms);
  fmt::print(
      "  predicted    {:.1f} us = max(compute {:.1f}, memory {:.1f}{}) + overlap {:.1f}{} + "
      "launch {:.1f} -> {:.0f} TFLOP/s{}\n",
      e.predicted_us, e.compute_us, e.memory_us,
      e.ramp_us > 0 ? fmt::format(" incl. {:.1f} first DRAM round trip", e.ramp_us) : "",
      e.overlap_us,
      e.reduce_us > 0 ? fmt::format(" + {} {:.1f}",
                                    c.stream_k        ? "stream-K fix-up"
                                    : c.cluster_k > 1 ? "cluster exchange"
                                                      : "split-K reduce",
                                    e.reduce_us)
                      : "",
      e.launch_us, e.predicted_tflops, measured);
}

void print_attention_estimate(const std::string& title, const AttentionProblem& p,
                              const AttentionConfig& c, const DeviceDesc& d) {
  const AttentionEstimate e = estimate(p, c, d);
  fmt::print("{}: {}\n", title, to_key(c));
  if (c.family == AttentionFamily::kSm90)
    fmt::print(
        "  family       fa3: wgmma + TMA, 1 producer + {} consumer warpgroup(s) of 64 query "
        "rows; {}\n",
        c.block_m / 64,
        c.block_m == 128 ? "registers split by setmaxnreg (40 / 232 / 232), 1 CTA/SM"
                         : "registers as compiled (no setmaxnreg)");
  else
    fmt::print("  family       fa2: mma.sync + cp.async, {} warps of {} query rows\n", c.warps,
               c.block_m / c.warps);
  fmt::print("  CTAs         B x Hq x ceil(Nq / Br) = {} x {} x {} = {}\n", p.batch, p.heads_q,
             ceil_div(p.seqlen_q, c.block_m), e.num_ctas);
  fmt::print("  occupancy    {} CTA/SM ({} threads, ~{} regs, {} B smem; limited by {})\n",
             e.occupancy.ctas_per_sm, e.threads, e.regs_per_thread, e.smem_bytes,
             e.occupancy.limiter);
  fmt::print("  waves        {} on {} SMs (last wave {} of {} slots), wave efficiency {:.1f}%\n",
             e.waves.waves, d.num_sms, e.waves.last_wave_ctas, e.waves.slots,
             100 * e.waves.efficiency);
  fmt::print("  blocks       {:.1f}% of the visited (q, k) block area is visible{}\n",
             100 * e.block_efficiency, p.causal ? " (causal: diagonal blocks are masked)" : "");
  fmt::print(
      "  predicted    {:.1f} us = max(compute {:.1f}, memory {:.1f}) + launch -> {:.0f} TFLOP/s\n",
      e.predicted_us, e.compute_us, e.memory_us, e.predicted_tflops);
}

void run_attention(const ExplainOptions& o, const DeviceDesc& device) {
  for (const AttentionProblem& p : o.problem.attention_problems()) {
    fmt::print("{} on {} ({:.3g} GFLOP, {:.1f} MB minimum traffic)\n", to_key(p), o.profile,
               p.flops() / 1e9, p.min_bytes() / 1e6);
    if (!o.config.empty()) {
      const AttentionConfig c = parse_attention_config_key(o.config);
      if (auto why = validate(p, c, device)) throw_invalid(fmt::format("{}: {}", to_key(c), *why));
      print_attention_estimate("config", p, c, device);
      continue;
    }
    const auto ranked = rank_by_model(p, enumerate_attention_configs(p, device), device);
    const char* titles[] = {"model's pick", "runner-up"};
    for (std::size_t i = 0; i < std::min<std::size_t>(2, ranked.size()); ++i)
      print_attention_estimate(titles[i], p, ranked[i].config, device);
  }
}

void run(const ExplainOptions& o) {
  const DeviceDesc& device = device_profile(o.profile);
  if (o.problem.is_attention()) return run_attention(o, device);
  for (const GemmProblem& p : o.problem.gemm_problems()) {
    fmt::print("{} on {} ({:.3g} GFLOP, {:.1f} MB minimum traffic, intensity {:.0f} FLOP/B)\n",
               to_key(p), o.profile, p.flops() / 1e9, p.min_bytes() / 1e6,
               p.flops() / p.min_bytes());
    if (!o.config.empty()) {
      const GemmConfig c = parse_gemm_config_key(o.config);
      if (auto why = validate(p, c, device)) throw_invalid(fmt::format("{}: {}", to_key(c), *why));
      print_estimate("config", p, c, device, "");
      continue;
    }
    // Measured winner and runner-up, when this database has them for the profile's device. A
    // finalist has two rows, its first pass and the interleaved re-measurement the winner was
    // picked by; one row per config, the re-measurement where there is one, the latest else.
    std::map<std::string, cache::Measurement> latest;
    try {
      cache::Database db = open_database(o.db);
      for (auto& m : db.measurements({to_key(p), device.fingerprint(), kBenchmarkProtocolVersion,
                                      kGemmTemplateVersion})) {
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
    if (!measured.empty()) {
      std::sort(measured.begin(), measured.end(),
                [](const auto& a, const auto& b) { return a.median_us < b.median_us; });
      const char* titles[] = {"measured winner", "measured runner-up"};
      for (std::size_t i = 0; i < std::min<std::size_t>(2, measured.size()); ++i) {
        const auto& m = measured[i];
        print_estimate(
            titles[i], p, parse_gemm_config_key(m.config_key), device,
            fmt::format("; measured {:.1f} us = {:.0f} TFLOP/s (model error {:+.0f}%)", m.median_us,
                        m.tflops, 100 * (m.predicted_us - m.median_us) / m.median_us));
      }
      continue;
    }
    const auto ranked = rank_by_model(p, enumerate_gemm_configs(p, device), device);
    const char* titles[] = {"model's pick", "runner-up"};
    for (std::size_t i = 0; i < std::min<std::size_t>(2, ranked.size()); ++i)
      print_estimate(titles[i], p, ranked[i].config, device, "");
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
