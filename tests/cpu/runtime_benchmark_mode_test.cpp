// Benchmark mode's parts that need no GPU: KERNTUNE_BENCHMARK read as a count or refused naming
// the variable, and the byte-range overlap that decides which outputs a timing copy moves.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "core/env.hpp"
#include "core/error.hpp"
#include "runtime/op_launcher.hpp"

namespace kt {
namespace {

// Sets KERNTUNE_BENCHMARK for a scope, then restores what was there.
class ScopedBenchmarkVariable {
 public:
  explicit ScopedBenchmarkVariable(const char* value) {
    if (const char* old = ::getenv("KERNTUNE_BENCHMARK")) old_ = old;
    ::setenv("KERNTUNE_BENCHMARK", value, 1);
  }
  ~ScopedBenchmarkVariable() {
    if (old_)
      ::setenv("KERNTUNE_BENCHMARK", old_->c_str(), 1);
    else
      ::unsetenv("KERNTUNE_BENCHMARK");
  }

 private:
  std::optional<std::string> old_;
};

std::string error_of(const char* value) {
  ScopedBenchmarkVariable set(value);
  try {
    env::benchmark_candidates();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << value;
    return e.what();
  }
  return "";
}

TEST(BenchmarkMode, VariableIsACountFromZeroToTheLimitOrAnErrorNamingIt) {
  {
    ScopedBenchmarkVariable set("8");
    EXPECT_EQ(env::benchmark_candidates(), 8);
  }
  {
    ScopedBenchmarkVariable set("0");
    EXPECT_EQ(env::benchmark_candidates(), 0);
  }
  for (const char* bad : {"eight", "8x", "-1", "65", "1e3"}) {
    const std::string what = error_of(bad);
    EXPECT_NE(what.find("KERNTUNE_BENCHMARK"), std::string::npos) << bad << ": " << what;
    EXPECT_NE(what.find(bad), std::string::npos) << bad << ": " << what;
  }
  EXPECT_NE(error_of("65").find("0 (off) to 64"), std::string::npos);
}

TEST(BenchmarkMode, OverlapIsAnySharedByte) {
  alignas(16) static unsigned char memory[256];
  const void* a = memory;
  EXPECT_TRUE(rt::overlaps(a, 16, memory + 15, 16));
  EXPECT_FALSE(rt::overlaps(a, 16, memory + 16, 16));
  EXPECT_TRUE(rt::overlaps(memory + 100, 8, a, 256));  // inside
  EXPECT_TRUE(rt::overlaps(a, 256, memory + 100, 8));
  EXPECT_FALSE(rt::overlaps(memory + 32, 16, a, 32));  // just after
  EXPECT_FALSE(rt::overlaps(a, 0, a, 16));             // an empty range shares nothing
  EXPECT_TRUE(rt::overlaps(a, 1, a, 1));
}

}  // namespace
}  // namespace kt
