// What schema version 4 adds for fleet bundles: cubins found by source key (any NVRTC version),
// the provenance table, a content hash that follows the rows (not their order, the file's history
// or the provenance) and moves when a row is edited, a self-contained file for shipping, and a
// truncated file refused at open with a message that says so.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"
#include "support/old_schema.hpp"
#include "support/scratch_dir.hpp"
#include "support/tiny_cubin.hpp"

namespace kt::cache {
namespace {

namespace fs = std::filesystem;
using kt::testing::ScratchDir;

TuningKey key(const std::string& problem) {
  return {"gemm:bf16:bf16:nt:" + problem, "NVIDIA H200/cc90/132sm", 3, 15};
}

Measurement measurement(const std::string& problem, const std::string& config, double us) {
  Measurement m;
  m.key = key(problem);
  m.config_key = config;
  m.median_us = us;
  m.predicted_us = us;
  m.num_reps = 10;
  m.run_id = "run";
  m.created_unix = 1700000000;
  return m;
}

CubinRecord cubin(const std::string& name, const std::string& source, int created) {
  CubinRecord r = kt::testing::tiny_cubin_record(kt::testing::hex_key(name));
  r.source_key = source.empty() ? "" : kt::testing::hex_key(source);
  r.nvrtc_version = "13." + std::to_string(created);
  return r;
}

// Fills `db` with two cubins, three measurements and two winners, in the order `reversed` says.
void fill(Database& db, bool reversed) {
  std::vector<Measurement> rows = {measurement("64x64x64", "a", 5), measurement("64x64x64", "b", 6),
                                   measurement("128x64x64", "a", 9)};
  std::vector<CubinRecord> cubins = {cubin("one", "src-one", 1), cubin("two", "src-two", 2)};
  std::vector<Winner> winners = {{key("64x64x64"), "a", 5, false, "run", 1700000000},
                                 {key("128x64x64"), "a", 9, true, "run", 1700000000}};
  if (reversed) {
    std::reverse(rows.begin(), rows.end());
    std::reverse(cubins.begin(), cubins.end());
    std::reverse(winners.begin(), winners.end());
  }
  for (const Measurement& m : rows) db.add_measurements({m});
  for (const CubinRecord& c : cubins) db.put_cubin(c);
  for (const Winner& w : winners) db.set_winner(w);
}

void raw_sql(const std::string& path, const std::string& sql) {
  sql::Connection::open(path, sql::OpenMode::kReadWriteCreate).exec(sql);
}

TEST(CacheBundle, VersionThreeMigratesKeepingItsRowsWithoutSourceKeys) {
  ScratchDir dir;
  const std::string path = dir.file("v3.db");
  {
    Database db = Database::open(path);
    db.put_cubin(cubin("old", "", 1));
    db.set_winner({key("64x64x64"), "a", 5, false, "run", 0});
  }
  kt::testing::downgrade_schema(path, 3);
  EXPECT_THROW(Database::open_readonly(path), Error);
  Database db = Database::open(path);
  EXPECT_EQ(db.summary().schema_version, 4);
  EXPECT_EQ(db.find_cubin(kt::testing::hex_key("old"))->source_key, "");
  EXPECT_TRUE(db.provenance().empty());
  EXPECT_TRUE(db.find_winner(key("64x64x64")).has_value());
}

TEST(CacheBundle, CubinsAreFoundBySourceKeyNewestFirstForTheirArch) {
  Database db = Database::open(":memory:");
  CubinRecord older = cubin("older", "src", 1), newer = cubin("newer", "src", 2);
  CubinRecord other_arch = cubin("sm80", "src", 3);
  other_arch.arch = "sm_80";
  db.put_cubin(older);
  db.put_cubin(other_arch);
  db.put_cubin(newer);
  const std::vector<CubinRecord> found =
      db.find_cubins_by_source(kt::testing::hex_key("src"), "sm_90a");
  ASSERT_EQ(found.size(), 2u);
  // Both were stored within the second; ties go by compile key.
  for (const CubinRecord& r : found) EXPECT_EQ(r.arch, "sm_90a");
  EXPECT_EQ(db.find_cubins_by_source(kt::testing::hex_key("src"), "sm_80").size(), 1u);
  EXPECT_TRUE(db.find_cubins_by_source("", "sm_90a").empty());
  EXPECT_EQ(db.cubin_nvrtc_versions(), (std::vector<std::string>{"13.1", "13.2", "13.3"}));
}

TEST(CacheBundle, ProvenanceRowsAreReplacedAsAWhole) {
  Database db = Database::open(":memory:");
  db.set_provenance({{"role", "shard"}, {"shard", "2/4"}});
  db.set_provenance({{"role", "bundle"}, {"devices", "a\nb"}});
  EXPECT_EQ(db.provenance(),
            (std::map<std::string, std::string>{{"devices", "a\nb"}, {"role", "bundle"}}));
  EXPECT_THROW(db.set_provenance({{"", "x"}}), Error);
}

TEST(CacheBundle, ContentHashFollowsTheRowsAndMovesWhenOneIsEdited) {
  ScratchDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db");
  {
    Database da = Database::open(a), db = Database::open(b);
    fill(da, false);
    fill(db, true);
    db.set_provenance({{"role", "bundle"}});
    EXPECT_EQ(da.content_sha256(), db.content_sha256());
    EXPECT_EQ(da.content_sha256().size(), 64u);
  }
  const std::string before = Database::open_readonly(a).content_sha256();
  raw_sql(a, "UPDATE measurements SET median_us = 5.5 WHERE config_key = 'b'");
  const std::string edited_measurement = Database::open_readonly(a).content_sha256();
  EXPECT_NE(edited_measurement, before);
  raw_sql(a, "UPDATE winners SET config_key = 'b' WHERE problem_key LIKE '%64x64x64'");
  const std::string edited_winner = Database::open_readonly(a).content_sha256();
  EXPECT_NE(edited_winner, edited_measurement);
  raw_sql(a, "UPDATE cubins SET cubin = zeroblob(8)");
  EXPECT_NE(Database::open_readonly(a).content_sha256(), edited_winner);
}

TEST(CacheBundle, ASelfContainedFileHasNoWalAndOpensReadOnly) {
  ScratchDir dir;
  const std::string path = dir.file("bundle.db");
  std::string hash;
  {
    Database db = Database::open(path);
    fill(db, false);
    hash = db.content_sha256();
    db.make_self_contained();
  }
  EXPECT_FALSE(fs::exists(path + "-wal"));
  EXPECT_FALSE(fs::exists(path + "-shm"));
  std::ifstream in(path, std::ios::binary);
  char header[20];
  in.read(header, sizeof header);
  EXPECT_EQ(header[18], 1) << "rollback journal, not WAL";
  EXPECT_EQ(Database::open_readonly(path).content_sha256(), hash);
}

TEST(CacheBundle, ATruncatedFileIsAClearErrorAtOpen) {
  ScratchDir dir;
  const std::string path = dir.file("bundle.db");
  {
    Database db = Database::open(path);
    fill(db, false);
    for (int i = 0; i < 40; ++i) db.put_cubin(cubin("c" + std::to_string(i), "s", 1));
    db.make_self_contained();
  }
  const auto size = fs::file_size(path);
  ASSERT_GT(size, 8 * 4096u);
  for (const std::uintmax_t cut :
       {size - 100, size - 4096, size / 2, std::uintmax_t(4096), std::uintmax_t(50)}) {
    const std::string truncated = dir.file("cut-" + std::to_string(cut) + ".db");
    fs::copy_file(path, truncated);
    fs::resize_file(truncated, cut);
    for (const bool read_only : {true, false}) {
      try {
        if (read_only)
          Database::open_readonly(truncated);
        else
          Database::open(truncated);
        ADD_FAILURE() << "opened a file cut at " << cut;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kDatabase);
        const std::string what = e.what();
        EXPECT_NE(what.find(truncated), std::string::npos) << what;
        EXPECT_NE(what.find("truncated"), std::string::npos) << what;
      }
    }
    EXPECT_EQ(fs::file_size(truncated), cut) << "the file is left as it is";
  }
}

}  // namespace
}  // namespace kt::cache
