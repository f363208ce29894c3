// The GEMM and attention benchmark targets: each op's workload and kernels behind BenchTarget.
#include <fmt/format.h>

#include <map>

#include "core/attention_problem.hpp"
#include "core/error.hpp"
#include "core/gemm_config.hpp"
#include "runtime/attention_kernel.hpp"
#include "runtime/gemm_kernel.hpp"
#include "tuner/attention_workload.hpp"
#include "tuner/bench_target.hpp"

namespace kt::tune {

namespace {

class GemmTarget final : public BenchTarget {
 public:
  GemmTarget(const GemmProblem& p, const DeviceDesc& device, cache::Database* db,
             rt::ModuleCache& modules, CUstream stream, std::uint64_t seed, std::size_t workspace)
      : problem_(p),
        modules_(modules),
        work_(p, device, db, modules, stream, seed, workspace, timing_operand_sets(p)) {}

  void load(const std::string& config_key, const cache::CubinRecord& cubin) override {
    if (kernels_.count(config_key)) return;
    kernels_[config_key] =
        rt::GemmKernel(problem_, parse_gemm_config_key(config_key), modules_.load(cubin));
  }
  CUresult launch(const std::string& config_key, CUstream s, int set) override {
    const GemmOperands o = work_.operands(set);
    return kernels_.at(config_key).launch(o.a, o.b, o.c, work_.workspace(), s);
  }
  int num_operand_sets() const override { return work_.num_operand_sets(); }
  void poison_output() override { work_.poison_output(); }
  OutputCheck check_output() override { return work_.check_output(); }

 private:
  GemmProblem problem_;
  rt::ModuleCache& modules_;
  GemmWorkload work_;
  std::map<std::string, rt::GemmKernel> kernels_;
};

class AttentionTarget final : public BenchTarget {
 public:
  AttentionTarget(const AttentionProblem& p, const DeviceDesc& device, cache::Database* db,
                  rt::ModuleCache& modules, CUstream stream, std::uint64_t seed)
      : problem_(p),
        modules_(modules),
        work_(p, device, db, modules, stream, seed),
        tensors_(work_.tensors(false)) {}

  void load(const std::string& config_key, const cache::CubinRecord& cubin) override {
    if (kernels_.count(config_key)) return;
    kernels_[config_key] =
        rt::AttentionKernel(problem_, parse_attention_config_key(config_key), modules_.load(cubin));
  }
  // One set: attention's operands are not rotated (bench/NOTES.md, "Where the operands lie").
  CUresult launch(const std::string& config_key, CUstream s, int /*set*/) override {
    return kernels_.at(config_key).launch(tensors_, s);
  }
  int num_operand_sets() const override { return 1; }
  void poison_output() override { work_.poison_output(); }
  OutputCheck check_output() override { return work_.check_output(false); }

 private:
  AttentionProblem problem_;
  rt::ModuleCache& modules_;
  AttentionWorkload work_;
  AttentionTensors tensors_;
  std::map<std::string, rt::AttentionKernel> kernels_;
};

}  // namespace

std::unique_ptr<BenchTarget> make_bench_target(const std::string& problem_key,
                                               const DeviceDesc& device, cache::Database* db,
                                               rt::ModuleCache& modules, CUstream stream,
                                               std::uint64_t seed, std::size_t workspace_bytes) {
  if (problem_key.rfind("gemm:", 0) == 0)
    return std::make_unique<GemmTarget>(parse_gemm_key(problem_key), device, db, modules, stream,
                                        seed, workspace_bytes);
  if (problem_key.rfind("attn:", 0) == 0)
    return std::make_unique<AttentionTarget>(parse_attention_key(problem_key), device, db, modules,
                                             stream, seed);
  throw_invalid(fmt::format("no benchmark target for problem '{}': expected a gemm: or attn: key",
                            problem_key));
}

}  // namespace kt::tune
