// The fleet commands that need no toolkit, through the CLI: plan puts each item in exactly one
// shard, the same way every time; a bad manifest is named by line and field; status counts each
// shard's items; merge refuses inputs of another schema or template version (naming them and the
// versions, writing nothing, leaving every file as it was) and a manifest's missing items unless
// allowed; verify fails on a winner without a stored cubin and on a row edited after the merge, and
// on a truncated bundle; diff names where winners differ; explain names the dispatch grade.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/device_desc.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "fleet/provenance.hpp"
#include "runtime/op_dispatch.hpp"
#include "support/cli_runner.hpp"
#include "support/file_bytes.hpp"
#include "support/old_schema.hpp"
#include "support/scratch_dir.hpp"

namespace kt {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::ScratchDir;
using testing::shell_quote;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `kerntune <args>` with no database of its own in play.
CliResult cli(const ScratchDir& dir, const std::string& args) {
  return testing::run_cli(args, dir.file("default.db"));
}

std::string write(const ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

std::string gemm_key(const std::string& shape) { return "gemm:bf16:bf16:nt:" + shape; }

std::string model_config(const std::string& problem) {
  return rt::model_ranked_configs(op_spec("gemm"), problem, device_profile("h200"), 1 << 30, 1)
      .front();
}

// A winner of `problem` on `fingerprint` (the H200's by default) in the database at `path`.
void add_winner(const std::string& path, const std::string& problem, double us,
                int template_version = kGemmTemplateVersion,
                const std::string& fingerprint = device_profile("h200").fingerprint(),
                bool predicted = true) {
  cache::Database::open(path).set_winner(
      {.key = {problem, fingerprint, kBenchmarkProtocolVersion, template_version},
       .config_key = model_config(problem),
       .median_us = us,
       .predicted = predicted,
       .run_id = "r"});
}

constexpr const char* kFourProblems =
    "kerntune-manifest 1\ndevice h200\ngemm 64x64x64\ngemm 128x64x64\ngemm 256x64x64\n"
    "gemm 512x64x64\n";

TEST(CliFleet, PlanPutsEachItemInOneShardTheSameWayEveryTime) {
  ScratchDir dir;
  const std::string m = write(dir, "m.manifest",
                              "kerntune-manifest 1\ndevice h200\ndevice a100\ngemm 64x64x64\n"
                              "attention b=1,h=8,s=512,d=64 causal\nrmsnorm rows=64,hidden=512\n");
  const std::string args = "fleet plan --manifest " + shell_quote(m) + " --shards 4 --json";
  const CliResult first = cli(dir, args + " 2>/dev/null"), second = cli(dir, args + " 2>/dev/null");
  ASSERT_EQ(first.status, 0) << first.output;
  EXPECT_EQ(first.output, second.output);
  const CliResult checked =
      cli(dir, args +
                   " 2>/dev/null | python3 -c 'import json, sys; d = json.load(sys.stdin); "
                   "items = [(i[\"index\"], s[\"shard\"]) for s in d[\"shards\"] for i in "
                   "s[\"items\"]]; assert sorted(i for i, _ in items) == list(range(6)), items; "
                   "assert all(i % 4 + 1 == int(s.split(\"/\")[0]) for i, s in items), items; "
                   "print(len(d[\"devices\"]), len(d[\"problems\"]))'");
  EXPECT_EQ(checked.status, 0) << checked.output;
  EXPECT_EQ(checked.output, "2 3\n");
}

TEST(CliFleet, ABadManifestIsNamedByLineAndField) {
  ScratchDir dir;
  const std::string m =
      write(dir, "bad.manifest", "kerntune-manifest 1\ndevice h200\ngemm 64x64\n");
  const CliResult r = cli(dir, "fleet plan --manifest " + shell_quote(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, m + ":3: field 2 '64x64':")) << r.output;
  const CliResult missing = cli(dir, "fleet plan --manifest " + shell_quote(dir.file("none")));
  EXPECT_EQ(missing.status, 1);
  EXPECT_TRUE(contains(missing.output, "cannot read the manifest")) << missing.output;
}

TEST(CliFleet, StatusCountsTheItemsOfEveryShard) {
  ScratchDir dir;
  const std::string m = write(dir, "m.manifest", kFourProblems);
  // Shard 1 of 2 holds items 0 and 2, one of them done; shard 2 has not started.
  const std::string shard1 = dir.file("shard-1-of-2.db");
  add_winner(shard1, gemm_key("64x64x64"), 1.0);
  {
    cache::Database db = cache::Database::open(shard1);
    fleet::Provenance p = fleet::this_build("shard");
    p.shard = "1/2";
    write_provenance(db, p);
  }
  const std::string args = "fleet status --manifest " + shell_quote(m) + " --shards 2 --dir " +
                           shell_quote(dir.file(""));
  const CliResult text = cli(dir, args);
  EXPECT_EQ(text.status, 0) << text.output;
  EXPECT_TRUE(contains(text.output, "4 items in 2 shards: 1 done")) << text.output;
  EXPECT_TRUE(contains(text.output, "1/2 done")) << text.output;
  EXPECT_TRUE(contains(text.output, "not started")) << text.output;
  const CliResult json = cli(dir, args +
                                      " --json 2>/dev/null | python3 -c 'import json, sys; "
                                      "d = json.load(sys.stdin); print(d[\"done\"], "
                                      "d[\"complete\"], [s[\"exists\"] for s in d[\"shards\"]])'");
  EXPECT_EQ(json.output, "1 False [True, False]\n");
  EXPECT_EQ(cli(dir, args + " --require-complete").status, 1);
}

TEST(CliFleet, MergeRefusesOtherVersionsNamingThemAndWritesNothing) {
  ScratchDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db"), c = dir.file("c.db");
  const std::string bundle = dir.file("bundle.db");
  add_winner(a, gemm_key("64x64x64"), 1.0);
  add_winner(b, gemm_key("128x64x64"), 1.0, kGemmTemplateVersion - 1);
  add_winner(c, gemm_key("256x64x64"), 1.0);
  testing::downgrade_schema(c, 3);
  const std::string a_bytes = testing::read_file_bytes(a), b_bytes = testing::read_file_bytes(b);
  const CliResult r = cli(dir, fmt::format("fleet merge --out {} {} {} {}", shell_quote(bundle),
                                           shell_quote(a), shell_quote(b), shell_quote(c)));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, fmt::format("{}: winners of gemm template version {} (this "
                                             "kerntune's: {})",
                                             b, kGemmTemplateVersion - 1, kGemmTemplateVersion)))
      << r.output;
  EXPECT_TRUE(contains(r.output, c + ": schema version 3, this kerntune writes 4")) << r.output;
  EXPECT_FALSE(contains(r.output, a + ":")) << r.output;
  EXPECT_TRUE(contains(r.output, "Nothing was written")) << r.output;
  EXPECT_FALSE(fs::exists(bundle));
  EXPECT_EQ(testing::read_file_bytes(a), a_bytes);
  EXPECT_EQ(testing::read_file_bytes(b), b_bytes);
  EXPECT_EQ(cache::schema_version_of(c), 3);

  // Merging such an input into an existing bundle is refused the same way; the bundle stays.
  ASSERT_EQ(
      cli(dir, fmt::format("fleet merge --out {} {}", shell_quote(bundle), shell_quote(a))).status,
      0);
  const std::string bundle_bytes = testing::read_file_bytes(bundle);
  const CliResult into =
      cli(dir, fmt::format("fleet merge --out {} {}", shell_quote(bundle), shell_quote(b)));
  EXPECT_EQ(into.status, 1);
  EXPECT_EQ(testing::read_file_bytes(bundle), bundle_bytes);
}

TEST(CliFleet, MergeRefusesAManifestsMissingItemsUnlessAllowed) {
  ScratchDir dir;
  const std::string m = write(dir, "m.manifest", kFourProblems);
  const std::string a = dir.file("a.db"), bundle = dir.file("bundle.db");
  add_winner(a, gemm_key("64x64x64"), 1.0);
  const std::string args = fmt::format("fleet merge --manifest {} --out {} {}", shell_quote(m),
                                       shell_quote(bundle), shell_quote(a));
  const CliResult refused = cli(dir, args);
  EXPECT_EQ(refused.status, 1);
  EXPECT_TRUE(contains(refused.output, "3 of the manifest's items have no winner"))
      << refused.output;
  EXPECT_FALSE(fs::exists(bundle));
  const CliResult allowed = cli(dir, args + " --allow-incomplete");
  EXPECT_EQ(allowed.status, 0) << allowed.output;
  EXPECT_TRUE(contains(allowed.output, "1 winners (0 measured, 1 predicted)")) << allowed.output;
  // Shards that have not run are named.
  const CliResult no_shards =
      cli(dir, fmt::format("fleet merge --manifest {} --shards 2 --dir {} --out {}", shell_quote(m),
                           shell_quote(dir.file("")), shell_quote(dir.file("other.db"))));
  EXPECT_EQ(no_shards.status, 1);
  EXPECT_TRUE(contains(no_shards.output, "shard 1/2 has no database")) << no_shards.output;
}

TEST(CliFleet, VerifyFailsOnAWinnerWithoutItsCubinAnEditedRowOrACutFile) {
  ScratchDir dir;
  const std::string a = dir.file("a.db"), bundle = dir.file("bundle.db");
  add_winner(a, gemm_key("64x64x64"), 1.0);
  ASSERT_EQ(
      cli(dir, fmt::format("fleet merge --out {} {}", shell_quote(bundle), shell_quote(a))).status,
      0);
  const CliResult no_cubin = cli(dir, "fleet verify " + shell_quote(bundle));
  EXPECT_EQ(no_cubin.status, 1);
  EXPECT_TRUE(contains(no_cubin.output, "no cubin stored")) << no_cubin.output;
  EXPECT_FALSE(contains(no_cubin.output, "content hash")) << no_cubin.output;

  cache::sql::Connection::open(bundle, cache::sql::OpenMode::kReadWriteCreate)
      .exec("UPDATE winners SET median_us = 0.5");
  const CliResult edited = cli(dir, "fleet verify --json " + shell_quote(bundle));
  EXPECT_EQ(edited.status, 1);
  EXPECT_TRUE(contains(edited.output, "is not the one recorded when it was written"))
      << edited.output;

  const std::string cut = dir.file("cut.db");
  fs::copy_file(bundle, cut);
  fs::resize_file(cut, fs::file_size(cut) - 100);
  const CliResult truncated = cli(dir, "fleet verify " + shell_quote(cut));
  EXPECT_EQ(truncated.status, 1);
  EXPECT_TRUE(contains(truncated.output, "truncated")) << truncated.output;
}

TEST(CliFleet, DiffNamesWhereWinnersDifferAndByHowMuch) {
  ScratchDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db");
  add_winner(a, gemm_key("64x64x64"), 10.0);
  add_winner(b, gemm_key("64x64x64"), 10.0);
  add_winner(a, gemm_key("128x64x64"), 10.0);
  add_winner(a, gemm_key("256x64x64"), 10.0);
  cache::Database::open(b).set_winner(
      {.key = {gemm_key("128x64x64"), device_profile("h200").fingerprint(),
               kBenchmarkProtocolVersion, kGemmTemplateVersion},
       .config_key = "sm80.bm64.bn64.bk32.wm32.wn32.s3.g8.sk1",
       .median_us = 8.0,
       .predicted = true,
       .run_id = "r"});
  const std::string args = fmt::format("fleet diff {} {}", shell_quote(a), shell_quote(b));
  const CliResult text = cli(dir, args);
  EXPECT_EQ(text.status, 0) << text.output;
  EXPECT_TRUE(contains(text.output, "differs:   " + gemm_key("128x64x64"))) << text.output;
  EXPECT_TRUE(contains(text.output, "(-20.0%)")) << text.output;
  EXPECT_TRUE(contains(text.output, "only in a: " + gemm_key("256x64x64"))) << text.output;
  EXPECT_TRUE(contains(text.output, "1 same, 1 differ, 1 only in a")) << text.output;
  EXPECT_EQ(cli(dir, args + " --exit-code").status, 1);
  const CliResult json = cli(dir, args +
                                      " --json 2>/dev/null | python3 -c 'import json, sys; "
                                      "d = json.load(sys.stdin); print(d[\"same\"], "
                                      "[c[\"ratio\"] for c in d[\"changes\"]])'");
  EXPECT_EQ(json.output, "1 [0.8, None]\n") << json.output;
}

TEST(CliFleet, ExplainNamesTheDispatchGrade) {
  ScratchDir dir;
  const std::string db = dir.file("k.db");
  const std::string problem = gemm_key("4096x4096x4096");
  // Measured on an H200 of 114 SMs: the 132-SM profile is served by its GPU model's grade.
  add_winner(db, problem, 100, kGemmTemplateVersion,
             device_variant(device_profile("h200"), "", 114, 0).fingerprint(),
             /*predicted=*/false);
  const CliResult r = testing::run_cli(
      "explain --shape 4096x4096x4096 --json 2>/dev/null | python3 -c 'import json, sys; "
      "d = json.load(sys.stdin)[\"problems\"][0][\"dispatch\"]; print(d[\"grade\"], "
      "d[\"tuned_device\"], d[\"cubin_stored\"])'",
      db);
  EXPECT_EQ(r.output, "same-model NVIDIA H200/cc90/114sm False\n") << r.output;
  const CliResult text = testing::run_cli("explain --shape 4096x4096x4096", db);
  EXPECT_TRUE(contains(text.output, "(grade same-model, tuned for " + problem)) << text.output;
}

}  // namespace
}  // namespace kt
