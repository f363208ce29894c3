// The phase trace of one sm90 GEMM launch (see gemm_trace.hpp).
#include "ops/gemm/gemm_trace.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "ops/gemm/gemm_kernel.hpp"
#include "ops/gemm/gemm_source.hpp"
#include "ops/gemm/gemm_workload.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/device_query.hpp"
#include "runtime/module_cache.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/trace_stamps.hpp"

namespace kt::tune {

namespace {

// The timed phases in GemmTraceEvent order (gemm_params.h: the stamps' layout, shared with the
// kernel; the SM id follows them), and their per-CTA table's column heads.
constexpr const char* kPhaseNames[kGemmTraceTimedEvents] = {
    "entry",     "first load issued", "first stage full", "main loop done",
    "published", "flags ready",       "C stored",         "epoch read"};
constexpr const char* kPhaseLabels[kGemmTraceTimedEvents] = {"entry",   "load",  "full",   "loop",
                                                             "publish", "flags", "stored", "epoch"};
constexpr std::size_t kWorkspaceBytes = 64u << 20;

}  // namespace

void require_phase_marks(const GemmConfig& c) {
  if (c.family != GemmFamily::kSm90)
    throw Error(ErrorKind::kInvalidArgument,
                fmt::format("{}: only the sm90 family carries phase marks", to_key(c)));
}

KernelTrace trace_gemm(const GemmProblem& p, const GemmConfig& c, int reps) {
  require_phase_marks(c);
  const DeviceDesc device = rt::query_current_device();
  if (auto why = validate(p, c, device))
    throw Error(ErrorKind::kInvalidArgument, fmt::format("{}: {}", to_key(c), *why));
  if (sm90_splitk_flag_words(p, c) * 4 > kGemmFlagRegionBytes - kGemmTraceBytes)
    throw Error(ErrorKind::kInvalidArgument,
                fmt::format("{}: its split-K flags reach into the trace's part of the flag region",
                            to_key(c)));

  const rt::CubinResult cubin = compile_traced(gen::generate_gemm(p, c, device.arch()));
  rt::ModuleCache modules;
  const rt::GemmKernel kernel(p, c, modules.load(cubin.record));
  rt::OwnedStream stream;
  GemmWorkload work(p, device, nullptr, modules, stream.get(), 0, kWorkspaceBytes,
                    timing_operand_sets(p));
  Bench bench(stream.get(), device, modules, nullptr);
  TracedLaunch t;
  t.launch = rotating_launch(work.num_operand_sets(), [&](CUstream s, int set) {
    const GemmOperands o = work.operands(set);
    return kernel.launch(o.a, o.b, o.c, work.workspace(), s);
  });
  t.poison = [&] { work.poison_output(); };
  t.check = [&] { return work.check_output(); };
  t.grid = int(kernel.plan().main.num_ctas());
  t.max_ctas = kGemmTraceMaxCtas;
  t.stamps = reinterpret_cast<CUdeviceptr>(work.workspace()) +
             CUdeviceptr(kGemmFlagRegionBytes - kGemmTraceBytes);
  t.layout = {kGemmTraceEvents, kGemmTraceTimedEvents, kPhaseNames,      kPhaseLabels,
              kTraceSmId,       kTraceEntryCycles,     kTraceLoopCycles, kTraceMainLoopDone};
  return run_traced_launch(bench, stream.get(), t, reps);
}

}  // namespace kt::tune
