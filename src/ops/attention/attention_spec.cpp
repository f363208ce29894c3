// Attention forward's OpSpec: problem and config keys, the fa2/fa3 space and model, explain.
#include <fmt/format.h>

#include <cmath>

#include "core/arith.hpp"
#include "core/attention_config.hpp"
#include "core/attention_order.hpp"
#include "core/error.hpp"
#include "core/occupancy.hpp"
#include "core/typed_op_spec.hpp"
#include "core/versions.hpp"
#include "ops/attention/attention_op.hpp"
#include "ops/attention/flash_attention_shapes.hpp"

namespace kt {

// The model's reasoning for `kerntune explain` (TypedOpSpec::explain_for finds it beside the
// problem type).
std::string explain_config(const AttentionProblem& problem, const AttentionConfig& c,
                           const DeviceDesc& d) {
  const AttentionEstimate e = estimate(problem, c, d);
  const AttentionProblem p = kernel_problem(problem, c);
  std::string out;
  if (c.family == AttentionFamily::kSm90)
    out += fmt::format(
        "  family       fa3: wgmma + TMA, 1 producer + {} consumer warpgroup(s) of 64 query "
        "rows{}; {}{}\n",
        c.block_m / 64, c.pingpong ? " taking turns (ping-pong)" : "",
        c.block_m > 64 ? "registers split by setmaxnreg, 1 CTA/SM"
                       : "registers as compiled (no setmaxnreg)",
        c.pack_gqa ? "; a KV head's query heads packed as its rows (Hq' = Hkv, Nq' = Hq / Hkv)"
                   : "");
  else
    out += fmt::format("  family       fa2: mma.sync + cp.async, {} warps of {} query rows\n",
                       c.warps, c.block_m / c.warps);
  if (p.varlen)
    out += fmt::format(
        "  CTAs         {} with work: ceil(n_i / Br) x Hq per sequence of the bucket's batch ({} "
        "sequences, the longest {}, {} rows); the grid's other CTAs leave at once\n",
        e.num_ctas, p.batch, p.seqlen_q, p.total_q);
  else if (c.splits > 1)
    out += fmt::format(
        "  CTAs         B x Hq x ceil(Nq / Br) x splits = {} x {} x {} x {} = {} (split-KV: each "
        "takes 1/{} of the key blocks; a combine pass of {:.1f} us merges the partials)\n",
        p.batch, p.heads_q, ceil_div(p.seqlen_q, c.block_m), c.splits, e.num_ctas, c.splits,
        e.combine_us);
  else
    out += fmt::format("  CTAs         B x Hq x ceil(Nq / Br) = {} x {} x {} = {}\n", p.batch,
                       p.heads_q, ceil_div(p.seqlen_q, c.block_m), e.num_ctas);
  if (c.persistent) {
    const std::int64_t slots = std::int64_t(d.num_sms) * std::max(1, e.occupancy.ctas_per_sm);
    const std::int64_t grid = persistent_grid(problem, c, slots);
    out += fmt::format(
        "  persistent   {} CTAs ({} slots) work the {} in turn, {:.1f} each, the next one's Q and "
        "K loading while the last computes{}\n",
        grid, slots, c.splits > 1 ? "splits of query blocks" : "query blocks",
        double(e.num_ctas) / double(grid),
        e.persistent_imbalance > 0
            ? fmt::format("; in their fixed order the busiest CTA's work is {:.2f}x the mean",
                          e.persistent_imbalance)
            : "");
  }
  if (p.causal && c.splits == 1) {
    const std::int64_t entries = p.batch * p.heads_q;
    const std::int64_t section = std::min<std::int64_t>(e.causal_section, entries);
    out += fmt::format(
        "  order        longest query block first over sections of {} (head, batch) entries, "
        "{} section(s): a section's K and V ({:.1f} MB) stay in L2 while its query blocks read "
        "them{}\n",
        section, ceil_div(entries, section), double(section * attention_entry_kv_bytes(p)) / 1e6,
        c.persistent ? " (the section under which the busiest persistent CTA works least)"
                     : fmt::format(", and a wave's CTAs share an entry's loads (at most {} "
                                   "entries a section)",
                                   kSectionEntriesMax));
  }
  out += explain_occupancy(e, d.num_sms);
  out += fmt::format("  blocks       {:.1f}% of the visited (q, k) block area is visible{}\n",
                     100 * e.block_efficiency,
                     p.causal ? " (causal: diagonal blocks are masked)" : "");
  out += fmt::format(
      "  predicted    {:.1f} us = max(compute {:.1f}, memory {:.1f}){} + launch -> {:.0f} "
      "TFLOP/s\n",
      e.predicted_us, e.compute_us, e.memory_us,
      c.splits > 1 ? fmt::format(" + combine {:.1f}", e.combine_us) : "", e.predicted_tflops);
  return out;
}

namespace {

class AttentionSpec final : public TypedOpSpec<AttentionProblem, AttentionConfig,
                                               parse_attention_key, parse_attention_config_key> {
 public:
  std::string name() const override { return "attention"; }
  std::string key_prefix() const override { return "attn:"; }
  std::string shape_syntax() const override { return "b=B,hq=HQ,hkv=HKV,sq=SQ,sk=SK,d=D"; }
  std::string description() const override {
    return "attention forward, O = softmax(scale Q K^T [causal]) V, GQA/MQA, bf16/fp16, "
           "head_dim 64/96/128/256 (h= sets hq and hkv, s= sets sq and sk; tq=,tk= make a "
           "packed varlen batch of those totals, sq/sk its longest sequence)";
  }
  std::vector<std::string> families() const override { return {"fa2", "fa3"}; }
  std::vector<OpFlag> flags() const override {
    return {{"causal", "Attention: causal mask (bottom-right aligned)"}};
  }
  int template_version() const override { return kAttentionTemplateVersion; }
  std::vector<std::pair<std::string, std::vector<std::string>>> suites() const override {
    return {{"attention-d128", flash_attention_shapes(128)},
            {"attention-d64", flash_attention_shapes(64)},
            {"attention-extra", {"b=1,hq=32,hkv=8,s=8192,d=128", "b=2,h=8,s=4096,d=256"}}};
  }

  std::string problem_key(std::string_view shape, const ShapeOptions& o) const override {
    if (o.out_dtype && *o.out_dtype != o.dtype)
      throw_invalid("attention writes O in its input dtype: drop --out-dtype");
    if (!o.layout.empty())
      throw_invalid("attention has no --layout (tensors are addressed through strides)");
    AttentionProblem p;
    p.dtype = o.dtype;
    p.causal = take_flag(o, "attention", "causal");
    parse_attention_shape(shape, p);
    return to_key(p);
  }

  // Configs carry over between problems of one dtype, head_dim and mask; a packed batch is
  // nearer other packed ones (one octave's penalty for a padded neighbour), whose totals count.
  std::optional<double> distance(std::string_view a, std::string_view b) const override {
    const AttentionProblem x = parse_attention_key(a), y = parse_attention_key(b);
    if (x.dtype != y.dtype || x.head_dim != y.head_dim || x.causal != y.causal) return std::nullopt;
    auto d = [](std::int64_t u, std::int64_t v) { return std::log2(double(u) / double(v)); };
    auto rows = [](const AttentionProblem& p) {
      return p.varlen ? p.total_q : p.batch * p.seqlen_q;
    };
    const double terms[] = {d(x.batch * x.heads_q, y.batch * y.heads_q), d(x.seqlen_q, y.seqlen_q),
                            d(x.seqlen_k, y.seqlen_k), d(rows(x), rows(y))};
    double squares = 0;
    for (double t : terms) squares += t * t;
    return std::sqrt(squares) + (x.varlen != y.varlen ? 1.0 : 0.0);
  }

  std::string neighbour_prefix(std::string_view key) const override {
    return fmt::format("attn:{}:", to_string(parse_attention_key(key).dtype));
  }

  std::vector<AttentionConfig> configs_for(const AttentionProblem& p,
                                           const DeviceDesc& device) const override {
    return enumerate_attention_configs(p, device);
  }

  // Query rows per CTA and keys per step.
  std::optional<ConfigTile> tile_for(const AttentionConfig& c) const override {
    return ConfigTile{"bm", c.block_m, "bn", c.block_n};
  }

  std::int64_t workspace_for(const AttentionProblem& p, const AttentionConfig& c,
                             const DeviceDesc&) const override {
    return split_workspace_bytes(p, c);
  }

  // Variant "lse": the instantiation that also stores the row logsumexp.
  KernelSource kernel_source(std::string_view key, std::string_view config,
                             std::string_view variant) const override {
    if (!variant.empty() && variant != "lse")
      throw_invalid(fmt::format("attention has no kernel variant '{}' (only lse)", variant));
    const bool write_lse = variant == "lse";
    const AttentionProblem p = parse_attention_key(key);
    const AttentionConfig c = parse_attention_config_key(config);
    KernelSource source{
        fmt::format("{}.d{}.{}.{}{}", to_key(c), p.head_dim, to_string(p.dtype),
                    p.causal ? "causal" : "full", write_lse ? ".lse" : ""),
        {c.family == AttentionFamily::kSm90 ? "kerntune/attention/attention_fwd_sm90.cuh"
                                            : "kerntune/attention/attention_fwd_sm80.cuh"},
        {attention_kernel_expression(p, c, write_lse)}};
    // Split-KV: the split count is a run-time parameter, so every count shares these kernels
    // (and their cubin); the combine pass writes O and the logsumexp.
    if (c.splits > 1) {
      source.headers.push_back("kerntune/attention/attention_split_combine.cuh");
      source.name_expressions.push_back(split_combine_expression(kernel_problem(p, c)));
    }
    return source;
  }
};

}  // namespace

std::shared_ptr<const OpSpec> make_attention_spec() { return std::make_shared<AttentionSpec>(); }

}  // namespace kt
