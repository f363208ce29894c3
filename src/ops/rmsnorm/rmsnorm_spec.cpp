// RMSNorm's OpSpec: codecs, validity, space and model over the problem and config keys.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "ops/rmsnorm/rmsnorm_config.hpp"
#include "ops/rmsnorm/rmsnorm_op.hpp"

namespace kt {

namespace {

class RmsnormSpec final : public OpSpec {
 public:
  std::string name() const override { return "rmsnorm"; }
  std::string key_prefix() const override { return "rmsnorm:"; }
  std::string shape_syntax() const override { return "rows=R,hidden=H"; }
  std::string description() const override {
    return "fused RMSNorm, y = x * rsqrt(mean(x^2) + eps) * w per row, optional residual add "
           "(bf16/fp16, FP32 accumulation)";
  }
  std::vector<std::string> families() const override { return {"rms"}; }
  std::vector<OpFlag> flags() const override {
    return {{"residual", "RMSNorm: add a residual first (x = x + r, the sum also written)"}};
  }
  int template_version() const override { return 2; }
  std::vector<std::pair<std::string, std::vector<std::string>>> suites() const override {
    std::vector<std::string> shapes;
    for (int rows : {4096, 16384, 32768})
      for (int hidden : {2048, 4096, 5120, 8192, 16384})
        shapes.push_back(fmt::format("rows={},hidden={}", rows, hidden));
    return {{"rmsnorm", shapes},
            {"rmsnorm-ragged",
             {"rows=8192,hidden=1000", "rows=8192,hidden=13", "rows=1,hidden=5120",
              "rows=4097,hidden=4104"}}};
  }

  std::string problem_key(std::string_view shape, const ShapeOptions& o) const override {
    RmsnormProblem p;
    p.dtype = o.dtype;
    if (o.out_dtype && *o.out_dtype != o.dtype)
      throw_invalid("RMSNorm writes its input dtype: drop --out-dtype or make it --dtype");
    if (!o.layout.empty()) throw_invalid("RMSNorm has no --layout (rows are dense)");
    for (const std::string& flag : o.flags) {
      if (flag == "residual")
        p.residual = true;
      else
        throw_invalid(fmt::format("RMSNorm takes no --{}", flag));
    }
    parse_rmsnorm_shape(shape, p);
    return to_key(p);
  }

  ProblemSummary summarize(std::string_view key) const override {
    const RmsnormProblem p = parse_rmsnorm_key(key);
    return {p.flops(), p.min_bytes(), true};
  }

  std::optional<double> distance(std::string_view a, std::string_view b) const override {
    const RmsnormProblem x = parse_rmsnorm_key(a), y = parse_rmsnorm_key(b);
    // A config's vector width and items per thread follow hidden: only the same hidden. (Across
    // hiddens within 2x, the neighbours' winners ran worse than the model's pick on the H200's
    // held-out shapes with the residual, 0.80-0.88 of the copy against 0.84-0.96.)
    if (x.dtype != y.dtype || x.residual != y.residual || x.hidden != y.hidden) return std::nullopt;
    return std::abs(std::log2(double(x.rows)) - std::log2(double(y.rows)));
  }

  void check_config_key(std::string_view config_key) const override {
    parse_rmsnorm_config_key(config_key);
  }

  std::vector<RankedConfigKey> ranked_configs(std::string_view key,
                                              const DeviceDesc& device) const override {
    const RmsnormProblem p = parse_rmsnorm_key(key);
    std::vector<RankedConfigKey> out;
    for (const RmsnormConfig& c : enumerate_rmsnorm_configs(p, device))
      out.push_back({to_key(c), estimate(p, c, device).predicted_us});
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.predicted_us < b.predicted_us; });
    return out;
  }

  std::optional<std::string> validate_config(std::string_view key, std::string_view config,
                                             const DeviceDesc& device) const override {
    try {
      return validate(parse_rmsnorm_key(key), parse_rmsnorm_config_key(config), device);
    } catch (const Error& e) {
      return std::string(e.what());
    }
  }

  double predicted_us(std::string_view key, std::string_view config, const DeviceDesc& device,
                      int registers) const override {
    return estimate(parse_rmsnorm_key(key), parse_rmsnorm_config_key(config), device, registers)
        .predicted_us;
  }

  std::string explain(std::string_view key, std::string_view config,
                      const DeviceDesc& device) const override {
    const RmsnormProblem p = parse_rmsnorm_key(key);
    const RmsnormConfig c = parse_rmsnorm_config_key(config);
    const RmsnormEstimate e = estimate(p, c, device);
    const LaunchPlan plan = plan_launch(p, c);
    return fmt::format(
        "  rows of {} elements: {} threads a row, {} vectors of {} a thread, {} rows a CTA, row "
        "kept in {}\n"
        "  grid {} CTAs of {} threads, {} B shared; {} CTAs an SM resident, {:.2f} waves\n"
        "  memory: {:.1f} MB at {:.0f}% of {:.0f} GB/s (bytes in flight) = {:.1f} us\n"
        "  row latency and launch: {:.1f} us; predicted {:.1f} us ({:.0f} GB/s)\n",
        p.hidden, c.threads_per_row, rmsnorm_items(p, c), c.vec, c.rows_per_cta,
        c.mode == RmsnormMode::kRegisters ? "registers"
        : c.mode == RmsnormMode::kShared  ? "shared memory"
                                          : "L2 (read twice)",
        plan.grid[0], plan.block[0], plan.smem_bytes, e.ctas_per_sm, e.waves, p.min_bytes() / 1e6,
        100 * e.efficiency, device.dram_gbps, e.memory_us, e.latency_us, e.predicted_us,
        p.min_bytes() / e.predicted_us / 1e3);
  }

  KernelSource kernel_source(std::string_view key, std::string_view config,
                             std::string_view variant) const override {
    if (!variant.empty()) throw_invalid(fmt::format("RMSNorm has no kernel variant '{}'", variant));
    const RmsnormProblem p = parse_rmsnorm_key(key);
    const RmsnormConfig c = parse_rmsnorm_config_key(config);
    return {fmt::format("{}.{}.h{}{}", to_key(c), to_string(p.dtype), p.hidden,
                        p.residual ? ".res" : ""),
            {"kerntune/rmsnorm/rmsnorm.cuh"},
            {rmsnorm_kernel_expression(p, c)}};
  }
};

}  // namespace

std::shared_ptr<const OpSpec> make_rmsnorm_spec() { return std::make_shared<RmsnormSpec>(); }

}  // namespace kt
