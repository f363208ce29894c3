// The phase trace of one fa3 attention-forward launch (see attention_trace.hpp).
#include "ops/attention/attention_trace.hpp"

#include <fmt/format.h>

#include <cstddef>

#include "attention/attention_params.h"
#include "core/error.hpp"
#include "ops/attention/attention_kernel.hpp"
#include "ops/attention/attention_source.hpp"
#include "ops/attention/attention_workload.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/device_query.hpp"
#include "runtime/module_cache.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/trace_stamps.hpp"

namespace kt::tune {

namespace {

// The timed phases in AttentionTraceEvent order (attention_params.h: the stamps' layout, shared
// with the kernel), and their per-CTA table's column heads.
constexpr const char* kPhaseNames[kAttnTraceTimedEvents] = {
    "entry", "Q landed", "first S done", "main loop done", "O stored", "CTA done"};
constexpr const char* kPhaseLabels[kAttnTraceTimedEvents] = {"entry", "q",      "s",
                                                             "loop",  "stored", "done"};

}  // namespace

void require_phase_marks(const AttentionConfig& c) {
  if (c.family != AttentionFamily::kSm90)
    throw Error(ErrorKind::kInvalidArgument,
                fmt::format("{}: only the fa3 family of attention carries phase marks", to_key(c)));
}

KernelTrace trace_attention(const AttentionProblem& p, const AttentionConfig& c, int reps) {
  require_phase_marks(c);
  const DeviceDesc device = rt::query_current_device();
  if (auto why = validate(p, c, device))
    throw Error(ErrorKind::kInvalidArgument, fmt::format("{}: {}", to_key(c), *why));

  const rt::CubinResult cubin = compile_traced(gen::generate_attention(p, c, false, device.arch()));
  rt::ModuleCache modules;
  const rt::AttentionKernel kernel(p, c, modules.load(cubin.record));
  rt::OwnedStream stream;
  AttentionWorkload work(p, device, nullptr, modules, stream.get(), 0);
  const AttentionTensors tensors = work.tensors(false);
  rt::DeviceBuffer workspace;
  if (kernel.workspace_bytes() > 0)
    workspace = rt::DeviceBuffer(std::size_t(kernel.workspace_bytes()));
  constexpr std::size_t kStampBytes = std::size_t(kAttnTraceMaxCtas) * kAttnTraceEvents * 8;
  rt::DeviceBuffer stamps_buffer(kStampBytes);
  rt::check(rt::driver().memset_d8_async(stamps_buffer.get(), 0, kStampBytes, stream.get()),
            "cuMemsetD8Async(trace)");
  auto* stamps_at = static_cast<unsigned long long*>(stamps_buffer.data());
  Bench bench(stream.get(), device, modules, nullptr);
  TracedLaunch t;
  t.launch = [&](CUstream s) { return kernel.launch(tensors, workspace.get(), s, stamps_at); };
  t.poison = [&] { work.poison_output(); };
  t.check = [&] { return work.check_output(false); };
  t.grid = int(kernel.plan().num_ctas());
  t.max_ctas = kAttnTraceMaxCtas;
  t.stamps = stamps_buffer.get();
  t.layout = {kAttnTraceEvents,     kAttnTraceTimedEvents, kPhaseNames,
              kPhaseLabels,         kAttnTraceSmId,        kAttnTraceEntryCycles,
              kAttnTraceLoopCycles, kAttnTraceLoopDone,    kAttnTraceTiles};
  return run_traced_launch(bench, stream.get(), t, reps);
}

}  // namespace kt::tune
