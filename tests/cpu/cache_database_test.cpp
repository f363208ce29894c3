// Tests of the tuning database's records: every field of cubins, measurements and winners
// survives a round trip through a file; winners follow their replacement rule; the database
// is WAL, keeps data across reopenings and may be shared by threads and connections.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"
#include "support/scratch_dir.hpp"

namespace kt::cache {
namespace {

namespace fs = std::filesystem;

using kt::testing::ScratchDir;

CubinRecord sample_cubin(const std::string& compile_key) {
  CubinRecord r;
  r.compile_key = compile_key;
  r.arch = "sm_90a";
  r.source_name = "gemm sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1";
  r.name_expressions = {
      "kt::gemm_sm80<kt::bf16, kt::bf16, 128, 128, 32, 64, 64, 4, true, true, "
      "false>",
      "kt::gemm_splitk_reduce<kt::bf16>"};
  r.lowered_names = {"_ZN2kt9gemm_sm80ILi128EEEvv", "_ZN2kt21gemm_splitk_reduceEv"};
  for (int i = 0; i < 3000; ++i) r.cubin.push_back(static_cast<char>(i * 7 % 256));
  r.cubin[0] = '\0';
  r.registers = 168;
  r.spill_bytes = 24;
  r.smem_static_bytes = 1024;
  r.log = "ptxas info: Used 168 registers\nptxas warning: 'x', \"y\"\n";
  r.nvrtc_version = "13.0";
  r.compile_ms = 1234.5678;
  return r;
}

TuningKey sample_key(const std::string& shape = "4096x4096x4096") {
  return TuningKey{.problem_key = "gemm:bf16:bf16:nt:" + shape,
                   .device_fingerprint = "NVIDIA H200/cc90/132sm",
                   .protocol_version = 3,
                   .template_version = 7};
}

Measurement sample_measurement(const std::string& config_key, Status status = Status::kOk) {
  Measurement m;
  m.key = sample_key();
  m.config_key = config_key;
  m.status = status;
  m.median_us = 123.456789012345;
  m.spread_pct = 1.25;
  m.num_reps = 50;
  m.tflops = 712.3456;
  m.sm_clock_mhz = 1980;
  m.predicted_us = 118.75;
  m.detail = "first line, with a comma\nsecond \"quoted\" line";
  m.run_id = "run-2025-01-01T00:00:00Z-1234";
  m.created_unix = 1700000000;
  return m;
}

Winner sample_winner(const TuningKey& key, const std::string& config_key, double median_us,
                     bool predicted) {
  Winner w;
  w.key = key;
  w.config_key = config_key;
  w.median_us = median_us;
  w.predicted = predicted;
  w.run_id = "run-7";
  w.created_unix = 1700000100;
  return w;
}

void expect_same(const CubinRecord& a, const CubinRecord& b) {
  EXPECT_EQ(a.compile_key, b.compile_key);
  EXPECT_EQ(a.arch, b.arch);
  EXPECT_EQ(a.source_name, b.source_name);
  EXPECT_EQ(a.name_expressions, b.name_expressions);
  EXPECT_EQ(a.lowered_names, b.lowered_names);
  EXPECT_EQ(a.cubin, b.cubin);
  EXPECT_EQ(a.registers, b.registers);
  EXPECT_EQ(a.spill_bytes, b.spill_bytes);
  EXPECT_EQ(a.smem_static_bytes, b.smem_static_bytes);
  EXPECT_EQ(a.log, b.log);
  EXPECT_EQ(a.nvrtc_version, b.nvrtc_version);
  EXPECT_EQ(a.compile_ms, b.compile_ms);
}

void expect_same(const Measurement& a, const Measurement& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.config_key, b.config_key);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.median_us, b.median_us);
  EXPECT_EQ(a.spread_pct, b.spread_pct);
  EXPECT_EQ(a.num_reps, b.num_reps);
  EXPECT_EQ(a.tflops, b.tflops);
  EXPECT_EQ(a.sm_clock_mhz, b.sm_clock_mhz);
  EXPECT_EQ(a.predicted_us, b.predicted_us);
  EXPECT_EQ(a.detail, b.detail);
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.created_unix, b.created_unix);
}

void expect_same(const Winner& a, const Winner& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.config_key, b.config_key);
  EXPECT_EQ(a.median_us, b.median_us);
  EXPECT_EQ(a.predicted, b.predicted);
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.created_unix, b.created_unix);
}

TEST(CacheDatabase, CubinRoundTripsEveryFieldThroughAFile) {
  ScratchDir dir;
  const CubinRecord cubin = sample_cubin("ab12");
  {
    Database db = Database::open(dir.file("k.db"));
    db.put_cubin(cubin);
  }
  Database db = Database::open(dir.file("k.db"));
  const std::optional<CubinRecord> found = db.find_cubin("ab12");
  ASSERT_TRUE(found.has_value());
  expect_same(*found, cubin);
}

TEST(CacheDatabase, CubinWithNoNamesAndAnEmptyBinaryRoundTrips) {
  Database db = Database::open(":memory:");
  CubinRecord cubin = sample_cubin("empty");
  cubin.name_expressions.clear();
  cubin.lowered_names.clear();
  cubin.cubin.clear();
  cubin.log.clear();
  db.put_cubin(cubin);
  const std::optional<CubinRecord> found = db.find_cubin("empty");
  ASSERT_TRUE(found.has_value());
  expect_same(*found, cubin);
}

TEST(CacheDatabase, MissingCubinIsNotFound) {
  Database db = Database::open(":memory:");
  EXPECT_FALSE(db.find_cubin("nope").has_value());
}

TEST(CacheDatabase, PutCubinReplacesTheRecordOfItsKey) {
  Database db = Database::open(":memory:");
  CubinRecord cubin = sample_cubin("k1");
  db.put_cubin(cubin);
  cubin.registers = 96;
  cubin.cubin = {'x', 'y'};
  db.put_cubin(cubin);
  expect_same(*db.find_cubin("k1"), cubin);
  EXPECT_EQ(db.summary().num_cubins, 1);
}

TEST(CacheDatabase, DeleteCubinRemovesOnlyThatKey) {
  Database db = Database::open(":memory:");
  db.put_cubin(sample_cubin("k1"));
  db.put_cubin(sample_cubin("k2"));
  db.delete_cubin("k1");
  db.delete_cubin("never-stored");
  EXPECT_FALSE(db.find_cubin("k1").has_value());
  EXPECT_TRUE(db.find_cubin("k2").has_value());
}

TEST(CacheDatabase, PutCubinRejectsNamesThatCannotRoundTrip) {
  Database db = Database::open(":memory:");
  CubinRecord two_lines = sample_cubin("k");
  two_lines.name_expressions[0] = "a\nb";
  EXPECT_THROW(db.put_cubin(two_lines), Error);
  CubinRecord mismatched = sample_cubin("k");
  mismatched.lowered_names.pop_back();
  EXPECT_THROW(db.put_cubin(mismatched), Error);
  EXPECT_EQ(db.summary().num_cubins, 0);
}

TEST(CacheDatabase, MeasurementRoundTripsEveryFieldThroughAFile) {
  ScratchDir dir;
  std::vector<Measurement> rows;
  for (const Status status : {Status::kOk, Status::kPredicted, Status::kRejected,
                              Status::kCompileError, Status::kLaunchError, Status::kWrongResult}) {
    rows.push_back(sample_measurement(fmt::format("cfg-{}", to_string(status)), status));
  }
  rows[1].median_us = -0.5;
  rows[2].tflops = 1e-300;
  rows[3].spread_pct = std::numeric_limits<double>::infinity();
  {
    Database db = Database::open(dir.file("m.db"));
    db.add_measurements(rows);
  }
  Database db = Database::open(dir.file("m.db"));
  const std::vector<Measurement> read = db.measurements(sample_key());
  ASSERT_EQ(read.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) expect_same(read[i], rows[i]);
}

TEST(CacheDatabase, NanTimesReadBackAsNan) {
  Database db = Database::open(":memory:");
  Measurement m = sample_measurement("cfg", Status::kLaunchError);
  m.median_us = std::numeric_limits<double>::quiet_NaN();
  m.tflops = std::numeric_limits<double>::quiet_NaN();
  db.add_measurements({m});
  const std::vector<Measurement> read = db.all_measurements();
  ASSERT_EQ(read.size(), 1u);
  EXPECT_TRUE(std::isnan(read[0].median_us));
  EXPECT_TRUE(std::isnan(read[0].tflops));
  EXPECT_EQ(read[0].predicted_us, m.predicted_us);
}

TEST(CacheDatabase, MeasurementsOfOneKeyComeInInsertionOrder) {
  Database db = Database::open(":memory:");
  Measurement other_shape = sample_measurement("c0");
  other_shape.key = sample_key("1x1x1");
  Measurement other_device = sample_measurement("c0");
  other_device.key.device_fingerprint = "NVIDIA A100-SXM4-80GB/cc80/108sm";
  Measurement other_protocol = sample_measurement("c0");
  other_protocol.key.protocol_version = 4;
  db.add_measurements({sample_measurement("c3"), other_shape, sample_measurement("c1"),
                       other_device, other_protocol, sample_measurement("c2")});
  const std::vector<Measurement> read = db.measurements(sample_key());
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].config_key, "c3");
  EXPECT_EQ(read[1].config_key, "c1");
  EXPECT_EQ(read[2].config_key, "c2");
  EXPECT_EQ(db.all_measurements().size(), 6u);
}

TEST(CacheDatabase, AddMeasurementsStampsRowsWithoutATime) {
  Database db = Database::open(":memory:");
  Measurement m = sample_measurement("c");
  m.created_unix = 0;
  const std::int64_t before = static_cast<std::int64_t>(std::time(nullptr));
  db.add_measurements({m});
  const std::int64_t stamped = db.all_measurements().at(0).created_unix;
  EXPECT_GE(stamped, before);
  EXPECT_LE(stamped, before + 5);
}

TEST(CacheDatabase, RemeasuringAConfigInTheSameSecondKeepsBothResults) {
  Database db = Database::open(":memory:");
  Measurement first = sample_measurement("c");
  Measurement second = first;
  second.median_us += 0.5;
  db.add_measurements({first, second});
  EXPECT_EQ(db.all_measurements().size(), 2u);
}

TEST(CacheDatabase, AnIdenticalMeasurementIsStoredOnce) {
  Database db = Database::open(":memory:");
  db.add_measurements({sample_measurement("c"), sample_measurement("c")});
  db.add_measurements({sample_measurement("c")});
  EXPECT_EQ(db.all_measurements().size(), 1u);
}

TEST(CacheDatabase, WinnerRoundTripsEveryFieldThroughAFile) {
  ScratchDir dir;
  const Winner winner = sample_winner(sample_key(), "cfg-best", 98.765, false);
  Winner predicted = sample_winner(sample_key("8x8x8"), "cfg-model", 3.5, true);
  predicted.created_unix = 0;
  {
    Database db = Database::open(dir.file("w.db"));
    db.set_winner(winner);
    db.set_winner(predicted);
  }
  Database db = Database::open(dir.file("w.db"));
  const std::optional<Winner> found = db.find_winner(sample_key());
  ASSERT_TRUE(found.has_value());
  expect_same(*found, winner);
  const std::optional<Winner> found_predicted = db.find_winner(sample_key("8x8x8"));
  ASSERT_TRUE(found_predicted.has_value());
  EXPECT_TRUE(found_predicted->predicted);
  EXPECT_GT(found_predicted->created_unix, 0);
  EXPECT_FALSE(db.find_winner(sample_key("1x2x3")).has_value());
}

TEST(CacheDatabase, SetWinnerReplacesAMeasuredWinnerEvenWithASlowerOne) {
  Database db = Database::open(":memory:");
  db.set_winner(sample_winner(sample_key(), "fast", 10, false));
  db.set_winner(sample_winner(sample_key(), "retuned", 12, false));
  EXPECT_EQ(db.find_winner(sample_key())->config_key, "retuned");
  EXPECT_EQ(db.all_winners().size(), 1u);
}

TEST(CacheDatabase, SetWinnerKeepsAMeasuredWinnerAgainstAPrediction) {
  Database db = Database::open(":memory:");
  db.set_winner(sample_winner(sample_key(), "measured", 10, false));
  db.set_winner(sample_winner(sample_key(), "predicted", 1, true));
  const Winner kept = *db.find_winner(sample_key());
  EXPECT_EQ(kept.config_key, "measured");
  EXPECT_FALSE(kept.predicted);
}

TEST(CacheDatabase, SetWinnerReplacesAPredictionWithAMeasurement) {
  Database db = Database::open(":memory:");
  db.set_winner(sample_winner(sample_key(), "predicted", 1, true));
  db.set_winner(sample_winner(sample_key(), "predicted-2", 2, true));
  EXPECT_EQ(db.find_winner(sample_key())->config_key, "predicted-2");
  db.set_winner(sample_winner(sample_key(), "measured", 10, false));
  EXPECT_EQ(db.find_winner(sample_key())->config_key, "measured");
}

TEST(CacheDatabase, WinnersWithPrefixSelectDeviceVersionsAndProblemPrefix) {
  Database db = Database::open(":memory:");
  const std::string device = "NVIDIA H200/cc90/132sm";
  const auto key = [&](const std::string& problem, const std::string& dev, int protocol,
                       int templ) {
    return TuningKey{.problem_key = problem,
                     .device_fingerprint = dev,
                     .protocol_version = protocol,
                     .template_version = templ};
  };
  db.set_winner(sample_winner(key("gemm:bf16:bf16:nt:64x64x64", device, 3, 7), "a", 1, false));
  db.set_winner(sample_winner(key("gemm:bf16:bf16:nt:8x8x8", device, 3, 7), "b", 1, false));
  db.set_winner(sample_winner(key("gemm:bf16:bf16:nt", device, 3, 7), "no-colon", 1, false));
  db.set_winner(sample_winner(key("gemm:bf16:bf16:nn:8x8x8", device, 3, 7), "nn", 1, false));
  db.set_winner(sample_winner(key("gemm:bf16:bf16:nt;", device, 3, 7), "after", 1, false));
  db.set_winner(sample_winner(key("gemm:bf16:bf16:nt:1x1x1", "A100", 3, 7), "dev", 1, false));
  db.set_winner(sample_winner(key("gemm:bf16:bf16:nt:1x1x1", device, 4, 7), "prot", 1, false));
  db.set_winner(sample_winner(key("gemm:bf16:bf16:nt:1x1x1", device, 3, 8), "tmpl", 1, false));
  const std::vector<Winner> found = db.winners_with_prefix(device, "gemm:bf16:bf16:nt:", 3, 7);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].config_key, "a");
  EXPECT_EQ(found[1].config_key, "b");
  EXPECT_EQ(db.winners_with_prefix(device, "", 3, 7).size(), 5u);
  EXPECT_EQ(db.winners_with_prefix(device, "attention:", 3, 7).size(), 0u);
}

TEST(CacheDatabase, FileIsInWalModeWithTheKerntuneApplicationId) {
  ScratchDir dir;
  { Database db = Database::open(dir.file("wal.db")); }
  sql::Connection raw = sql::Connection::open(dir.file("wal.db"), sql::OpenMode::kReadOnly);
  sql::Statement mode(raw, "PRAGMA journal_mode");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.column_text(0), "wal");
  sql::Statement app(raw, "PRAGMA application_id");
  ASSERT_TRUE(app.step());
  EXPECT_EQ(app.column_int64(0), 0x4B544442);
}

TEST(CacheDatabase, ReopeningKeepsEveryKindOfRow) {
  ScratchDir dir;
  const std::string path = dir.file("nested/deeper/keep.db");
  {
    Database db = Database::open(path);
    EXPECT_EQ(db.path(), path);
    db.put_cubin(sample_cubin("k"));
    db.add_measurements({sample_measurement("a"), sample_measurement("b")});
    db.set_winner(sample_winner(sample_key(), "a", 5, false));
  }
  Database db = Database::open(path);
  const Summary summary = db.summary();
  EXPECT_EQ(summary.num_cubins, 1);
  EXPECT_EQ(summary.cubin_bytes, 3000);
  EXPECT_EQ(summary.num_measurements, 2);
  EXPECT_EQ(summary.num_winners, 1);
  EXPECT_EQ(summary.schema_version, kSchemaVersion);
}

TEST(CacheDatabase, ReadOnlyDatabaseReadsButDoesNotWrite) {
  ScratchDir dir;
  {
    Database db = Database::open(dir.file("ro.db"));
    db.set_winner(sample_winner(sample_key(), "a", 5, false));
  }
  Database db = Database::open_readonly(dir.file("ro.db"));
  EXPECT_EQ(db.find_winner(sample_key())->config_key, "a");
  try {
    db.set_winner(sample_winner(sample_key(), "b", 1, false));
    FAIL() << "a read-only database accepted a write";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kDatabase);
  }
}

TEST(CacheDatabase, ReadOnlyOpenOfAMissingFileIsNotFound) {
  ScratchDir dir;
  try {
    Database::open_readonly(dir.file("absent.db"));
    FAIL() << "opened a missing file";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kNotFound);
    EXPECT_NE(std::string(error.what()).find("absent.db"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(dir.file("absent.db")));
}

TEST(CacheDatabase, ThreadsSharingOneDatabaseLoseNoWrites) {
  ScratchDir dir;
  Database db = Database::open(dir.file("threads.db"));
  constexpr int kThreads = 8, kPerThread = 40;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&db, t] {
      for (int i = 0; i < kPerThread; ++i) {
        db.put_cubin(sample_cubin(fmt::format("t{}-{}", t, i)));
        db.add_measurements({sample_measurement(fmt::format("t{}-{}", t, i))});
        EXPECT_TRUE(db.find_cubin(fmt::format("t{}-{}", t, i)).has_value());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const Summary summary = db.summary();
  EXPECT_EQ(summary.num_cubins, kThreads * kPerThread);
  EXPECT_EQ(summary.num_measurements, kThreads * kPerThread);
}

TEST(CacheDatabase, TwoConnectionsToOneFileSeeEachOthersWrites) {
  ScratchDir dir;
  Database first = Database::open(dir.file("shared.db"));
  Database second = Database::open(dir.file("shared.db"));
  std::thread writer([&first] {
    for (int i = 0; i < 50; ++i)
      first.add_measurements({sample_measurement(fmt::format("a{}", i))});
  });
  for (int i = 0; i < 50; ++i) second.add_measurements({sample_measurement(fmt::format("b{}", i))});
  writer.join();
  EXPECT_EQ(first.summary().num_measurements, 100);
  EXPECT_EQ(second.summary().num_measurements, 100);
}

TEST(CacheDatabase, OpeningAndReadingDoNotWaitForAWriter) {
  ScratchDir dir;
  const std::string path = dir.file("busy.db");
  Database::open(path).set_winner(sample_winner(sample_key(), "a", 5, false));
  sql::Connection writer = sql::Connection::open(path, sql::OpenMode::kReadWriteCreate);
  writer.exec("BEGIN IMMEDIATE");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Database::open(path).find_winner(sample_key())->config_key, "a");
  EXPECT_EQ(Database::open_readonly(path).summary().num_winners, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  writer.exec("ROLLBACK");
}

TEST(CacheDatabase, MovedFromDatabaseThrowsInsteadOfCrashing) {
  Database db = Database::open(":memory:");
  Database moved = std::move(db);
  EXPECT_THROW(db.summary(), Error);  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_EQ(moved.summary().num_cubins, 0);
}

TEST(CacheStatus, EveryStatusRoundTripsThroughItsName) {
  for (const Status status : {Status::kOk, Status::kPredicted, Status::kRejected,
                              Status::kCompileError, Status::kLaunchError, Status::kWrongResult}) {
    EXPECT_EQ(parse_status(to_string(status)), status);
  }
  EXPECT_STREQ(to_string(Status::kCompileError), "compile_error");
  EXPECT_STREQ(to_string(Status::kWrongResult), "wrong_result");
}

TEST(CacheStatus, UnknownNameIsAnErrorListingTheNames) {
  try {
    parse_status("OK");
    FAIL() << "accepted 'OK'";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(error.what()).find("wrong_result"), std::string::npos);
  }
}

}  // namespace
}  // namespace kt::cache
