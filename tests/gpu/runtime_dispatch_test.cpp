// The user's path on the GPU: a two-candidate tune writes the database, the runtime reopens it,
// dispatches the winner from its stored cubin (no NVRTC), computes the right answer, works
// inside CUDA graph capture, and the C ABI reports bad arguments as errors; benchmark mode times
// an untuned shape's first call.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "core/versions.hpp"
#include "gpu/gpu_fixture.hpp"
#include "kerntune/kerntune.h"
#include "kerntune/kerntune.hpp"
#include "ops/gemm/gemm_workload.hpp"
#include "tuner/problem_tuner.hpp"
#include "tuner/run_ledger.hpp"

namespace kt {
namespace {

std::string temp_db(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kt_gpu_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::create_directories(dir);
  return (dir / "kerntune.db").string();
}

using RuntimeDispatch = testing::GpuTest;

// `p` through the runtime captured into a graph on `stream` (in `mode`), the graph launched, and
// C (poisoned first) checked.
void capture_and_replay(Runtime& runtime, const GemmProblem& p, tune::GemmWorkload& work,
                        CUstream stream, CUstreamCaptureMode mode) {
  work.poison_output();
  const rt::CudaDriver& d = rt::driver();
  ASSERT_EQ(d.stream_synchronize(stream), CUDA_SUCCESS);
  ASSERT_EQ(d.stream_begin_capture(stream, mode), CUDA_SUCCESS);
  runtime.gemm(p, work.a(), work.b(), work.c(), stream);
  CUgraph graph = nullptr;
  ASSERT_EQ(d.stream_end_capture(stream, &graph), CUDA_SUCCESS);
  CUgraphExec exec = nullptr;
  ASSERT_EQ(d.graph_instantiate(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(d.graph_launch(exec, stream), CUDA_SUCCESS);
  const tune::OutputCheck replay = work.check_output();
  EXPECT_TRUE(replay.passed) << replay.detail;
  d.graph_exec_destroy(exec);
  d.graph_destroy(graph);
}

TEST_F(RuntimeDispatch, TwoCandidateTuneRoundTripsThroughDatabaseAndRuntime) {
  const std::string path = temp_db("roundtrip");
  GemmProblem p;
  parse_gemm_shape("1000x1536x512", p);
  std::string winner;
  {
    cache::Database db = cache::Database::open(path);
    tune::TuneOptions o;
    o.configs = {"sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1",
                 "sm80.bm64.bn64.bk64.wm32.wn32.s3.g1.sk1"};
    const tune::TuneReport report = tune::tune_problem(to_key(p), db, o);
    ASSERT_TRUE(report.winner.has_value());
    winner = report.candidates[*report.winner].config_key;
    // Each candidate has its first-pass row and, as both are finalists, a row of the
    // interleaved re-measurement (told apart by its detail); the winner is the faster finalist.
    const cache::TuningKey key{to_key(p), device_.fingerprint(), kBenchmarkProtocolVersion,
                               kGemmTemplateVersion};
    std::multiset<std::string> first_pass, finalists;
    std::map<std::string, double> finalist_us;
    for (const cache::Measurement& m : db.measurements(key)) {
      EXPECT_EQ(m.status, cache::Status::kOk) << m.config_key << ": " << m.detail;
      EXPECT_EQ(m.run_id, report.run_id);
      if (m.detail == tune::kFinalistDetail) {
        finalists.insert(m.config_key);
        finalist_us[m.config_key] = m.median_us;
      } else {
        first_pass.insert(m.config_key);
      }
    }
    const std::multiset<std::string> both = {o.configs[0], o.configs[1]};
    EXPECT_EQ(first_pass, both);
    EXPECT_EQ(finalists, both);
    const auto stored = db.find_winner(key);
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(stored->config_key, winner);
    EXPECT_EQ(stored->median_us, finalist_us[winner]);
    for (const auto& [config, us] : finalist_us) EXPECT_LE(stored->median_us, us) << config;
  }
  RuntimeOptions ro;
  ro.database_path = path;
  ro.compile_on_miss = false;  // the winner's cubin must come from the database
  auto runtime = Runtime::open(ro);
  const DispatchInfo info = runtime->prepare_gemm(p);
  EXPECT_EQ(info.grade, "exact");
  EXPECT_EQ(info.config_key, winner);
  EXPECT_FALSE(info.compiled_now);

  rt::ModuleCache modules;
  CUstream stream = nullptr;
  ASSERT_EQ(rt::driver().stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  {
    tune::GemmWorkload work(
        p, device_, nullptr, modules, stream,
        std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()), 0);
    work.poison_output();
    runtime->gemm(p, work.a(), work.b(), work.c(), stream);
    const tune::OutputCheck check = work.check_output();
    EXPECT_TRUE(check.passed) << check.detail;

    // Graph capture: the prepared shape launches inside capture and replays correctly.
    capture_and_replay(*runtime, p, work, stream, CU_STREAM_CAPTURE_MODE_GLOBAL);

    // An untuned shape still dispatches (nearest tuned shape re-scored, or the model).
    GemmProblem other = p;
    other.m = 999;
    const DispatchInfo other_info = runtime->prepare_gemm(other);
    EXPECT_NE(other_info.grade, "exact");
  }
  rt::driver().stream_destroy(stream);
}

// Benchmark mode: an untuned shape's first call times the chain's first configs on its own
// tensors and serves the fastest, with the right answer; prepare (no tensors) and a first call
// inside stream capture (nothing may wait for a capturing stream) are served from the chain.
TEST_F(RuntimeDispatch, BenchmarkModeTimesAnUntunedShapesFirstCall) {
  RuntimeOptions ro;
  ro.database_path = temp_db("benchmark");
  ro.benchmark_candidates = 4;
  auto runtime = Runtime::open(ro);
  rt::ModuleCache modules;
  CUstream stream = nullptr;
  ASSERT_EQ(rt::driver().stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  const auto seed = [] {
    return std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  };
  GemmProblem p;
  parse_gemm_shape("999x1536x520", p);
  {
    tune::GemmWorkload work(p, device_, nullptr, modules, stream, seed(), 0);
    work.poison_output();
    runtime->gemm(p, work.a(), work.b(), work.c(), stream);
    const tune::OutputCheck check = work.check_output();
    EXPECT_TRUE(check.passed) << check.detail;
  }
  const DispatchInfo info = runtime->prepare_gemm(p);
  EXPECT_EQ(info.grade, "benchmarked");
  EXPECT_GE(info.configs_timed, 2);
  EXPECT_LE(info.configs_timed, 4);
  EXPECT_FALSE(info.predicted);
  EXPECT_EQ(runtime->stats().kernels_by_grade["benchmarked"], 1);

  GemmProblem prepared = p;
  prepared.m = 1001;
  EXPECT_NE(runtime->prepare_gemm(prepared).grade, "benchmarked");

  GemmProblem captured = p;
  captured.m = 777;
  {
    tune::GemmWorkload work(captured, device_, nullptr, modules, stream, seed(), 0);
    capture_and_replay(*runtime, captured, work, stream, CU_STREAM_CAPTURE_MODE_RELAXED);
  }
  EXPECT_NE(runtime->prepare_gemm(captured).grade, "benchmarked");
  rt::driver().stream_destroy(stream);
}

TEST_F(RuntimeDispatch, CApiReportsBadArgumentsAsErrorsWithMessages) {
  const std::string path = temp_db("capi");
  kt_runtime* runtime = nullptr;
  ASSERT_EQ(kt_runtime_open(path.c_str(), 0, &runtime), KT_SUCCESS) << kt_last_error();
  EXPECT_EQ(kt_gemm(runtime, 0, 64, 64, KT_DTYPE_BF16, KT_DTYPE_BF16, KT_LAYOUT_NT, nullptr,
                    nullptr, nullptr, nullptr),
            KT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kt_last_error()).find("M"), std::string::npos) << kt_last_error();
  EXPECT_EQ(kt_gemm(runtime, 64, 64, 64, KT_DTYPE_BF16, KT_DTYPE_BF16, KT_LAYOUT_NT, nullptr,
                    nullptr, nullptr, nullptr),
            KT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kt_last_error()).find("null"), std::string::npos) << kt_last_error();
  EXPECT_EQ(kt_gemm(nullptr, 64, 64, 64, KT_DTYPE_BF16, KT_DTYPE_BF16, KT_LAYOUT_NT, nullptr,
                    nullptr, nullptr, nullptr),
            KT_ERROR_INVALID_ARGUMENT);
  rt::DeviceBuffer buffer(1 << 20);
  const char* base = static_cast<const char*>(buffer.data());
  EXPECT_EQ(kt_gemm(runtime, 64, 64, 64, KT_DTYPE_BF16, KT_DTYPE_BF16, KT_LAYOUT_NT, base + 2,
                    base + 65536, buffer.data(), nullptr),
            KT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kt_last_error()).find("aligned"), std::string::npos) << kt_last_error();
  // Once the problem's kernel is kept, the warm path checks the call by its parsed problem: the
  // same errors.
  ASSERT_EQ(kt_gemm(runtime, 64, 64, 64, KT_DTYPE_BF16, KT_DTYPE_BF16, KT_LAYOUT_NT, base,
                    base + 65536, static_cast<char*>(buffer.data()) + 131072, nullptr),
            KT_SUCCESS)
      << kt_last_error();
  EXPECT_EQ(kt_gemm(runtime, 64, 64, 64, KT_DTYPE_BF16, KT_DTYPE_BF16, KT_LAYOUT_NT, base + 2,
                    base + 65536, static_cast<char*>(buffer.data()) + 131072, nullptr),
            KT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kt_last_error()).find("aligned"), std::string::npos) << kt_last_error();
  EXPECT_EQ(kt_gemm(runtime, 64, 64, 64, KT_DTYPE_BF16, KT_DTYPE_BF16, KT_LAYOUT_NT, base, nullptr,
                    static_cast<char*>(buffer.data()) + 131072, nullptr),
            KT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kt_last_error()).find("null"), std::string::npos) << kt_last_error();
  kt_runtime_close(runtime);
}

}  // namespace
}  // namespace kt
