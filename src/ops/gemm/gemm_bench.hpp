// `kerntune bench` for GEMM: the kernel the runtime dispatches and cuBLASLt, on the same fresh
// random inputs, both verified, timed interleaved with the same protocol in one process; and the
// runtime's dispatch overhead over a raw launch.
#pragma once

#include <string>

#include "kerntune/kerntune.hpp"
#include "tuner/op_bench.hpp"

namespace kt::tune {

OpBenchRow bench_gemm(Runtime& runtime, const GemmProblem& problem, const OpBenchOptions& o);

DispatchOverhead measure_dispatch_overhead(Runtime& runtime, const GemmProblem& problem,
                                           const std::string& database_path);

}  // namespace kt::tune
