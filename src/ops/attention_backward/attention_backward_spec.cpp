// Attention backward's OpSpec: problem and config keys, the fa2 and fa3 space and model, the
// workspace, explain and the kernels a config instantiates.
#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "core/typed_op_spec.hpp"
#include "ops/attention/flash_attention_shapes.hpp"
#include "ops/attention_backward/attention_backward_config.hpp"
#include "ops/attention_backward/attention_backward_op.hpp"

namespace kt {

namespace {

class AttentionBackwardSpec final
    : public TypedOpSpec<AttentionBackwardProblem, AttentionBackwardConfig,
                         parse_attention_backward_key, parse_attention_backward_config_key> {
 public:
  std::string name() const override { return "attention-backward"; }
  std::string key_prefix() const override { return "attnbwd:"; }
  std::string shape_syntax() const override { return "b=B,hq=HQ,hkv=HKV,sq=SQ,sk=SK,d=D"; }
  std::string description() const override {
    return "attention backward, dQ dK dV from dO, O and the forward's logsumexp, GQA/MQA, "
           "bf16/fp16, head_dim 64/96/128/256 (shape as attention's)";
  }
  std::vector<std::string> families() const override { return {"fa2", "fa3"}; }
  std::vector<OpFlag> flags() const override {
    return {
        {"causal", "Attention: causal mask (bottom-right aligned)"},
        {"deterministic", "Attention backward: dQ summed in a fixed order (bitwise reproducible)"}};
  }
  // 4: causal CTAs longest first over L2-sized sections of entries (common/work_order.h); 5: fa3 at
  // head_dim 256 (two consumers share a key block, a half of the columns each) and dQ added from
  // registers; 6: that dQ path derived from head_dim, no longer a config field (the fa3 kernel
  // drops a template argument and the d256 key its ".dqr"); 7: causal sections of at most 32
  // entries (a wave's CTAs share an entry's Q and dO loads); 8: the parameter block's strides as
  // TensorStrides, over which NVVM orders fa2's causal kernels differently (fa3's PTX unchanged).
  int template_version() const override { return 12; }
  std::vector<std::pair<std::string, std::vector<std::string>>> suites() const override {
    return {{"attention-backward-d128", flash_attention_shapes(128)},
            {"attention-backward-d64", flash_attention_shapes(64)},
            {"attention-backward-extra", {"b=1,hq=32,hkv=8,s=8192,d=128"}}};
  }

  std::string problem_key(std::string_view shape, const ShapeOptions& o) const override {
    if (o.out_dtype && *o.out_dtype != o.dtype)
      throw_invalid("attention backward writes dQ, dK, dV in its input dtype: drop --out-dtype");
    if (!o.layout.empty())
      throw_invalid("attention backward has no --layout (tensors are addressed through strides)");
    AttentionBackwardProblem p;
    p.dtype = o.dtype;
    const std::vector<bool> given =
        take_flags(o, "attention backward", {"causal", "deterministic"});
    p.causal = given[0];
    p.deterministic = given[1];
    parse_attention_backward_shape(shape, p);
    return to_key(p);
  }

  // Configs carry over between problems of one dtype, head_dim, mask and determinism; the
  // distance is in (B·Hkv, Hq/Hkv, Nq, Nk), the CTAs, the query heads each works, the lengths.
  std::optional<double> distance(std::string_view a, std::string_view b) const override {
    const AttentionBackwardProblem x = parse_attention_backward_key(a),
                                   y = parse_attention_backward_key(b);
    if (x.dtype != y.dtype || x.head_dim != y.head_dim || x.causal != y.causal ||
        x.deterministic != y.deterministic)
      return std::nullopt;
    auto d = [](std::int64_t u, std::int64_t v) { return std::log2(double(u) / double(v)); };
    const double ctas = d(x.batch * x.heads_kv, y.batch * y.heads_kv);
    const double group = d(x.heads_q / x.heads_kv, y.heads_q / y.heads_kv);
    return std::sqrt(ctas * ctas + group * group +
                     d(x.seqlen_q, y.seqlen_q) * d(x.seqlen_q, y.seqlen_q) +
                     d(x.seqlen_k, y.seqlen_k) * d(x.seqlen_k, y.seqlen_k));
  }

  std::string neighbour_prefix(std::string_view key) const override {
    return fmt::format("attnbwd:{}:", to_string(parse_attention_backward_key(key).dtype));
  }

  std::vector<AttentionBackwardConfig> configs_for(const AttentionBackwardProblem& p,
                                                   const DeviceDesc& device) const override {
    return enumerate_attention_backward_configs(p, device);
  }

  // The FP32 dQ accumulator, D and the semaphores: the same for every config of a problem.
  std::int64_t workspace_for(const AttentionBackwardProblem& p, const AttentionBackwardConfig&,
                             const DeviceDesc&) const override {
    return attention_backward_workspace(p).bytes;
  }

  std::int64_t required_workspace_bytes(std::string_view key, const DeviceDesc&) const override {
    return attention_backward_workspace(parse_attention_backward_key(key)).bytes;
  }

  KernelSource kernel_source(std::string_view key, std::string_view config,
                             std::string_view variant) const override {
    if (!variant.empty())
      throw_invalid(fmt::format("attention backward has no kernel variant '{}'", variant));
    const AttentionBackwardProblem p = parse_attention_backward_key(key);
    const AttentionBackwardConfig c = parse_attention_backward_config_key(config);
    return {
        fmt::format("bwd.{}.d{}.{}.{}{}", to_key(c), p.head_dim, to_string(p.dtype),
                    p.causal ? "causal" : "full", p.deterministic ? ".det" : ""),
        {c.family == AttentionFamily::kSm90 ? "kerntune/attention_backward/attention_bwd_sm90.cuh"
                                            : "kerntune/attention_backward/attention_bwd_sm80.cuh"},
        attention_backward_kernel_expressions(p, c)};
  }
};

}  // namespace

std::shared_ptr<const OpSpec> make_attention_backward_spec() {
  return std::make_shared<AttentionBackwardSpec>();
}

}  // namespace kt
