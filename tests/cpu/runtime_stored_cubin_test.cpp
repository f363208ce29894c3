// Driver-only serving: the runtime's lookup of a stored cubin finds it by source key, of any
// NVRTC version, without asking for NVRTC at all; only a cubin the database lacks needs NVRTC,
// and without one that is an error naming the kernel and the database.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "cache/database.hpp"
#include "core/error.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_library.hpp"
#include "runtime/cubin_provider.hpp"
#include "support/scratch_dir.hpp"
#include "support/tiny_cubin.hpp"

namespace kt {
namespace {

// A source whose kernel is the tiny cubin's, and that cubin stored under its source key.
gen::GeneratedSource tiny_source(const std::string& code) {
  const cache::CubinRecord r = testing::tiny_cubin_record(testing::hex_key("x"));
  gen::GeneratedSource s;
  s.name = "tiny";
  s.code = code;
  s.name_expressions = r.name_expressions;
  s.arch = r.arch;
  s.options = {"--std=c++17"};
  return s;
}

cache::CubinRecord stored_for(const gen::GeneratedSource& source, const std::string& nvrtc) {
  cache::CubinRecord r = testing::tiny_cubin_record(testing::hex_key(source.code + nvrtc));
  r.source_key = gen::source_key(source);
  r.nvrtc_version = nvrtc;
  return r;
}

TEST(DriverOnlyServing, AStoredCubinIsFoundWithoutAskingForNvrtc) {
  cache::Database db = cache::Database::open(":memory:");
  const gen::GeneratedSource source = tiny_source("// one");
  // Built by another toolkit than any here: the source key does not name NVRTC's version.
  const cache::CubinRecord stored = stored_for(source, "12.4");
  db.put_cubin(stored);
  const std::uint64_t before = gen::nvrtc_requests();
  const rt::CubinResult found =
      rt::get_or_compile(&db, source, /*allow_compile=*/false, /*write_back=*/false);
  EXPECT_EQ(gen::nvrtc_requests(), before) << "the lookup asked for NVRTC";
  EXPECT_FALSE(found.compiled_now);
  EXPECT_EQ(found.record.compile_key, stored.compile_key);
  EXPECT_EQ(found.record.nvrtc_version, "12.4");
}

TEST(DriverOnlyServing, SourceKeysIgnoreNothingButTheToolkit) {
  const gen::GeneratedSource a = tiny_source("// one");
  gen::GeneratedSource b = a;
  EXPECT_EQ(gen::source_key(a), gen::source_key(b));
  b.arch = "sm_80";
  EXPECT_NE(gen::source_key(a), gen::source_key(b));
  b = a;
  b.options.push_back("-DX");
  EXPECT_NE(gen::source_key(a), gen::source_key(b));
  b = a;
  b.code += " ";
  EXPECT_NE(gen::source_key(a), gen::source_key(b));
}

TEST(DriverOnlyServing, AMissingCubinNeedsNvrtcAndItsAbsenceIsNamed) {
  testing::ScratchDir dir;
  const std::string path = dir.file("bundle.db");
  { cache::Database::open(path).put_cubin(stored_for(tiny_source("// one"), "13.0")); }
  // In a child, so that this process's NVRTC state stays as it was.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("KERNTUNE_NVRTC", "/nonexistent/libnvrtc.so", 1);
    ::setenv("CUDA_HOME", "/nonexistent", 1);
    cache::Database db = cache::Database::open_readonly(path);
    const std::uint64_t before = gen::nvrtc_requests();
    int code = 1;
    try {
      rt::get_or_compile(&db, tiny_source("// two"), false, false);
    } catch (const Error& e) {
      const std::string what = e.what();
      // Either NVRTC is not found (a machine with the driver alone), or it is found on the
      // loader's path and compiling is what is refused; both name the kernel.
      if (e.kind() == ErrorKind::kNotFound && what.find("tiny") != std::string::npos &&
          gen::nvrtc_requests() > before)
        code = 0;
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace kt
