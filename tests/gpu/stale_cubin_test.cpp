// A stored cubin that the driver refuses (garbage under the right compile key, as a damaged file
// or a cubin for another architecture would be) is rebuilt from source: dispatch still computes
// the right answer, a writable database gets the row replaced, a read-only one is left alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>

#include "cache/database.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "gpu/gpu_fixture.hpp"
#include "kerntune/kerntune.hpp"
#include "ops/gemm/gemm_source.hpp"
#include "ops/gemm/gemm_workload.hpp"
#include "runtime/module_cache.hpp"

namespace kt {
namespace {

using StaleCubin = testing::GpuTest;

std::string temp_db(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kt_gpu_stale_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return (dir / "kerntune.db").string();
}

std::vector<char> garbage_cubin() {
  std::mt19937 random(std::random_device{}());
  std::vector<char> bytes(4096);
  for (char& c : bytes) c = static_cast<char>(random() & 0xff);
  bytes[0] = 'X';  // never an ELF header by chance
  return bytes;
}

// Dispatches `p` from the database at `path`, checks the output against the reference, and
// returns what dispatch reported.
DispatchInfo dispatch_and_check(const GemmProblem& p, const DeviceDesc& device,
                                const std::string& path, bool read_only) {
  RuntimeOptions options;
  options.database_path = path;
  options.read_only = read_only;
  auto runtime = Runtime::open(options);
  const DispatchInfo info = runtime->prepare_gemm(p);
  rt::ModuleCache modules;
  CUstream stream = nullptr;
  EXPECT_EQ(rt::driver().stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  {
    tune::GemmWorkload work(
        p, device, nullptr, modules, stream,
        std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()), 0);
    work.poison_output();
    runtime->gemm(p, work.a(), work.b(), work.c(), stream);
    const tune::OutputCheck check = work.check_output();
    EXPECT_TRUE(check.passed) << check.detail;
  }
  rt::driver().stream_destroy(stream);
  return info;
}

// Overwrites the stored cubin of `config_key` for `p` with garbage; returns its compile key.
std::string damage_cubin(const std::string& path, const GemmProblem& p,
                         const std::string& config_key, const DeviceDesc& device,
                         const std::vector<char>& garbage) {
  const std::string key =
      gen::compile_key(gen::generate_gemm(p, parse_gemm_config_key(config_key), device.arch()));
  cache::Database db = cache::Database::open(path);
  std::optional<cache::CubinRecord> record = db.find_cubin(key);
  EXPECT_TRUE(record.has_value()) << "no cubin stored under " << key;
  if (!record) return key;
  record->cubin = garbage;
  db.put_cubin(*record);
  return key;
}

TEST_F(StaleCubin, GarbageCubinIsRebuiltAndItsRowReplaced) {
  const std::string path = temp_db("writable");
  GemmProblem p;
  parse_gemm_shape("768x512x256", p);
  const std::string config_key = dispatch_and_check(p, device_, path, false).config_key;
  const std::vector<char> garbage = garbage_cubin();
  const std::string key = damage_cubin(path, p, config_key, device_, garbage);

  const DispatchInfo info = dispatch_and_check(p, device_, path, false);
  EXPECT_EQ(info.config_key, config_key);
  EXPECT_TRUE(info.compiled_now);
  const std::optional<cache::CubinRecord> replaced = cache::Database::open(path).find_cubin(key);
  ASSERT_TRUE(replaced.has_value());
  EXPECT_NE(replaced->cubin, garbage);
  ASSERT_GE(replaced->cubin.size(), 4u);
  EXPECT_EQ(std::string(replaced->cubin.data(), 4),
            "\x7f"
            "ELF");

  // The replaced row now serves without compiling.
  EXPECT_FALSE(dispatch_and_check(p, device_, path, false).compiled_now);
}

TEST_F(StaleCubin, ReadOnlyRuntimeRebuildsButLeavesTheRow) {
  const std::string path = temp_db("read_only");
  GemmProblem p;
  parse_gemm_shape("640x384x192", p);
  const std::string config_key = dispatch_and_check(p, device_, path, false).config_key;
  const std::vector<char> garbage = garbage_cubin();
  const std::string key = damage_cubin(path, p, config_key, device_, garbage);

  EXPECT_TRUE(dispatch_and_check(p, device_, path, true).compiled_now);
  EXPECT_EQ(cache::Database::open_readonly(path).find_cubin(key)->cubin, garbage);
}

}  // namespace
}  // namespace kt
