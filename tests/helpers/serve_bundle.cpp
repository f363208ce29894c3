// Serves calls from a shipped bundle as an application would, for the driver-only test
// (tests/gpu/driver_only_serving_test.cpp) and the GPU acceptance run: opens a read-only runtime
// that may not compile, allocates and fills each problem key's operands (GEMM, attention,
// RMSNorm), launches each once, and prints one JSON line: the open time, the first call's (its
// dispatch and launch, not its operands), each call's dispatch, and whether NVRTC was loaded.
// Exits 0 when every call was served from stored cubins without NVRTC, 1 when NVRTC was loaded
// or something compiled, 2 on a kt::Error (printed).
//   kt_serve_bundle BUNDLE PROBLEM_KEY...
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kerntune/kerntune.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_buffer.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Device memory of `bytes` (at least 256) filled with the byte 0x3C (a small non-zero value in
// bf16, fp16 and fp32), kept until the process ends.
void* filled(std::vector<kt::rt::DeviceBuffer>& buffers, std::size_t bytes) {
  buffers.emplace_back(std::max<std::size_t>(bytes, 256));
  // On the legacy default stream, which the launches use too.
  kt::rt::check(
      kt::rt::driver().memset_d8_async(buffers.back().get(), 0x3C, buffers.back().bytes(), nullptr),
      "cuMemsetD8Async");
  return buffers.back().data();
}

// The operands of `key` allocated and filled now, and the call that launches it on them.
std::function<void()> prepare_call(kt::Runtime& runtime, const std::string& key,
                                   std::vector<kt::rt::DeviceBuffer>& buffers) {
  if (key.rfind("gemm:", 0) == 0) {
    const kt::GemmProblem p = kt::parse_gemm_key(key);
    const std::size_t in = std::size_t(kt::size_bytes(p.in_dtype));
    const std::size_t out = std::size_t(kt::size_bytes(p.out_dtype));
    const kt::GemmCall call{filled(buffers, p.m * p.k * in), filled(buffers, p.n * p.k * in),
                            filled(buffers, p.m * p.n * out)};
    return [&runtime, key, call] { runtime.launch(key, "", &call); };
  }
  if (key.rfind("attn:", 0) == 0) {
    const kt::AttentionProblem p = kt::parse_attention_key(key);
    const std::size_t q = p.batch * p.seqlen_q * p.heads_q * p.head_dim * 2;
    const std::size_t kv = p.batch * p.seqlen_k * p.heads_kv * p.head_dim * 2;
    kt::AttentionTensors t;
    t.q = filled(buffers, q);
    t.k = filled(buffers, kv);
    t.v = filled(buffers, kv);
    t.o = filled(buffers, q);
    t.set_bnhd_strides(p);
    return [&runtime, p, t] { runtime.attention_forward(p, t); };
  }
  if (key.rfind("rmsnorm:", 0) == 0) {
    const kt::RmsnormProblem p = kt::parse_rmsnorm_key(key);
    const std::size_t bytes = p.rows * p.hidden * 2;
    kt::RmsnormTensors t;
    t.x = filled(buffers, bytes);
    t.weight = filled(buffers, p.hidden * 2);
    t.y = filled(buffers, bytes);
    if (p.residual) t.residual_out = const_cast<void*>(t.residual = filled(buffers, bytes));
    return [&runtime, p, t] { runtime.rmsnorm(p, t); };
  }
  kt::throw_invalid("kt_serve_bundle launches gemm, attention and rmsnorm keys, not " + key);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: kt_serve_bundle BUNDLE PROBLEM_KEY...\n");
    return 2;
  }
  try {
    kt::RuntimeOptions options;
    options.database_path = argv[1];
    options.read_only = true;
    options.compile_on_miss = false;
    const auto start = Clock::now();
    std::unique_ptr<kt::Runtime> runtime = kt::Runtime::open(options);
    const double open_ms = ms_since(start);
    std::vector<kt::rt::DeviceBuffer> buffers;
    std::vector<std::function<void()>> launches;
    for (int i = 2; i < argc; ++i) launches.push_back(prepare_call(*runtime, argv[i], buffers));
    kt::rt::check(kt::rt::driver().ctx_synchronize(), "cuCtxSynchronize");
    std::vector<std::string> calls;
    double first_call_ms = 0;
    for (int i = 2; i < argc; ++i) {
      const std::string key = argv[i];
      const auto call_start = Clock::now();
      launches[std::size_t(i - 2)]();
      if (i == 2) first_call_ms = ms_since(call_start);
      const kt::DispatchInfo info = runtime->prepare(key);
      calls.push_back(fmt::format(
          "{{\"problem\": \"{}\", \"grade\": \"{}\", \"config\": \"{}\", \"tuned_device\": "
          "\"{}\", \"compiled_now\": {}}}",
          key, info.grade, info.config_key, info.tuned_device, info.compiled_now));
    }
    kt::rt::check(kt::rt::driver().ctx_synchronize(), "cuCtxSynchronize");
    const kt::RuntimeStats stats = runtime->stats();
    fmt::print(
        "{{\"device\": \"{}\", \"open_ms\": {:.3f}, \"first_call_ms\": {:.3f}, \"calls\": [{}], "
        "\"cubins_from_database\": {}, \"cubins_compiled\": {}, \"nvrtc_loaded\": {}}}\n",
        runtime->device_fingerprint(), open_ms, first_call_ms, fmt::join(calls, ", "),
        stats.cubins_from_database, stats.cubins_compiled, stats.nvrtc_loaded);
    return stats.nvrtc_loaded || stats.cubins_compiled > 0 ? 1 : 0;
  } catch (const kt::Error& e) {
    std::fprintf(stderr, "kt_serve_bundle: %s: %s\n", kt::to_string(e.kind()), e.what());
    return 2;
  }
}
