// GEMM's OpSpec: problem and config keys, the three families' space and model, explain.
#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_model.hpp"
#include "core/occupancy.hpp"
#include "core/typed_op_spec.hpp"
#include "core/versions.hpp"
#include "ops/gemm/gemm_op.hpp"

namespace kt {

namespace {
// What a user can do about operands a config loads element by element (rows not 16-byte
// aligned): the padding, layout or family that loads them faster.
std::string element_loads_advice(const GemmProblem& p) {
  if (p.k % 8 != 0) return "pad K to a multiple of 8 for them";
  if (const int bytes = p.b_row_copy_bytes(); bytes > 0)
    return fmt::format(
        "an sm90 config with a producer warpgroup copies them {} bytes at a time, or store B as "
        "N x K (--layout nt)",
        bytes);
  return "store B as N x K (--layout nt) or pad N to a multiple of 8 for them";
}
}  // namespace

// The model's reasoning for `kerntune explain` (TypedOpSpec::explain_for finds it beside the
// problem type).
std::string explain_config(const GemmProblem& p, const GemmConfig& c, const DeviceDesc& d) {
  const GemmEstimate e = estimate(p, c, d);
  std::string out;
  out += fmt::format(
      "  tiles        {} x {} = {} tiles of {}x{}{}\n", e.tiles_m, e.tiles_n, e.tiles_m * e.tiles_n,
      c.tile_m, c.tile_n,
      c.split_k > 1 ? fmt::format(", x{} K splits = {} CTAs", c.split_k, e.num_ctas) : "");
  out += fmt::format("  tile eff.    {:.1f}% of the covered MxN is useful ({:.1f}% wasted)\n",
                     100 * e.tile_efficiency, 100 * (1 - e.tile_efficiency));
  if (c.family == GemmFamily::kSm90)
    out += fmt::format(
        "  warps        {}\n",
        c.warp_specialized
            ? fmt::format("a producer warpgroup (one thread issues the TMA loads) + {} "
                          "consumer warpgroup(s){}",
                          c.consumers, c.consumers == 2 ? ", registers split by setmaxnreg" : "")
            : fmt::format("{} consumer warpgroup(s), no producer warpgroup: consumer 0's "
                          "thread issues the TMA loads",
                          c.consumers));
  out += explain_occupancy(e.occupancy, e.threads, e.regs_per_thread, e.smem_bytes, e.waves,
                           d.num_sms);
  const std::vector<GemmPaddedOperand> pads = sm90_padded_operands(p, c, d.num_sms);
  for (const GemmPaddedOperand& o : pads)
    out += fmt::format(
        "  loads        {}'s rows of {} elements are not 16-byte aligned: copied first into the "
        "workspace as rows of {}, which TMA loads\n",
        o.operand, o.cols, o.dst_ld);
  if (const int bytes = sm90_mn_copy_bytes(p, c); bytes > 0)
    out += fmt::format(
        "  loads        B's rows of {} elements are not 16-byte aligned: the producer warpgroup "
        "copies them with {}-byte cp.async beside A's TMA loads\n",
        p.n, bytes);
  else if (pads.empty() && !p.vector_aligned())
    out += fmt::format(
        "  loads        element by element: rows of {} are not 16-byte aligned, so no cp.async "
        "for them in this family; {}\n",
        p.k % 8 != 0 ? "A and B (K % 8 != 0)" : "B (nn with N % 8 != 0)", element_loads_advice(p));
  if (const StreamKRegion sk = stream_k_region(p, c, d.num_sms); sk.units > 0)
    out += fmt::format(
        "  stream-K     the last {} tiles shared out by K: {} k-tiles of {} on each of {} "
        "CTAs, after {} whole tiles each\n",
        sk.units, sk.iters, sk.units * k_tiles(p, c), d.num_sms,
        (work_units(p, c) - sk.units) / d.num_sms);
  out += fmt::format(
      "  predicted    {:.1f} us = max(compute {:.1f}, memory {:.1f}{}) + overlap {:.1f}{}{} + "
      "launch {:.1f} -> {:.0f} TFLOP/s\n",
      e.predicted_us, e.compute_us, e.memory_us,
      e.ramp_us > 0 ? fmt::format(" incl. {:.1f} first DRAM round trip", e.ramp_us) : "",
      e.overlap_us,
      e.reduce_us > 0 ? fmt::format(" + {} {:.1f}",
                                    c.stream_k        ? "stream-K fix-up"
                                    : c.cluster_k > 1 ? "cluster exchange"
                                                      : "split-K reduce",
                                    e.reduce_us)
                      : "",
      e.pad_us > 0 ? fmt::format(" + padded copies {:.1f}", e.pad_us) : "", e.launch_us,
      e.predicted_tflops);
  return out;
}

namespace {

class GemmSpec final
    : public TypedOpSpec<GemmProblem, GemmConfig, parse_gemm_key, parse_gemm_config_key> {
 public:
  std::string name() const override { return "gemm"; }
  std::string key_prefix() const override { return "gemm:"; }
  std::string shape_syntax() const override { return "MxNxK"; }
  std::string description() const override {
    return "C[M,N] = A[M,K] B (B NxK for --layout nt, KxN for nn), bf16/fp16 in, "
           "bf16/fp16/fp32 out, FP32 accumulation";
  }
  std::vector<std::string> families() const override { return {"sm80", "sm90", "smallm"}; }
  int template_version() const override { return kGemmTemplateVersion; }
  std::vector<std::pair<std::string, std::vector<std::string>>> suites() const override {
    return {
        {"foundation",
         {"4096x4096x4096", "8192x8192x8192", "2048x2048x2048", "8192x6144x4096", "8192x28672x4096",
          "8192x4096x14336", "4100x4096x4096", "1536x1536x8192", "512x512x32768", "64x14336x4096",
          "16x4096x4096"}},
        {"square", {"2048x2048x2048", "4096x4096x4096", "8192x8192x8192"}},
        {"ragged", {"127x129x65", "1x4096x4096", "4100x4096x4096"}},
        // Decoding: memory-bound, B streamed once; served by the small-M family.
        {"decode", {"1x4096x4096", "16x4096x4096", "64x4096x4096", "64x14336x4096"}},
    };
  }

  std::string problem_key(std::string_view shape, const ShapeOptions& o) const override {
    take_flag(o, "GEMM");
    GemmProblem p;
    p.in_dtype = o.dtype;
    p.out_dtype = o.out_dtype.value_or(o.dtype);
    p.layout = parse_layout(o.layout.empty() ? "nt" : o.layout);
    parse_gemm_shape(shape, p);
    return to_key(p);
  }

  std::optional<ProblemShape> shape_of(std::string_view key) const override {
    const GemmProblem p = parse_gemm_key(key);
    ProblemShape s{fmt::format("{}x{}x{}", p.m, p.n, p.k), {}};
    s.options.dtype = p.in_dtype;
    if (p.out_dtype != p.in_dtype) s.options.out_dtype = p.out_dtype;
    if (p.layout != Layout::kNT) s.options.layout = std::string(to_string(p.layout));
    return s;
  }

  // Decoding-sized M: streaming B once, not the math, bounds the time.
  bool memory_bound(const GemmProblem& p) const override { return p.m <= 64; }

  std::optional<double> distance(std::string_view a, std::string_view b) const override {
    if (neighbour_prefix(a) != neighbour_prefix(b)) return std::nullopt;
    const GemmProblem x = parse_gemm_key(a), y = parse_gemm_key(b);
    auto d = [](std::int64_t u, std::int64_t v) { return std::log2(double(u) / double(v)); };
    return std::hypot(d(x.m, y.m), d(x.n, y.n), d(x.k, y.k));
  }

  std::string neighbour_prefix(std::string_view key) const override {
    const GemmProblem p = parse_gemm_key(key);
    return fmt::format("gemm:{}:{}:{}:", to_string(p.in_dtype), to_string(p.out_dtype),
                       to_string(p.layout));
  }

  std::int64_t workspace_for(const GemmProblem& p, const GemmConfig& c,
                             const DeviceDesc& device) const override {
    return kt::workspace_bytes(p, c, device.num_sms);
  }

  std::vector<GemmConfig> configs_for(const GemmProblem& p,
                                      const DeviceDesc& device) const override {
    return enumerate_gemm_configs(p, device);
  }

  // The CTA tile as the key names it (with swap-AB, bm tiles N and bn tiles M).
  std::optional<ConfigTile> tile_for(const GemmConfig& c) const override {
    return ConfigTile{"bm", c.tile_m, "bn", c.tile_n};
  }

  KernelSource kernel_source(std::string_view key, std::string_view config,
                             std::string_view variant) const override {
    if (!variant.empty()) throw_invalid(fmt::format("GEMM has no kernel variant '{}'", variant));
    const GemmProblem p = parse_gemm_key(key);
    const GemmConfig c = parse_gemm_config_key(config);
    KernelSource s;
    s.name = fmt::format("{}.{}.{}", to_key(c), to_string(p.in_dtype), to_string(p.out_dtype));
    // NOTE: the code names only what the template arguments fix, so configs that differ in
    // runtime parameters (raster_group) share one compile key and one cubin.
    s.headers = {c.family == GemmFamily::kSm90     ? "kerntune/gemm/gemm_sm90.cuh"
                 : c.family == GemmFamily::kSmallM ? "kerntune/gemm/gemm_small_m.cuh"
                                                   : "kerntune/gemm/gemm_sm80.cuh"};
    s.name_expressions.push_back(gemm_kernel_expression(p, c));
    // sm90 split-K reduces inside the main kernel; the other families add the reduce kernel.
    if (c.split_k > 1 && c.family != GemmFamily::kSm90)
      s.name_expressions.push_back(gemm_reduce_expression(p));
    // sm90 on rows TMA cannot address adds the kernel that pads them (second in the module).
    if (!sm90_padded_operands(p, c, 0).empty()) {
      s.headers.push_back("kerntune/gemm/gemm_pad_rows.cuh");
      s.name_expressions.push_back(gemm_pad_expression());
    }
    return s;
  }
};

}  // namespace

std::shared_ptr<const OpSpec> make_gemm_spec() { return std::make_shared<GemmSpec>(); }

}  // namespace kt
