// A database from elsewhere cannot hurt: export never writes over what it reads, import and merge
// store only rows that pass their checks, a bad stored row fails neither dispatch nor export, a
// planted trigger never fires, and a cubin whose bytes do not match their hash is never used.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cache/cubin_image.hpp"
#include "cache/database.hpp"
#include "cache/export_format.hpp"
#include "cache/health.hpp"
#include "cache/row_checks.hpp"
#include "cache/sql.hpp"
#include "core/attention_problem.hpp"
#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/op_registry.hpp"
#include "core/sha256.hpp"
#include "core/versions.hpp"
#include "runtime/module_cache.hpp"
#include "runtime/op_dispatch.hpp"
#include "support/cli_runner.hpp"
#include "support/file_bytes.hpp"
#include "support/old_schema.hpp"
#include "support/scratch_dir.hpp"
#include "support/tiny_cubin.hpp"

namespace kt::cache {
namespace {

using kt::testing::ScratchDir;

constexpr const char* kDevice = "NVIDIA H200/cc90/132sm";
constexpr const char* kConfig = "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1";
constexpr const char* kOtherConfig = "sm80.bm64.bn64.bk32.wm32.wn32.s3.g8.sk1";

using kt::testing::read_file_bytes;
using kt::testing::write_file_bytes;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TuningKey gemm_key(const std::string& shape) {
  return TuningKey{.problem_key = "gemm:bf16:bf16:nt:" + shape,
                   .device_fingerprint = kDevice,
                   .protocol_version = kBenchmarkProtocolVersion,
                   .template_version = kGemmTemplateVersion};
}

Winner winner(const TuningKey& key, const std::string& config, double median_us) {
  return Winner{.key = key, .config_key = config, .median_us = median_us, .run_id = "r"};
}

Measurement measurement(const TuningKey& key, const std::string& config, double median_us) {
  Measurement m;
  m.key = key;
  m.config_key = config;
  m.median_us = median_us;
  m.num_reps = 10;
  m.run_id = "r";
  m.created_unix = 1700000000;
  return m;
}

// Runs `sql` on the file at `path` as another program could, outside the Database API.
void raw_sql(const std::string& path, const std::string& sql) {
  sql::Connection db = sql::Connection::open(path, sql::OpenMode::kReadWriteCreate);
  db.exec(sql);
}

const std::string kHeader = fmt::format("{}\n", fmt::join(export_columns(), ","));

// ---- 1. nothing writes over a file it reads, or over an existing file without --force --------

TEST(CacheTrust, ExportRefusesToWriteOverTheDatabaseItReads) {
  ScratchDir dir;
  const std::string path = dir.file("f.db");
  {
    Database db = Database::open(path);
    db.set_winner(winner(gemm_key("256x256x256"), kConfig, 10));
    db.put_cubin(kt::testing::tiny_cubin_record(kt::testing::hex_key("k")));
    for (const auto existing :
         {Database::ExistingFile::kRefuse, Database::ExistingFile::kReplace}) {
      EXPECT_THROW(db.export_csv(path, existing), Error);
      EXPECT_THROW(db.export_csv(path + "-wal", existing), Error);
    }
  }
  const Summary after = Database::open_readonly(path).summary();
  EXPECT_EQ(after.num_winners, 1);
  EXPECT_EQ(after.num_cubins, 1);
}

TEST(CacheTrust, CliExportOfADatabaseOverItselfFailsAndKeepsIt) {
  ScratchDir dir;
  const std::string path = dir.file("f.db");
  { Database::open(path).set_winner(winner(gemm_key("256x256x256"), kConfig, 10)); }
  for (const char* force : {"", " --force"}) {
    const auto r = kt::testing::run_cli(
        fmt::format("cache export --db {0} {0}{1}", kt::testing::shell_quote(path), force), path);
    EXPECT_NE(r.status, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "is the database being exported")) << r.output;
  }
  EXPECT_EQ(Database::open_readonly(path).summary().num_winners, 1);
}

TEST(CacheTrust, ExportReplacesAnExistingFileOnlyWithForce) {
  ScratchDir dir;
  const std::string path = dir.file("f.db");
  const std::string csv = dir.file("out.csv");
  { Database::open(path).set_winner(winner(gemm_key("256x256x256"), kConfig, 10)); }
  write_file_bytes(csv, "precious");
  const auto refused =
      kt::testing::run_cli(fmt::format("cache export --db {} {}", kt::testing::shell_quote(path),
                                       kt::testing::shell_quote(csv)),
                           path);
  EXPECT_NE(refused.status, 0) << refused.output;
  EXPECT_TRUE(contains(refused.output, "--force")) << refused.output;
  EXPECT_EQ(read_file_bytes(csv), "precious");
  const auto forced = kt::testing::run_cli(
      fmt::format("cache export --force --db {} {}", kt::testing::shell_quote(path),
                  kt::testing::shell_quote(csv)),
      path);
  EXPECT_EQ(forced.status, 0) << forced.output;
  EXPECT_TRUE(contains(read_file_bytes(csv), "winner,gemm:bf16:bf16:nt:256x256x256"))
      << read_file_bytes(csv);
}

TEST(CacheTrust, EmptyDbOptionIsAnErrorNotTheDefaultDatabase) {
  ScratchDir dir;
  const std::string fallback = dir.file("default.db");
  for (const char* command :
       {"cache ls --db ''", "cache export --db '' out.csv", "doctor --db ''"}) {
    const auto r = kt::testing::run_cli(command, fallback);
    EXPECT_NE(r.status, 0) << command << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "--db '' names no file")) << command << "\n" << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(fallback));
}

// ---- 3. import and merge store only valid rows; a bad stored row breaks nothing ---------------

// Rows of each kind the issue met: an unparsable shape, a garbage config, a negative time, and
// one good winner and measurement.
std::string csv_with_bad_rows() {
  const std::string good_key = fmt::format("gemm:bf16:bf16:nt:256x256x256,{},{},{}", kDevice,
                                           kBenchmarkProtocolVersion, kGemmTemplateVersion);
  const std::string zzz_key = fmt::format("gemm:bf16:bf16:nt:zzz,{},{},{}", kDevice,
                                          kBenchmarkProtocolVersion, kGemmTemplateVersion);
  return kHeader +                                                                        // line 1
         fmt::format("winner,{},{},,10,,,,,,0,,r,1\n", good_key, kConfig) +               // line 2
         fmt::format("winner,{},{},,1,,,,,,0,,r,1\n", zzz_key, kConfig) +                 // line 3
         fmt::format("winner,{},garbage,,1,,,,,,0,,r,1\n", good_key) +                    // line 4
         fmt::format("winner,{},{},,-5,,,,,,0,,r,1\n", good_key, kOtherConfig) +          // line 5
         fmt::format("measurement,{},{},ok,10,1,10,1,0,10,,,r,1\n", good_key, kConfig) +  // 6
         fmt::format("measurement,{},{},ok,inf,1,10,1,0,10,,,r,1\n", good_key, kConfig);  // 7
}

TEST(CacheTrust, ImportSkipsInvalidRowsNamingTheirLines) {
  ScratchDir dir;
  const std::string csv = dir.file("in.csv");
  write_file_bytes(csv, csv_with_bad_rows());
  Database db = Database::open(dir.file("f.db"));
  std::vector<std::string> skipped;
  EXPECT_EQ(db.import_csv(csv, &skipped), 2);
  ASSERT_EQ(skipped.size(), 4u) << fmt::format("{}", fmt::join(skipped, "\n"));
  EXPECT_TRUE(contains(skipped[0], csv + ":7:")) << skipped[0];  // measurements come first
  EXPECT_TRUE(contains(skipped[1], csv + ":3:")) << skipped[1];
  EXPECT_TRUE(contains(skipped[2], csv + ":4:")) << skipped[2];
  EXPECT_TRUE(contains(skipped[3], csv + ":5:")) << skipped[3];
  const std::optional<Winner> kept = db.find_winner(gemm_key("256x256x256"));
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->config_key, kConfig);
  EXPECT_EQ(kept->median_us, 10);
  EXPECT_EQ(db.all_winners().size(), 1u);
}

TEST(CacheTrust, CliImportReportsSkippedRowsAndStoresTheRest) {
  ScratchDir dir;
  const std::string path = dir.file("f.db");
  const std::string csv = dir.file("in.csv");
  write_file_bytes(csv, csv_with_bad_rows());
  const auto r =
      kt::testing::run_cli(fmt::format("cache import --db {} {}", kt::testing::shell_quote(path),
                                       kt::testing::shell_quote(csv)),
                           path);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "imported 2 new rows")) << r.output;
  EXPECT_TRUE(contains(r.output, "skipped 4 invalid rows")) << r.output;
  EXPECT_TRUE(contains(r.output, csv + ":3:")) << r.output;
}

// A source database holding one good row of each kind and, written behind the API's back, a
// winner keyed "zzz", a winner with config "garbage", a winner at -5 us, a measurement of an
// unknown status and a cubin whose bytes no longer match their hash.
std::string source_with_bad_rows(const ScratchDir& dir) {
  const std::string path = dir.file("source.db");
  {
    Database db = Database::open(path);
    db.set_winner(winner(gemm_key("256x256x256"), kConfig, 10));
    db.set_winner(winner(gemm_key("zzz"), kConfig, 1));
    db.set_winner(winner(gemm_key("512x512x512"), "garbage", 1));
    db.set_winner(winner(gemm_key("1024x1024x1024"), kConfig, -5));
    db.add_measurements({measurement(gemm_key("256x256x256"), kConfig, 10),
                         measurement(gemm_key("256x256x256"), kOtherConfig, 11)});
    db.put_cubin(kt::testing::tiny_cubin_record(kt::testing::hex_key("good")));
    db.put_cubin(kt::testing::tiny_cubin_record(kt::testing::hex_key("bad"), {"_Z1kv"}, 600));
  }
  raw_sql(path, fmt::format("UPDATE measurements SET status = 'bogus' WHERE config_key = '{}';"
                            "UPDATE cubins SET cubin = zeroblob(700) WHERE compile_key = '{}'",
                            kOtherConfig, kt::testing::hex_key("bad")));
  return path;
}

TEST(CacheTrust, MergeSkipsInvalidRowsAndStoresTheRest) {
  ScratchDir dir;
  const std::string source = source_with_bad_rows(dir);
  Database db = Database::open(dir.file("target.db"));
  std::vector<std::string> skipped;
  EXPECT_EQ(db.merge_from(source, &skipped), 3);
  EXPECT_EQ(skipped.size(), 5u) << fmt::format("{}", fmt::join(skipped, "\n"));
  for (const std::string& line : skipped) EXPECT_TRUE(contains(line, source + ": ")) << line;
  const Summary s = db.summary();
  EXPECT_EQ(s.num_winners, 1);
  EXPECT_EQ(s.num_measurements, 1);
  EXPECT_EQ(s.num_cubins, 1);
  EXPECT_TRUE(db.find_cubin(kt::testing::hex_key("good")).has_value());
  EXPECT_FALSE(db.find_cubin(kt::testing::hex_key("bad")).has_value());
}

TEST(CacheTrust, RowsOfEveryRegisteredOpAreValidAndConfigsOfAnotherOpAreNot) {
  auto key = [](const char* problem_key) {
    return TuningKey{.problem_key = problem_key,
                     .device_fingerprint = kDevice,
                     .protocol_version = kBenchmarkProtocolVersion,
                     .template_version = op_spec_for_key(problem_key).template_version()};
  };
  const TuningKey rms = key("rmsnorm:bf16:r8192.h4096.res");
  const TuningKey attn = key("attn:bf16:b1.hq8.hkv8.sq128.sk128.d64.full");
  EXPECT_EQ(winner_problem(winner(rms, "rms.t256.r1.v4.reg", 30)), "");
  EXPECT_EQ(measurement_problem(measurement(rms, "rms.t128.r2.v8.smem", 31)), "");
  EXPECT_EQ(winner_problem(winner(attn, "fa2.bm128.bn64.w8.s2", 3)), "");
  EXPECT_NE(winner_problem(winner(rms, kConfig, 30)), "");  // a GEMM config for RMSNorm
  EXPECT_NE(winner_problem(winner(gemm_key("64x64x64"), "rms.t256.r1.v4.reg", 30)), "");
  const TuningKey conv{.problem_key = "conv:3x3",
                       .device_fingerprint = kDevice,
                       .protocol_version = 1,
                       .template_version = 1};
  const std::string unknown = winner_problem(winner(conv, kConfig, 1));
  EXPECT_TRUE(contains(unknown, "rmsnorm:")) << unknown;  // names the registered prefixes
  // Imported and merged like the others.
  ScratchDir dir;
  Database source = Database::open(dir.file("source.db"));
  source.set_winner(winner(rms, "rms.t256.r1.v4.reg", 30));
  Database db = Database::open(dir.file("target.db"));
  std::vector<std::string> skipped;
  EXPECT_EQ(db.merge_from(dir.file("source.db"), &skipped), 1);
  EXPECT_TRUE(skipped.empty()) << fmt::format("{}", fmt::join(skipped, "\n"));
  ASSERT_TRUE(db.find_winner(rms).has_value());
}

TEST(CacheTrust, MeasuredWinnerAtANegativeTimeDoesNotReplaceARealOne) {
  ScratchDir dir;
  const std::string source = dir.file("source.db");
  { Database::open(source).set_winner(winner(gemm_key("256x256x256"), kOtherConfig, -5)); }
  Database db = Database::open(dir.file("target.db"));
  db.set_winner(winner(gemm_key("256x256x256"), kConfig, 10));
  EXPECT_EQ(db.merge_from(source), 0);
  EXPECT_EQ(db.find_winner(gemm_key("256x256x256"))->config_key, kConfig);
}

TEST(CacheTrust, GemmDispatchSkipsStoredWinnersWhoseKeysDoNotParse) {
  Database db = Database::open(":memory:");
  db.set_winner(winner(gemm_key("zzz"), kConfig, 1));
  db.set_winner(winner(gemm_key("512x512x512"), "garbage", 1));
  db.set_winner(winner(gemm_key("256x256x256"), "garbage", 1));
  const DeviceDesc& device = device_profile("h200");
  const GemmProblem untuned = parse_gemm_key("gemm:bf16:bf16:nt:300x300x300");
  EXPECT_EQ(rt::choose_config(&db, op_spec("gemm"), to_key(untuned), device, 1 << 30).grade,
            rt::DispatchGrade::kModelDefault);
  const GemmProblem exact = parse_gemm_key("gemm:bf16:bf16:nt:256x256x256");
  EXPECT_EQ(rt::choose_config(&db, op_spec("gemm"), to_key(exact), device, 1 << 30).grade,
            rt::DispatchGrade::kModelDefault);
}

TEST(CacheTrust, AttentionDispatchSkipsStoredWinnersWhoseKeysDoNotParse) {
  Database db = Database::open(":memory:");
  const AttentionProblem p = parse_attention_key("attn:bf16:b1.hq8.hkv8.sq1024.sk1024.d128.full");
  TuningKey key{.problem_key = to_key(p),
                .device_fingerprint = device_profile("h200").fingerprint(),
                .protocol_version = kBenchmarkProtocolVersion,
                .template_version = kAttentionTemplateVersion};
  db.set_winner(winner(key, "garbage", 1));
  key.problem_key = "attn:bf16:b1.hq8.hkv8.sq1024.sk1024.d128.zzz";
  db.set_winner(winner(key, "fa2.bm128.bn64.w8.s2", 1));
  EXPECT_EQ(
      rt::choose_config(&db, op_spec("attention"), to_key(p), device_profile("h200"), 0).grade,
      rt::DispatchGrade::kModelDefault);
}

TEST(CacheTrust, ExportLeavesOutARowOfUnknownStatusAndDoctorCountsIt) {
  ScratchDir dir;
  const std::string path = dir.file("f.db");
  {
    Database db = Database::open(path);
    db.add_measurements({measurement(gemm_key("256x256x256"), kConfig, 10),
                         measurement(gemm_key("256x256x256"), kOtherConfig, 11)});
  }
  raw_sql(path, fmt::format("UPDATE measurements SET status = 'bogus' WHERE config_key = '{}'",
                            kOtherConfig));
  std::vector<std::string> skipped;
  Database::open(path).export_csv(dir.file("out.csv"), Database::ExistingFile::kRefuse, &skipped);
  EXPECT_EQ(skipped.size(), 1u);
  EXPECT_TRUE(contains(read_file_bytes(dir.file("out.csv")), kConfig));
  EXPECT_FALSE(contains(read_file_bytes(dir.file("out.csv")), kOtherConfig));
  const DatabaseHealth health = check_database_health(path, HealthExpectations{});
  EXPECT_TRUE(health.problem.empty()) << health.problem;
  EXPECT_EQ(health.invalid.num_measurements, 1);
  const auto doctor = kt::testing::run_cli("doctor --db " + kt::testing::shell_quote(path), path);
  EXPECT_TRUE(contains(doctor.output, "1 measurements and 0 winners are invalid")) << doctor.output;
}

TEST(CacheTrust, CacheLsEscapesControlCharactersFromRows) {
  ScratchDir dir;
  const std::string path = dir.file("f.db");
  {
    Database db = Database::open(path);
    TuningKey key = gemm_key("256x256x256");
    key.device_fingerprint = "evil\x1b]0;owned\x07\x1b[31m";
    db.set_winner(winner(key, "\x1b[2J" + std::string(kConfig), 10));
  }
  const auto r = kt::testing::run_cli("cache ls --db " + kt::testing::shell_quote(path), path);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "\x1b")) << r.output;
  EXPECT_FALSE(contains(r.output, "\x07")) << r.output;
  EXPECT_TRUE(contains(r.output, "evil\\x1b]0;owned\\x07\\x1b[31m")) << r.output;
}

TEST(CacheTrust, PrintableEscapesControlsAndBrokenUtf8ButKeepsText) {
  EXPECT_EQ(printable("plain text, tab\there"), "plain text, tab\there");
  EXPECT_EQ(printable("a\nb\rc\x7f"), "a\\x0ab\\x0dc\\x7f");
  EXPECT_EQ(printable("H200 \xc3\xa9\xe2\x82\xac"), "H200 \xc3\xa9\xe2\x82\xac");  // é €
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\xc2\\x9b31m");  // C1 CSI
  EXPECT_EQ(printable("\x9b\xff"), "\\x9b\\xff");
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");  // cut short
}

// ---- 4. the connection runs nothing a file's schema carries -----------------------------------

TEST(CacheTrust, PlantedTriggerNeverFires) {
  ScratchDir dir;
  const std::string path = dir.file("f.db");
  { Database::open(path).add_measurements({measurement(gemm_key("256x256x256"), kConfig, 10)}); }
  // Planted with a plain SQLite connection, as an attacker's tool would.
  raw_sql(path,
          "CREATE TABLE evidence (x); "
          "CREATE TRIGGER planted AFTER INSERT ON winners BEGIN "
          "DELETE FROM measurements; INSERT INTO evidence VALUES (1); END");
  Database db = Database::open(path);
  db.set_winner(winner(gemm_key("256x256x256"), kConfig, 10));
  EXPECT_EQ(db.summary().num_measurements, 1);
  EXPECT_EQ(db.summary().num_winners, 1);
}

TEST(CacheTrust, ConnectionsAreDefensiveAndDistrustTheSchema) {
  Database db = Database::open(":memory:");
  sql::Connection raw = sql::Connection::open(":memory:", sql::OpenMode::kReadWriteCreate);
  sql::Statement trusted(raw, "PRAGMA trusted_schema");
  ASSERT_TRUE(trusted.step());
  EXPECT_EQ(trusted.column_int64(0), 0);
  // Defensive mode refuses writable_schema, with which a file's structure could be rewritten.
  raw.exec("PRAGMA writable_schema = ON");
  raw.exec("CREATE TABLE t (x)");
  EXPECT_THROW(raw.exec("UPDATE sqlite_schema SET sql = 'CREATE TABLE t (y)' WHERE name = 't'"),
               Error);
  // Views are refused outright.
  raw.exec("CREATE VIEW v AS SELECT 1");
  EXPECT_THROW(raw.exec("SELECT * FROM v"), Error);
}

// ---- 5. read-only means read-only --------------------------------------------------------------

using ShellResult = kt::testing::CliResult;
using kt::testing::run_shell;

ShellResult run_on_read_only_mount(const std::string& dir, const std::string& commands) {
  const std::string script =
      fmt::format("mount --bind -o ro {0} {0} && {1}", kt::testing::shell_quote(dir), commands);
  return run_shell("unshare -rm sh -c " + kt::testing::shell_quote(script));
}

TEST(CacheReadOnly, WalDatabaseOnAReadOnlyFilesystemServesLsExportAndDoctor) {
  ScratchDir dir;
  const std::string shipped = dir.file("fleet");
  std::filesystem::create_directories(shipped);
  const std::string path = shipped + "/fleet.db";
  {
    Database db = Database::open(path);  // WAL mode, recorded in the file's header
    db.set_winner(winner(gemm_key("256x256x256"), kConfig, 10));
    db.put_cubin(kt::testing::tiny_cubin_record(kt::testing::hex_key("k")));
  }
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));  // checkpointed on close
  const ShellResult probe = run_on_read_only_mount(shipped, "touch " + shipped + "/x");
  if (!contains(probe.output, "Read-only file system"))
    GTEST_SKIP() << "cannot make a read-only mount here (unshare -rm): " << probe.output;

  const std::string kerntune = kt::testing::shell_quote(KT_BINARY_DIR "/src/tools/kerntune");
  const std::string env =
      "KERNTUNE_CUDA_DRIVER=/nonexistent/libcuda.so.1 KERNTUNE_LOG_LEVEL=info " + kerntune;
  const std::string db = kt::testing::shell_quote(path);
  const ShellResult ls = run_on_read_only_mount(shipped, env + " cache ls --db " + db);
  EXPECT_EQ(ls.status, 0) << ls.output;
  EXPECT_TRUE(contains(ls.output, "1 winners")) << ls.output;
  EXPECT_TRUE(contains(ls.output, kConfig)) << ls.output;

  const std::string csv = kt::testing::shell_quote(dir.file("out.csv"));
  const ShellResult exported =
      run_on_read_only_mount(shipped, env + " cache export --db " + db + " " + csv);
  EXPECT_EQ(exported.status, 0) << exported.output;
  EXPECT_TRUE(contains(read_file_bytes(dir.file("out.csv")), kConfig));

  const ShellResult doctor = run_on_read_only_mount(shipped, env + " doctor --db " + db);
  EXPECT_TRUE(contains(doctor.output, "[OK]   PRAGMA integrity_check: ok")) << doctor.output;
  EXPECT_TRUE(contains(doctor.output, "every cubin, measurement and winner passes its check"))
      << doctor.output;
  EXPECT_TRUE(contains(doctor.output, "no blocklisted kernels")) << doctor.output;
  EXPECT_FALSE(contains(doctor.output, "readonly")) << doctor.output;
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
}

// ---- 2. cubin rows carry the SHA-256 of their bytes -------------------------------------------

TEST(CacheTrust, PutCubinStoresTheSha256OfTheBytes) {
  Database db = Database::open(":memory:");
  CubinRecord record = kt::testing::tiny_cubin_record(kt::testing::hex_key("k"));
  record.cubin_sha256 = "whatever the caller says";
  db.put_cubin(record);
  const CubinRecord back = *db.find_cubin(record.compile_key);
  EXPECT_EQ(back.cubin_sha256, sha256_hex(std::string_view(back.cubin.data(), back.cubin.size())));
  EXPECT_EQ(cubin_problem(back), "");
}

TEST(CacheTrust, MigrationFromSchema2FillsTheCubinHashes) {
  ScratchDir dir;
  const std::string path = dir.file("v2.db");
  const CubinRecord record = kt::testing::tiny_cubin_record(kt::testing::hex_key("k"));
  { Database::open(path).put_cubin(record); }
  kt::testing::downgrade_schema(path, 2);
  EXPECT_THROW(Database::open_readonly(path), Error);  // an older schema needs a read-write open
  Database db = Database::open(path);
  EXPECT_EQ(db.summary().schema_version, kSchemaVersion);
  EXPECT_EQ(db.find_cubin(record.compile_key)->cubin_sha256, record.cubin_sha256);
}

TEST(CacheTrust, CubinChecksCatchEveryDamageTheIssueMet) {
  const CubinRecord good =
      kt::testing::tiny_cubin_record(kt::testing::hex_key("k"), {"_Z1kv"}, 600);
  EXPECT_EQ(cubin_problem(good), "");

  CubinRecord random_bytes = good;  // 512 random bytes written inside the blob
  for (int i = 0; i < 512; ++i) random_bytes.cubin[200 + i] = static_cast<char>(i * 37 + 11);
  EXPECT_TRUE(contains(cubin_problem(random_bytes), "SHA-256")) << cubin_problem(random_bytes);

  CubinRecord four_bytes = good;  // and its hash updated to match
  four_bytes.cubin = {'\x7f', 'E', 'L', 'F'};
  four_bytes.cubin_sha256 = cubin_sha256(four_bytes.cubin);
  EXPECT_TRUE(contains(cubin_problem(four_bytes), "shorter than an ELF header"));

  CubinRecord other_kernel = good;  // the name looked up is not in the image
  other_kernel.lowered_names = {"_Z5otherv"};
  other_kernel.name_expressions = {"other"};
  EXPECT_TRUE(contains(cubin_problem(other_kernel), "no kernel named '_Z5otherv'"));

  // Another config's kernel, its expression relabelled as this one's.
  const CubinRecord other_config =
      kt::testing::tiny_cubin_record(kt::testing::hex_key("k"), {"_ZN2kt4kernILi64EEEvPf"});
  EXPECT_EQ(other_config.name_expressions.at(0), "kt::kern<64>");
  CubinRecord relabelled = other_config;
  relabelled.name_expressions = {"kt::kern<128>"};
  EXPECT_TRUE(contains(cubin_problem(relabelled), "is not the kernel 'kt::kern<128>'"))
      << cubin_problem(relabelled);

  CubinRecord truncated = good;  // headers point past the end
  truncated.cubin.resize(truncated.cubin.size() - 100);
  truncated.cubin_sha256 = cubin_sha256(truncated.cubin);
  EXPECT_TRUE(contains(cubin_problem(truncated), "outside the file")) << cubin_problem(truncated);

  CubinRecord bad_key = good;
  bad_key.compile_key = "k";
  EXPECT_TRUE(contains(cubin_problem(bad_key), "compile key"));
}

TEST(CacheTrust, ModuleCacheNeverHandsABadImageToTheDriver) {
  // No driver in this tier: reaching the driver would be a kt::Error (kNotFound), not this.
  CubinRecord four_bytes = kt::testing::tiny_cubin_record(kt::testing::hex_key("k"));
  four_bytes.cubin = {'\x7f', 'E', 'L', 'F'};
  CubinRecord other_kernel = kt::testing::tiny_cubin_record(kt::testing::hex_key("k"));
  other_kernel.lowered_names = {"_Z5otherv"};
  for (const CubinRecord& record : {four_bytes, other_kernel}) {
    rt::ModuleCache modules;
    try {
      modules.load(record);
      ADD_FAILURE() << "loaded";
    } catch (const CudaError& error) {
      EXPECT_EQ(error.code(), CUDA_ERROR_INVALID_IMAGE);
      EXPECT_TRUE(contains(error.what(), "cubin check before cuModuleLoadData")) << error.what();
    }
  }
}

TEST(CacheTrust, CubinImageCheckNeverReadsOutsideTheBlob) {
  const std::vector<char> good = kt::testing::tiny_cubin({"_Z1kv"});
  // Every prefix of a good image, and every single-byte change of its headers, is either
  // accepted or refused with a reason; under ASan (the fuzz build) any read past the end fails.
  for (std::size_t size = 0; size < good.size(); ++size) {
    const std::vector<char> prefix(good.begin(), good.begin() + static_cast<long>(size));
    EXPECT_NE(cubin_image_problem(prefix, {"_Z1kv"}), "") << size;
  }
  for (std::size_t at = 0; at < 64; ++at) {
    std::vector<char> changed = good;
    changed[at] = static_cast<char>(0xff);
    (void)cubin_image_problem(changed, {"_Z1kv"});
  }
}

}  // namespace
}  // namespace kt::cache
