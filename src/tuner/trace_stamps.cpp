// Per-CTA trace stamps into a KernelTrace (see trace_stamps.hpp).
#include "tuner/trace_stamps.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "runtime/cuda_driver.hpp"

namespace kt::tune {

namespace {

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

// One CTA's SM clock between its entry and loop-done stamps (cycles of %clock64 per microsecond
// of %globaltimer), or -1 where either moment lacks a stamp.
double sm_clock_mhz(const unsigned long long* cta, const TraceStampLayout& l) {
  const unsigned long long t0 = cta[0], t1 = cta[l.loop_done_event];
  const unsigned long long c0 = cta[l.entry_cycles_slot], c1 = cta[l.loop_cycles_slot];
  if (t0 == 0 || t1 <= t0 || c0 == 0 || c1 <= c0) return -1;
  return double(c1 - c0) * 1000.0 / double(t1 - t0);
}

// Fills trace.event_labels, ctas, phases and the SM clock percentiles from `stamps` ([CTA][slot]
// of the first `ctas` CTAs).
void read_trace_stamps(KernelTrace& trace, const std::vector<unsigned long long>& stamps, int ctas,
                       const TraceStampLayout& l) {
  const auto slot = [&](int b, int s) { return stamps[std::size_t(b) * l.events + s]; };
  unsigned long long origin = ~0ull;
  for (int b = 0; b < ctas; ++b)
    if (slot(b, 0) != 0) origin = std::min(origin, slot(b, 0));
  const auto stamp_us = [&](int b, int e) {
    const unsigned long long t = slot(b, e);
    return t != 0 && t >= origin ? double(t - origin) / 1000.0 : -1.0;
  };
  trace.event_labels.assign(l.labels, l.labels + l.timed_events);
  for (int b = 0; b < ctas; ++b) {
    KernelTraceCta cta;
    cta.cta = b;
    cta.sm = int(slot(b, l.sm_id_slot)) - 1;
    for (int e = 0; e < l.timed_events; ++e) cta.us.push_back(stamp_us(b, e));
    cta.sm_mhz = sm_clock_mhz(&stamps[std::size_t(b) * l.events], l);
    if (l.units_slot >= 0) cta.units = int(slot(b, l.units_slot));
    trace.ctas.push_back(std::move(cta));
  }
  const std::vector<double> mhz =
      sorted_stamped(trace.ctas, [](const KernelTraceCta& cta) { return cta.sm_mhz; });
  if (!mhz.empty()) {
    trace.sm_mhz_p10 = percentile(mhz, 0.1);
    trace.sm_mhz_median = percentile(mhz, 0.5);
    trace.sm_mhz_p90 = percentile(mhz, 0.9);
  }
  for (int e = 0; e < l.timed_events; ++e) {
    const std::vector<double> us = sorted_stamped(
        trace.ctas, [e](const KernelTraceCta& cta) { return cta.us[std::size_t(e)]; });
    if (us.empty()) continue;
    trace.phases.push_back({l.names[e], int(us.size()), us.front(), percentile(us, 0.1),
                            percentile(us, 0.5), percentile(us, 0.9), us.back()});
  }
}

}  // namespace

rt::CubinResult compile_traced(gen::GeneratedSource source) {
  source.options.push_back("-DKT_TRACE=1");
  source.name += ".trace";
  return rt::get_or_compile(nullptr, source, true, false);
}

KernelTrace run_traced_launch(Bench& bench, CUstream stream, const TracedLaunch& t, int reps) {
  KernelTrace trace;
  trace.grid = t.grid;
  t.poison();
  rt::check(t.launch(stream), "cuLaunchKernel(traced kernel)");
  const OutputCheck check = t.check();
  trace.check_passed = check.passed;
  trace.check_detail = check.detail;
  std::vector<double> samples = bench.sample(t.launch, std::max(reps, 1));
  std::sort(samples.begin(), samples.end());
  trace.median_us = samples[samples.size() / 2];
  trace.min_us = samples.front();
  std::vector<unsigned long long> stamps(std::size_t(t.max_ctas) * t.layout.events);
  rt::check(rt::driver().stream_synchronize(stream), "cuStreamSynchronize");
  rt::check(rt::driver().memcpy_dtoh(stamps.data(), t.stamps, stamps.size() * 8),
            "cuMemcpyDtoH(trace)");
  read_trace_stamps(trace, stamps, std::min(t.grid, t.max_ctas), t.layout);
  return trace;
}

}  // namespace kt::tune
