// Diagnostic (not part of the project): is an sm90 kernel's fixed cost (first load ~0.9 us after
// entry, the split-K tail's sum) its instructions arriving cold from DRAM after the protocol's
// flush? Per rep, interleaved: A = flush, timed launch; B = flush, the same kernel on a tiny
// problem (code into L2), timed launch; D = flush, another config's kernel on the tiny problem,
// timed launch (the control for the extra launch). Phases from the traced build, per launch the
// median over CTAs, then the median over reps.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "generator/generated_source.hpp"
#include "gemm/gemm_params.h"
#include "runtime/context.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"
#include "runtime/gemm_kernel.hpp"
#include "runtime/module_cache.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/gemm_workload.hpp"
using namespace kt;
static double med(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
int main(int argc, char** argv) {
  if (argc < 5) { std::fprintf(stderr, "icache SHAPE KEY TINY_SHAPE OTHER_KEY\n"); return 2; }
  rt::BoundContext ctx(0);
  rt::ScopedCurrent cur(ctx.context());
  GemmProblem p, tiny;
  parse_gemm_shape(argv[1], p);
  parse_gemm_shape(argv[3], tiny);
  const GemmConfig c = parse_gemm_config_key(argv[2]);
  const GemmConfig other = parse_gemm_config_key(argv[4]);
  const DeviceDesc device = rt::query_current_device();
  rt::ModuleCache modules;
  auto traced = [&](const GemmProblem& q, const GemmConfig& k) {
    gen::GeneratedSource s = gen::generate_gemm(q, k, device.arch());
    s.options.push_back("-DKT_TRACE=1");
    s.name += ".trace";
    return modules.load(rt::get_or_compile(nullptr, s, true, false).record);
  };
  const auto& mod = traced(p, c);
  const rt::GemmKernel kernel(p, c, mod);
  const rt::GemmKernel warm_same(tiny, c, mod);
  const rt::GemmKernel warm_other(tiny, other, traced(tiny, other));
  rt::OwnedStream stream;
  tune::GemmWorkload work(p, device, nullptr, modules, stream.get(), 0, 64u << 20);
  tune::GemmWorkload small(tiny, device, nullptr, modules, stream.get(), 1, 64u << 20);
  tune::Bench bench(stream.get(), device, modules, nullptr);
  auto timed = [&](CUstream s) { return kernel.launch(work.a(), work.b(), work.c(), work.workspace(), s); };
  auto pre = [&](const rt::GemmKernel& k) {
    return [&, kp = &k](CUstream s) {
      CUresult r = kp->launch(small.a(), small.b(), small.c(), small.workspace(), s);
      return r != CUDA_SUCCESS ? r : timed(s);
    };
  };
  const std::function<CUresult(CUstream)> modes[3] = {timed, pre(warm_same), pre(warm_other)};
  const char* names[3] = {"A flush, launch", "B flush, same code tiny, launch", "D flush, other code tiny, launch"};
  std::vector<double> event[3];
  std::vector<double> phase[3][kGemmTraceEvents];
  std::vector<unsigned long long> st(std::size_t(kGemmTraceMaxCtas) * kGemmTraceEvents);
  const int ctas = std::min(int(kernel.plan().main.num_ctas()), kGemmTraceMaxCtas);
  for (int rep = 0; rep < 40; ++rep)
    for (int m = 0; m < 3; ++m) {
      event[m].push_back(bench.sample(modes[m], 1).at(0));
      rt::check(rt::driver().stream_synchronize(stream.get()), "sync");
      rt::check(rt::driver().memcpy_dtoh(st.data(), reinterpret_cast<CUdeviceptr>(work.workspace()) +
                                             CUdeviceptr(kGemmFlagRegionBytes - kGemmTraceBytes),
                                         std::size_t(kGemmTraceBytes)), "dtoh");
      unsigned long long origin = ~0ull;
      for (int b = 0; b < ctas; ++b) if (st[b * kGemmTraceEvents]) origin = std::min(origin, st[b * kGemmTraceEvents]);
      for (int e = 0; e < kGemmTraceEvents; ++e) {
        std::vector<double> us;
        for (int b = 0; b < ctas; ++b) {
          const unsigned long long t = st[b * kGemmTraceEvents + e];
          if (t && t >= origin) us.push_back(double(t - origin) / 1000.0);
        }
        if (!us.empty()) phase[m][e].push_back(med(us));
      }
    }
  const char* pn[kGemmTraceEvents] = {"entry", "first load", "first full", "main done", "published", "flags ready", "C stored", "epoch"};
  std::printf("%s %s (tiny %s, other %s), %d CTAs traced\n", argv[1], argv[2], argv[3], argv[4], ctas);
  for (int m = 0; m < 3; ++m) {
    std::printf("  %-34s event %7.2f us |", names[m], med(event[m]));
    for (int e = 1; e < kGemmTraceEvents; ++e) if (!phase[m][e].empty()) std::printf(" %s %.2f", pn[e], med(phase[m][e]));
    std::printf("\n");
  }
  return 0;
}
