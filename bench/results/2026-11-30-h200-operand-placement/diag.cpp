// Diagnostic (not part of the project): one sm90 decode kernel timed the tuner's way and the
// bench's way in one process, to find where ~1 us of disagreement comes from.
#include <cstdio>
#include <algorithm>
#include <string>
#include <vector>
#include <functional>
#include <thread>
#include <memory>
#include <chrono>
#include <random>
#include "cache/database.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "generator/generated_source.hpp"
#include "runtime/context.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/device_query.hpp"
#include "runtime/gemm_kernel.hpp"
#include "gemm/gemm_params.h"
#include "runtime/module_cache.hpp"
#include "tuner/benchmark.hpp"
#include "tuner/cublaslt_gemm.hpp"
#include "tuner/gemm_workload.hpp"
using namespace kt;
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[v.size() / 2]; }
static void show(const char* what, const std::vector<double>& v) {
  std::printf("  %-44s median %7.2f  min %7.2f  n=%zu  first8:", what, med(v), *std::min_element(v.begin(), v.end()), v.size());
  for (size_t i = 0; i < v.size() && i < 8; ++i) std::printf(" %.1f", v[i]);
  std::printf("\n");
}
int main(int argc, char** argv) {
  if (argc < 3) { std::fprintf(stderr, "diag SHAPE KEY...\n"); return 2; }
  rt::BoundContext ctx(0);
  rt::ScopedCurrent cur(ctx.context());
  const GemmProblem p = parse_gemm_key(argv[1]);
  const DeviceDesc device = rt::query_current_device();
  rt::OwnedStream stream;
  rt::ModuleCache modules;
  tune::GemmWorkload work(p, device, nullptr, modules, stream.get(), 7, 32u << 20);
  tune::Bench bench(stream.get(), device, modules, nullptr);
  tune::CublasLtGemm lt(p, work.workspace(), work.workspace_bytes());
  auto lt_launch = [&](CUstream s) { return lt.launch(work.a(), work.b(), work.c(), s); };
  const std::size_t copy_bytes = (std::size_t(p.min_bytes() / 2) + 15) / 16 * 16;
  rt::DeviceBuffer cs(copy_bytes), cd(copy_bytes);
  auto copy_launch = [&](CUstream s) { return rt::driver().memcpy_dtod_async(cd.get(), cs.get(), copy_bytes, s); };
  std::vector<rt::GemmKernel> kernels;
  for (int i = 2; i < argc; ++i) {
    const GemmConfig c = parse_gemm_config_key(argv[i]);
    const auto src = gen::generate_gemm(p, c, device.arch());
    auto cubin = rt::get_or_compile(nullptr, src, true, false);
    kernels.emplace_back(p, c, modules.load(cubin.record));
  }

  const rt::CudaDriver& d = rt::driver();
  gen::GeneratedSource ps = gen::generate_l2_flush(device.arch());
  ps.name = "diag_clock";
  ps.code = "extern \"C\" __global__ void diag_clock(unsigned long long* out) {\n"
            "  unsigned long long g0, g1; long long c0 = clock64();\n"
            "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(g0));\n"
            "  do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(g1)); } while (g1 - g0 < 20000);\n"
            "  long long c1 = clock64(); out[0] = (unsigned long long)(c1 - c0); out[1] = g1 - g0; }\n";
  ps.name_expressions = {"diag_clock"};
  CUfunction clockk = modules.load(rt::get_or_compile(nullptr, ps, true, false).record).functions.at(0);
  rt::DeviceBuffer cbuf(16);
  auto clock_mhz = [&] {
    CUdeviceptr o = cbuf.get(); void* args[] = {&o};
    rt::check(d.launch_kernel(clockk, 1, 1, 1, 32, 1, 1, 0, stream.get(), args, nullptr), "clock");
    unsigned long long h[2];
    rt::check(d.stream_synchronize(stream.get()), "sync");
    rt::check(d.memcpy_dtoh(h, cbuf.get(), 16), "dtoh");
    return 1000.0 * double(h[0]) / double(h[1]);
  };
  // What sits between the start event and the first CTA (event time - kernel span), with the
  // flush as in the protocol, with the flush preferring the maximum shared-memory carveout, and
  // with a kernel that uses 200 KB of shared memory on every SM run after the flush.
  gen::GeneratedSource ss = gen::generate_l2_flush(device.arch());
  ss.name = "diag_smem";
  ss.code = "extern \"C\" __global__ void diag_smem(int* out) { extern __shared__ int s[]; s[threadIdx.x] = threadIdx.x; __syncthreads(); if (s[(threadIdx.x + 1) % blockDim.x] == -5) out[0] = 1; }\n";
  ss.name_expressions = {"diag_smem"};
  CUfunction smemk = modules.load(rt::get_or_compile(nullptr, ss, true, false).record).functions.at(0);
  rt::check(d.func_set_attribute(smemk, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200 * 1024), "attr");
  gen::GeneratedSource fs = gen::generate_l2_flush(device.arch());
  CUfunction flush2 = modules.load(rt::get_or_compile(nullptr, fs, true, false).record).functions.at(0);
  rt::DeviceBuffer fbuf(std::size_t(2 * device.l2_bytes)), sink(64);
  auto flush_with = [&](CUfunction f) {
    CUdeviceptr b = fbuf.get(), s = sink.get(); long long count = fbuf.bytes() / 16; unsigned never = 0x9e3779b9u;
    void* args[] = {&b, &count, &never, &s};
    rt::check(d.launch_kernel(f, 2 * device.num_sms, 1, 1, 512, 1, 1, 0, stream.get(), args, nullptr), "flush");
  };
  auto big_smem = [&] {
    CUdeviceptr s = sink.get(); void* args[] = {&s};
    rt::check(d.launch_kernel(smemk, device.num_sms, 1, 1, 256, 1, 1, 200 * 1024, stream.get(), args, nullptr), "smem");
  };
  rt::Event e0, e1;
  auto one = [&](const std::function<void()>& pre, const std::function<CUresult(CUstream)>& kl) {
    pre();
    rt::check(d.event_record(e0.get(), stream.get()), "rec");
    rt::check(kl(stream.get()), "k");
    rt::check(d.event_record(e1.get(), stream.get()), "rec");
    rt::check(d.event_synchronize(e1.get()), "sync");
    return 1000.0 * rt::elapsed_ms(e0, e1);
  };
  for (int i = 2; i < argc; ++i) {
    const GemmConfig c = parse_gemm_config_key(argv[i]);
    gen::GeneratedSource src = gen::generate_gemm(p, c, device.arch());
    src.options.push_back("-DKT_TRACE=1");
    src.name += ".trace";
    auto cubin = rt::get_or_compile(nullptr, src, true, false);
    const rt::GemmKernel k(p, c, modules.load(cubin.record));
    tune::GemmWorkload tw(p, device, nullptr, modules, stream.get(), 11, 64u << 20, tune::timing_operand_sets(p));
    const int ctas = std::min(int(k.plan().main.num_ctas()), kGemmTraceMaxCtas);
    const CUdeviceptr region = reinterpret_cast<CUdeviceptr>(tw.workspace()) + CUdeviceptr(kGemmFlagRegionBytes - kGemmTraceBytes);
    std::vector<unsigned long long> st(std::size_t(kGemmTraceMaxCtas) * kGemmTraceEvents);
    std::printf("%s: event us, span us, event - span, medians of 64 launches\n", argv[i]);
    auto run = [&](const char* what, const std::function<void()>& pre) {
      std::vector<double> ev, sp, gap;
      for (int l = 0; l < 64; ++l) {
        const tune::GemmOperands o = tw.operands(l % tw.num_operand_sets());
        const double t = one(pre, [&](CUstream s) { return k.launch(o.a, o.b, o.c, tw.workspace(), s); });
        rt::check(d.memcpy_dtoh(st.data(), region, std::size_t(kGemmTraceBytes)), "dtoh");
        unsigned long long lo = ~0ull, hi = 0;
        for (int b = 0; b < ctas; ++b) { auto t0 = st[std::size_t(b) * kGemmTraceEvents]; auto t6 = st[std::size_t(b) * kGemmTraceEvents + 6]; if (t0) lo = std::min(lo, t0); hi = std::max(hi, t6); }
        ev.push_back(t); sp.push_back((hi - lo) / 1000.0); gap.push_back(t - (hi - lo) / 1000.0);
      }
      std::printf("  %-44s %6.2f %6.2f %6.2f\n", what, med(ev), med(sp), med(gap));
    };
    for (int rep = 0; rep < 2; ++rep) {
      run("flush (protocol)", [&] { flush_with(flush2); });
      run("flush, then a 200 KB-smem kernel", [&] { flush_with(flush2); big_smem(); });
      run("no flush", [] {});
      run("200 KB-smem kernel only", [&] { big_smem(); });
    }
  }
  std::printf("copy (%zu bytes each way): event us, medians of 64\n", copy_bytes);
  for (int rep = 0; rep < 2; ++rep) {
    std::vector<double> a, b;
    for (int l = 0; l < 64; ++l) a.push_back(one([&] { flush_with(flush2); }, copy_launch));
    for (int l = 0; l < 64; ++l) b.push_back(one([&] { flush_with(flush2); big_smem(); }, copy_launch));
    std::printf("  flush %6.2f   flush + 200 KB-smem kernel %6.2f\n", med(a), med(b));
  }
  std::printf("cublasLt: event us, medians of 64\n");
  for (int rep = 0; rep < 2; ++rep) {
    std::vector<double> a, b;
    for (int l = 0; l < 64; ++l) a.push_back(one([&] { flush_with(flush2); }, lt_launch));
    for (int l = 0; l < 64; ++l) b.push_back(one([&] { flush_with(flush2); big_smem(); }, lt_launch));
    std::printf("  flush %6.2f   flush + 200 KB-smem kernel %6.2f\n", med(a), med(b));
  }
  return 0;
}
