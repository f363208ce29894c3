// The C++ side of the package test: uses the public API of an installed kerntune. Prints
// kt_version() and two problem keys (a GEMM's, an attention backward's); then opens a runtime,
// which on a machine without a GPU throws kt::Error (caught here by type, across the library
// boundary) and with one prints the device and the dispatch of a 4096^3 GEMM.
#include <kerntune/kerntune.h>

#include <cstdio>
#include <kerntune/kerntune.hpp>
#include <memory>

int main() {
  std::printf("kerntune %s\n", kt_version());

  kt::GemmProblem problem;
  kt::parse_gemm_shape("4096x4096x4096", problem);
  kt::validate(problem);
  std::printf("problem %s (%.3g GFLOP)\n", kt::to_key(problem).c_str(), problem.flops() / 1e9);
  kt::AttentionBackwardProblem backward{.causal = true, .deterministic = true};
  kt::parse_attention_backward_shape("b=2,hq=16,hkv=4,s=1024,d=128", backward);
  std::printf("problem %s (%.3g GFLOP)\n", kt::to_key(backward).c_str(), backward.flops() / 1e9);

  try {
    kt::RuntimeOptions options;
    options.read_only = true;  // never create or write a database from a test
    const std::unique_ptr<kt::Runtime> runtime = kt::Runtime::open(options);
    std::printf("runtime on %s\n", runtime->device_fingerprint().c_str());
    const kt::DispatchInfo info = runtime->prepare_gemm(problem);
    std::printf("dispatch %s grade=%s compiled_now=%d\n", info.config_key.c_str(),
                info.grade.c_str(), int(info.compiled_now));
  } catch (const kt::Error& e) {
    std::printf("no runtime here (%s): %s\n", kt::to_string(e.kind()), e.what());
  }
  return 0;
}
