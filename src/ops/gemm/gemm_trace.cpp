// The phase trace of one sm90 GEMM launch (see gemm_trace.hpp).
#include "ops/gemm/gemm_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>

#include "core/error.hpp"
#include "generator/generated_source.hpp"
#include "ops/gemm/gemm_kernel.hpp"
#include "ops/gemm/gemm_source.hpp"
#include "ops/gemm/gemm_workload.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/device_query.hpp"
#include "runtime/module_cache.hpp"
#include "tuner/benchmark.hpp"

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

double percentile(const std::vector<double>& sorted, double q) {
  return sorted[std::size_t(q * double(sorted.size() - 1) + 0.5)];
}

// The values `of` gives for the CTAs that stamped one (non-negative), in ascending order.
template <typename Of>
std::vector<double> sorted_stamped(const std::vector<KernelTraceCta>& ctas, Of of) {
  std::vector<double> values;
  for (const KernelTraceCta& cta : ctas)
    if (const double v = of(cta); v >= 0) values.push_back(v);
  std::sort(values.begin(), values.end());
  return values;
}

// One CTA's SM clock between its entry and main-loop-done marks (cycles of %clock64 per
// microsecond of %globaltimer), or -1 where either moment lacks a stamp.
double sm_clock_mhz(const unsigned long long* cta_stamps) {
  const unsigned long long t0 = cta_stamps[kTraceEntry], t1 = cta_stamps[kTraceMainLoopDone];
  const unsigned long long c0 = cta_stamps[kTraceEntryCycles], c1 = cta_stamps[kTraceLoopCycles];
  if (t0 == 0 || t1 <= t0 || c0 == 0 || c1 <= c0) return -1;
  return double(c1 - c0) * 1000.0 / double(t1 - t0);
}

}  // namespace

KernelTrace trace_gemm(const GemmProblem& p, const GemmConfig& c, int reps) {
  if (c.family != GemmFamily::kSm90)
    throw Error(ErrorKind::kInvalidArgument,
                fmt::format("{}: only the sm90 family carries phase marks", to_key(c)));
  const DeviceDesc device = rt::query_current_device();
  if (auto why = validate(p, c, device))
    throw Error(ErrorKind::kInvalidArgument, fmt::format("{}: {}", to_key(c), *why));
  if (sm90_splitk_flag_words(p, c) * 4 > kGemmFlagRegionBytes - kGemmTraceBytes)
    throw Error(ErrorKind::kInvalidArgument,
                fmt::format("{}: its split-K flags reach into the trace's part of the flag region",
                            to_key(c)));

  gen::GeneratedSource source = gen::generate_gemm(p, c, device.arch());
  source.options.push_back("-DKT_TRACE=1");
  source.name += ".trace";
  const rt::CubinResult cubin = rt::get_or_compile(nullptr, source, true, false);
  rt::ModuleCache modules;
  const rt::GemmKernel kernel(p, c, modules.load(cubin.record));
  rt::OwnedStream stream;
  GemmWorkload work(p, device, nullptr, modules, stream.get(), 0, kWorkspaceBytes,
                    timing_operand_sets(p));
  Bench bench(stream.get(), device, modules, nullptr);
  const auto launch = rotating_launch(work.num_operand_sets(), [&](CUstream s, int set) {
    const GemmOperands o = work.operands(set);
    return kernel.launch(o.a, o.b, o.c, work.workspace(), s);
  });

  KernelTrace trace;
  trace.grid = int(kernel.plan().main.num_ctas());
  work.poison_output();
  rt::check(launch(stream.get()), "cuLaunchKernel(traced gemm)");
  const OutputCheck check = work.check_output();
  trace.check_passed = check.passed;
  trace.check_detail = check.detail;
  std::vector<double> samples = bench.sample(launch, std::max(reps, 1));
  std::sort(samples.begin(), samples.end());
  trace.median_us = samples[samples.size() / 2];
  trace.min_us = samples.front();

  std::vector<unsigned long long> stamps(std::size_t(kGemmTraceMaxCtas) * kGemmTraceEvents);
  rt::check(rt::driver().stream_synchronize(stream.get()), "cuStreamSynchronize");
  const CUdeviceptr region = reinterpret_cast<CUdeviceptr>(work.workspace()) +
                             CUdeviceptr(kGemmFlagRegionBytes - kGemmTraceBytes);
  rt::check(rt::driver().memcpy_dtoh(stamps.data(), region, std::size_t(kGemmTraceBytes)),
            "cuMemcpyDtoH(trace)");
  const int ctas = std::min(trace.grid, kGemmTraceMaxCtas);
  unsigned long long origin = ~0ull;
  for (int b = 0; b < ctas; ++b)
    if (stamps[std::size_t(b) * kGemmTraceEvents] != 0)
      origin = std::min(origin, stamps[std::size_t(b) * kGemmTraceEvents]);
  const auto stamp_us = [&](int b, int e) {
    const unsigned long long t = stamps[std::size_t(b) * kGemmTraceEvents + e];
    return t != 0 && t >= origin ? double(t - origin) / 1000.0 : -1.0;
  };
  trace.event_labels.assign(std::begin(kPhaseLabels), std::end(kPhaseLabels));
  for (int b = 0; b < ctas; ++b) {
    KernelTraceCta cta;
    cta.cta = b;
    cta.sm = int(stamps[std::size_t(b) * kGemmTraceEvents + kTraceSmId]) - 1;
    for (int e = 0; e < kGemmTraceTimedEvents; ++e) cta.us.push_back(stamp_us(b, e));
    cta.sm_mhz = sm_clock_mhz(&stamps[std::size_t(b) * kGemmTraceEvents]);
    trace.ctas.push_back(std::move(cta));
  }
  const std::vector<double> mhz =
      sorted_stamped(trace.ctas, [](const KernelTraceCta& cta) { return cta.sm_mhz; });
  if (!mhz.empty()) {
    trace.sm_mhz_p10 = percentile(mhz, 0.1);
    trace.sm_mhz_median = percentile(mhz, 0.5);
    trace.sm_mhz_p90 = percentile(mhz, 0.9);
  }
  for (int e = 0; e < kGemmTraceTimedEvents; ++e) {
    const std::vector<double> us = sorted_stamped(
        trace.ctas, [e](const KernelTraceCta& cta) { return cta.us[std::size_t(e)]; });
    if (us.empty()) continue;
    trace.phases.push_back({kPhaseNames[e], int(us.size()), us.front(), percentile(us, 0.1),
                            percentile(us, 0.5), percentile(us, 0.9), us.back()});
  }
  return trace;
}

}  // namespace kt::tune
