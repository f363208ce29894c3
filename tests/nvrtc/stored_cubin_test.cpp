// Stored cubins are checked before they reach the driver: every kernel NVRTC compiles passes the
// ELF and kernel-name check, and a stored row whose bytes were overwritten, or which holds another
// config's cubin, is refused without compilation and compiled again (its row replaced) with it;
// several sources compile at once (benchmark mode), each result in its slot.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cache/database.hpp"
#include "cache/row_checks.hpp"
#include "cache/sql.hpp"
#include "core/attention_problem.hpp"
#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"
#include "core/op_registry.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "ops/attention/attention_source.hpp"
#include "ops/gemm/gemm_source.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/op_dispatch.hpp"
#include "support/scratch_dir.hpp"

namespace kt {
namespace {

using kt::testing::ScratchDir;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Two of the model's best configs for a 256³ bf16 nt GEMM on an A100 (sm_80) whose cubins differ
// (configs that differ only in the raster group share one).
std::vector<gen::GeneratedSource> gemm_sources() {
  const GemmProblem p = parse_gemm_key("gemm:bf16:bf16:nt:256x256x256");
  const DeviceDesc& a100 = device_profile("a100");
  std::vector<gen::GeneratedSource> sources;
  for (const std::string& key :
       rt::model_ranked_configs(op_spec("gemm"), to_key(p), a100, 1 << 30, 16)) {
    const GemmConfig c = parse_gemm_config_key(key);
    gen::GeneratedSource source = gen::generate_gemm(p, c, a100.arch());
    if (sources.empty() || gen::compile_key(source) != gen::compile_key(sources.front()))
      sources.push_back(std::move(source));
    if (sources.size() == 2) break;
  }
  return sources;
}

// Runs `sql` on the file at `path`, outside the Database API, as another program could.
void raw_sql(const std::string& path, const std::string& sql) {
  cache::sql::Connection db =
      cache::sql::Connection::open(path, cache::sql::OpenMode::kReadWriteCreate);
  db.exec(sql);
}

TEST(StoredCubin, EveryKindOfCompiledKernelPassesTheCubinCheck) {
  const GemmProblem gemm = parse_gemm_key("gemm:bf16:bf16:nt:256x256x256");
  const DeviceDesc& h200 = device_profile("h200");
  const AttentionProblem attention =
      parse_attention_key("attn:bf16:b1.hq8.hkv8.sq1024.sk1024.d128.causal");
  std::vector<gen::GeneratedSource> sources = {
      gen::generate_gemm(
          gemm,
          parse_gemm_config_key(
              rt::model_ranked_configs(op_spec("gemm"), to_key(gemm), h200, 1 << 30, 1).front()),
          "sm_90a"),
      gen::generate_gemm_check(gemm, "sm_90a"),
      gen::generate_attention(
          attention,
          parse_attention_config_key(
              rt::model_ranked_configs(op_spec("attention"), to_key(attention), h200, 0, 1)
                  .front()),
          /*write_lse=*/true, "sm_90a"),
      gen::generate_l2_flush("sm_80"),
      gen::generate_attention_check(attention, "sm_90a"),
  };
  // Every GEMM family, float output, split-K (a second kernel, the reduce) and the sm90 flags.
  const struct {
    const char* problem;
    const char* config;
  } gemms[] = {
      {"gemm:bf16:bf16:nt:4096x4096x4096", "sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1"},
      {"gemm:fp16:fp32:nt:16x4096x4096", "smallm.bm16.bn128.bk64.wn64.wk4.sk1"},
      {"gemm:bf16:fp32:nn:256x256x8192", "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk4"},
  };
  for (const auto& g : gemms) {
    sources.push_back(
        gen::generate_gemm(parse_gemm_key(g.problem), parse_gemm_config_key(g.config), "sm_90a"));
  }
  for (const gen::GeneratedSource& source : sources) {
    SCOPED_TRACE(source.name);
    const cache::CubinRecord record = rt::to_record(gen::compile(source));
    EXPECT_EQ(cache::cubin_problem(record), "");
    EXPECT_EQ(rt::stored_cubin_problem(record, source), "");
  }
}

TEST(StoredCubin, OverwrittenBytesAreRefusedThenCompiledAgainAndReplaced) {
  ScratchDir dir;
  const std::string path = dir.file("f.db");
  const gen::GeneratedSource source = gemm_sources().front();
  const std::string key = gen::compile_key(source);
  {
    cache::Database db = cache::Database::open(path);
    EXPECT_TRUE(rt::get_or_compile(&db, source, true, true).compiled_now);
    EXPECT_FALSE(rt::get_or_compile(&db, source, false, false).compiled_now);  // a clean hit
  }
  // 512 random bytes written inside the blob: SQLite's integrity check cannot see it.
  raw_sql(path,
          "UPDATE cubins SET cubin = substr(cubin, 1, 1000) || randomblob(512) || "
          "substr(cubin, 1513) WHERE compile_key = '" +
              key + "'");
  cache::Database db = cache::Database::open(path);
  try {
    rt::get_or_compile(&db, source, /*allow_compile=*/false, false);
    ADD_FAILURE() << "a damaged cubin was handed out";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kDatabase);
    EXPECT_TRUE(contains(error.what(), "SHA-256")) << error.what();
    EXPECT_TRUE(contains(error.what(), "kerntune doctor")) << error.what();
  }
  const rt::CubinResult rebuilt = rt::get_or_compile(&db, source, true, true);
  EXPECT_TRUE(rebuilt.compiled_now);
  EXPECT_EQ(cache::cubin_problem(*db.find_cubin(key)), "");
  EXPECT_FALSE(rt::get_or_compile(&db, source, false, false).compiled_now);
}

// Benchmark mode's compiles at once: each source's result in its own slot, compiled and written
// back on a miss, served from the database on the next call, and a source NVRTC refuses holds
// its error without costing the others theirs.
TEST(StoredCubin, CompilesOfSeveralSourcesRunAtOnceEachInItsSlot) {
  ScratchDir dir;
  cache::Database db = cache::Database::open(dir.file("f.db"));
  std::vector<gen::GeneratedSource> sources = gemm_sources();
  ASSERT_EQ(sources.size(), 2u);
  gen::GeneratedSource broken = sources.front();
  broken.code += "\nthis is not C++;\n";
  broken.name += ".broken";
  sources.insert(sources.begin() + 1, broken);
  const std::vector<rt::CubinAttempt> first = rt::get_or_compile_each(&db, sources, true, true);
  ASSERT_EQ(first.size(), 3u);
  ASSERT_FALSE(first[1].cubin);
  EXPECT_TRUE(contains(first[1].error, "this is not C++") || contains(first[1].error, "expected"))
      << first[1].error;
  for (const std::size_t i : {0u, 2u}) {
    ASSERT_TRUE(first[i].cubin) << first[i].error;
    EXPECT_TRUE(first[i].cubin->compiled_now);
    EXPECT_EQ(first[i].cubin->record.compile_key, gen::compile_key(sources[i]));
    EXPECT_EQ(cache::cubin_problem(*db.find_cubin(gen::compile_key(sources[i]))), "");
  }
  const std::vector<rt::CubinAttempt> again =
      rt::get_or_compile_each(&db, {sources[0], sources[2]}, /*allow_compile=*/false, false);
  for (const rt::CubinAttempt& a : again) {
    ASSERT_TRUE(a.cubin) << a.error;
    EXPECT_FALSE(a.cubin->compiled_now);
  }
  EXPECT_TRUE(rt::get_or_compile_each(&db, {}, true, true).empty());
}

// The other config's whole row, hash and all, stored under the winner's compile key; relabelled
// with the winner's name expressions or not. Returns the kt::Error get_or_compile throws
// without compilation.
std::string planted_other_config_error(bool relabel) {
  ScratchDir dir;
  const std::string path = dir.file("f.db");
  const std::vector<gen::GeneratedSource> sources = gemm_sources();
  EXPECT_EQ(sources.size(), 2u);
  const std::string winner_key = gen::compile_key(sources[0]);
  const std::string other_key = gen::compile_key(sources[1]);
  {
    cache::Database db = cache::Database::open(path);
    rt::get_or_compile(&db, sources[1], true, true);
  }
  const std::string expressions =
      relabel ? "'" + sources[0].name_expressions.front() + "'" : "name_expressions";
  raw_sql(path, "INSERT INTO cubins SELECT '" + winner_key + "', arch, source_name, " +
                    expressions +
                    ", lowered_names, cubin, registers, spill_bytes, smem_static_bytes, log, "
                    "nvrtc_version, compile_ms, created_unix, cubin_sha256, source_key FROM cubins "
                    "WHERE "
                    "compile_key = '" +
                    other_key + "'");
  cache::Database db = cache::Database::open(path);
  EXPECT_TRUE(db.find_cubin(winner_key).has_value());
  std::string message;
  try {
    rt::get_or_compile(&db, sources[0], /*allow_compile=*/false, false);
    ADD_FAILURE() << "another config's cubin was handed out";
  } catch (const Error& error) {
    message = error.what();
  }
  EXPECT_TRUE(rt::get_or_compile(&db, sources[0], true, true).compiled_now);
  EXPECT_EQ(rt::stored_cubin_problem(*db.find_cubin(winner_key), sources[0]), "");
  return message;
}

TEST(StoredCubin, AnotherConfigsCubinUnderThisKeyIsRefused) {
  const std::string message = planted_other_config_error(/*relabel=*/false);
  EXPECT_TRUE(contains(message, "not the ones asked for")) << message;
}

TEST(StoredCubin, AnotherConfigsCubinRelabelledAsThisOneIsRefused) {
  const std::string message = planted_other_config_error(/*relabel=*/true);
  EXPECT_TRUE(contains(message, "is not the kernel")) << message;
}

}  // namespace
}  // namespace kt
