// Side-by-side GEMM benchmark and dispatch-overhead measurement.
#include "ops/gemm/gemm_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/error.hpp"
#include "core/versions.hpp"
#include "generator/generated_source.hpp"
#include "ops/gemm/cublaslt_gemm.hpp"
#include "ops/gemm/gemm_kernel.hpp"
#include "ops/gemm/gemm_source.hpp"
#include "ops/gemm/gemm_workload.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"

namespace kt::tune {

namespace {

constexpr std::size_t kBaselineWorkspaceBytes = 32u << 20;

}  // namespace

OpBenchRow bench_gemm(Runtime& runtime, const GemmProblem& p, const OpBenchOptions& o) {
  OpBenchRow row;
  OpBenchSetup setup(o);
  rt::OwnedStream& stream = setup.stream;
  GemmWorkload work(p, setup.device, nullptr, setup.modules, stream.get(), setup.seed,
                    kBaselineWorkspaceBytes, timing_operand_sets(p));
  Bench bench(stream.get(), setup.device, setup.modules, nullptr);

  // Both libraries rotate over the same operand sets, as the tuner does (set 0 is checked).
  const int sets = work.num_operand_sets();
  const auto kt_launch = rotating_launch(sets, [&](CUstream stream, int set) {
    const GemmOperands o = work.operands(set);
    runtime.gemm(p, o.a, o.b, o.c, stream);
    return CUDA_SUCCESS;
  });
  // The first call resolves the kernel (benchmark mode times its candidates on it), then the
  // dispatch says which.
  work.poison_output();
  runtime.gemm(p, work.a(), work.b(), work.c(), stream.get());
  row.check = work.check_output();
  row.dispatch = runtime.prepare_gemm(p);

  std::unique_ptr<CublasLtGemm> lt;
  if (o.baseline) {
    row.baseline_name = "cuBLASLt";
    try {
      lt = std::make_unique<CublasLtGemm>(p, work.workspace(), work.workspace_bytes());
      work.poison_output();
      rt::check(lt->launch(work.a(), work.b(), work.c(), stream.get()), "cublasLtMatmul");
      row.baseline_check = work.check_output();
      row.baseline_detail = lt->algorithm();
    } catch (const Error& e) {
      row.baseline_error = e.what();
      lt.reset();
    }
  }
  const auto lt_launch = rotating_launch(sets, [&](CUstream stream, int set) {
    const GemmOperands o = work.operands(set);
    return lt->launch(o.a, o.b, o.c, stream);
  });

  const SameBytesCopy copy(p.min_bytes(), stream.get());
  auto copy_launch = [&](CUstream stream) { return copy.launch(stream); };

  // Warm both, then interleave rounds so clock and thermal drift hit both alike.
  for (int i = 0; i < 3; ++i) {
    kt_launch(stream.get());
    if (lt) rt::check(lt_launch(stream.get()), "cublasLtMatmul(warm-up)");
  }
  std::vector<double> kt_samples, lt_samples, copy_samples;
  for (int r = 0; r < o.rounds; ++r) {
    auto a = bench.sample(kt_launch, o.reps_per_round);
    kt_samples.insert(kt_samples.end(), a.begin(), a.end());
    if (lt) {
      auto b = bench.sample(lt_launch, o.reps_per_round);
      lt_samples.insert(lt_samples.end(), b.begin(), b.end());
    }
    auto c = bench.sample(copy_launch, o.reps_per_round);
    copy_samples.insert(copy_samples.end(), c.begin(), c.end());
  }
  row.kerntune = summarize(std::move(kt_samples));
  row.baseline = summarize(std::move(lt_samples));
  row.copy = summarize(std::move(copy_samples));
  return row;
}

DispatchOverhead measure_dispatch_overhead(Runtime& runtime, const GemmProblem& p,
                                           const std::string& database_path) {
  using Clock = std::chrono::steady_clock;
  constexpr int kBatch = 200, kBatches = 30;
  DispatchOverhead result;
  result.config_key = runtime.prepare_gemm(p).config_key;
  rt::OwnedStream stream;
  const DeviceDesc device = rt::query_current_device();
  rt::ModuleCache modules;
  GemmWorkload work(p, device, nullptr, modules, stream.get(), 1, 0);

  // The same kernel, launched raw: cubin from the database, parameters built once.
  cache::Database db = cache::Database::open_readonly(database_path);
  const GemmConfig config = parse_gemm_config_key(result.config_key);
  const auto source = gen::generate_gemm(p, config, device.arch());
  const auto cubin = rt::get_or_compile(&db, source, true, false);
  const rt::GemmKernel kernel(p, config, modules.load(cubin.record));
  if (kernel.workspace_bytes() > 0)
    throw Error(ErrorKind::kUnsupported,
                "dispatch overhead is measured on a config without split-K (no workspace)");

  const rt::CudaDriver& d = rt::driver();
  auto time_batches = [&](auto&& call) {
    std::vector<double> per_call;
    for (int b = 0; b < kBatches; ++b) {
      rt::check(d.stream_synchronize(stream.get()), "cuStreamSynchronize");
      const auto start = Clock::now();
      for (int i = 0; i < kBatch; ++i) call();
      per_call.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
                         kBatch);
    }
    rt::check(d.stream_synchronize(stream.get()), "cuStreamSynchronize");
    std::sort(per_call.begin(), per_call.end());
    return per_call[per_call.size() / 2];
  };
  void* a = const_cast<void*>(work.a());
  void* b = const_cast<void*>(work.b());
  void* c = work.c();
  // The parameter block is built once, so the raw launch pays no tensor-map encoding.
  GemmParams raw_params = kernel.make_params(a, b, c, nullptr);
  GemmSm90Params raw_sm90_params;
  void* raw_block = &raw_params;
  if (config.family == GemmFamily::kSm90) {
    rt::check(kernel.make_sm90_params(a, b, c, nullptr, raw_sm90_params), "cuTensorMapEncodeTiled");
    raw_block = &raw_sm90_params;
  }
  // Alternate the two measurements so both see the same machine state.
  std::vector<double> runtime_us, raw_us;
  for (int rep = 0; rep < 5; ++rep) {
    runtime_us.push_back(time_batches([&] { runtime.gemm(p, a, b, c, stream.get()); }));
    raw_us.push_back(time_batches(
        [&] { rt::check(kernel.launch_main(raw_block, stream.get()), "cuLaunchKernel"); }));
  }
  std::sort(runtime_us.begin(), runtime_us.end());
  std::sort(raw_us.begin(), raw_us.end());
  result.runtime_us = runtime_us[runtime_us.size() / 2];
  result.raw_launch_us = raw_us[raw_us.size() / 2];
  return result;
}

}  // namespace kt::tune
