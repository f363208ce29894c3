// Tests of CSV export and import: the codec follows RFC 4180 (quoted commas, quotes and
// newlines), export then import into a fresh database reproduces every row exactly, importing
// twice adds nothing, and a malformed file is an error naming its line.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cache/csv.hpp"
#include "cache/database.hpp"
#include "core/error.hpp"
#include "support/file_bytes.hpp"
#include "support/scratch_dir.hpp"

namespace kt::cache {
namespace {

namespace fs = std::filesystem;

using kt::testing::ScratchDir;

using kt::testing::read_file_bytes;
using kt::testing::write_file_bytes;

// A valid GEMM config key standing for `name` (distinct names, distinct keys): import stores
// only rows whose keys parse.
std::string config_named(const std::string& name) {
  static std::map<std::string, int> numbers;
  const int number = numbers.emplace(name, static_cast<int>(numbers.size()) + 1).first->second;
  return fmt::format("sm80.bm128.bn128.bk32.wm64.wn64.s4.g{}.sk1", number);
}

Measurement measurement(const std::string& config, Status status, const std::string& detail) {
  Measurement m;
  m.key = TuningKey{.problem_key = "gemm:bf16:bf16:nt:4096x4096x4096",
                    .device_fingerprint = "NVIDIA H200/cc90/132sm",
                    .protocol_version = 2,
                    .template_version = 5};
  m.config_key = config_named(config);
  m.status = status;
  m.median_us = 0.1 + 0.2;  // not exactly representable in few digits
  m.spread_pct = 2.0 / 3.0;
  m.num_reps = 25;
  m.tflops = 987.654321;
  m.sm_clock_mhz = 1755;
  m.predicted_us = 1e-7;
  m.detail = detail;
  m.run_id = "run,1";
  m.created_unix = 1712345678;
  return m;
}

Winner winner(const std::string& shape, const std::string& config, double median_us,
              bool predicted) {
  Winner w;
  w.key = TuningKey{.problem_key = "gemm:bf16:bf16:nt:" + shape,
                    .device_fingerprint = "NVIDIA \"H200\", SXM/cc90/132sm",
                    .protocol_version = 2,
                    .template_version = 5};
  w.config_key = config_named(config);
  w.median_us = median_us;
  w.predicted = predicted;
  w.run_id = "run-w";
  w.created_unix = 1712345679;
  return w;
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

// A database with every status, awkward text and both kinds of winners.
Database populated() {
  Database db = Database::open(":memory:");
  db.add_measurements({
      measurement("c1", Status::kOk, "plain"),
      measurement("c2", Status::kPredicted, ""),
      measurement("c3", Status::kRejected, "needs 300000 B of shared memory, device allows 232448"),
      measurement("c4", Status::kCompileError,
                  "error: \"kTileM\" must be, well, \"a power of two\"\nline 2\r\nline 3,"),
      measurement("c5", Status::kLaunchError, "\"\""),
      measurement("c6", Status::kWrongResult, "max error 0.5 at (1,2)\n"),
  });
  db.set_winner(winner("4096x4096x4096", "c1", 120.5, false));
  db.set_winner(winner("8x8x8", "c2", 1.0 / 3.0, true));
  return db;
}

const std::string kHeader =
    "kind,problem_key,device_fingerprint,protocol_version,template_version,config_key,status,"
    "median_us,spread_pct,num_reps,tflops,sm_clock_mhz,predicted_us,predicted,detail,run_id,"
    "created_unix\n";

// Runs `action`, expects a kt::Error whose message contains every one of `needles`.
template <typename Action>
void expect_error(Action action, const std::vector<std::string>& needles) {
  try {
    action();
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    for (const std::string& needle : needles) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos)
          << "'" << needle << "' not in: " << error.what();
    }
  }
}

// ---- the codec
// -----------------------------------------------------------------------------------

TEST(CacheCsv, FieldsAreQuotedOnlyWhenTheyNeedIt) {
  EXPECT_EQ(csv::quote_field("plain text"), "plain text");
  EXPECT_EQ(csv::quote_field(""), "");
  EXPECT_EQ(csv::quote_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv::quote_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv::quote_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv::quote_field("cr\r"), "\"cr\r\"");
}

TEST(CacheCsv, ParsesQuotedCommasQuotesAndNewlinesWithLineNumbers) {
  const std::string text =
      "\xEF\xBB\xBF"
      "a,\"b,c\",\"say \"\"hi\"\"\"\r\n"
      "\n"
      "\"multi\nline\",,\"\"\n"
      "last,field,\n";
  const std::vector<csv::Record> records = csv::parse(text, "t.csv");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].line, 1);
  EXPECT_EQ(records[0].fields, (std::vector<std::string>{"a", "b,c", "say \"hi\""}));
  EXPECT_EQ(records[1].line, 3);
  EXPECT_EQ(records[1].fields, (std::vector<std::string>{"multi\nline", "", ""}));
  EXPECT_EQ(records[2].line, 5);
  EXPECT_EQ(records[2].fields, (std::vector<std::string>{"last", "field", ""}));
}

TEST(CacheCsv, WrittenRecordsParseBackExactly) {
  const std::vector<std::string> fields = {"", ",", "\"", "\n", "\r\n", "a \"b\", c\nd", " x "};
  std::string text;
  csv::append_record(text, fields);
  csv::append_record(text, fields);
  const std::vector<csv::Record> records = csv::parse(text, "t.csv");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].fields, fields);
  EXPECT_EQ(records[1].fields, fields);
  EXPECT_EQ(records[1].line, 5);  // the first record spans lines 1-4
}

TEST(CacheCsv, UnclosedQuoteNamesTheLineWhereItOpened) {
  expect_error([] { csv::parse("a,b\nc,d\ne,\"open\nmore\n", "t.csv"); }, {"t.csv:3:", "closed"});
}

TEST(CacheCsv, QuoteInsideAnUnquotedFieldNamesItsLine) {
  expect_error([] { csv::parse("a,b\nc,d\"e\n", "t.csv"); }, {"t.csv:2:", "quote"});
}

TEST(CacheCsv, TextAfterAClosingQuoteNamesItsLine) {
  expect_error([] { csv::parse("a\n\"x\ny\"z,w\n", "t.csv"); }, {"t.csv:3:", "closing quote"});
}

// ---- export and import -----------------------------------------------------------------------

TEST(CacheCsv, ExportThenImportIntoAFreshDatabaseReproducesEveryRow) {
  ScratchDir dir;
  const std::string path = dir.file("export.csv");
  Database source = populated();
  source.export_csv(path);

  Database fresh = Database::open(dir.file("fresh.db"));
  EXPECT_EQ(fresh.import_csv(path), 8);
  const std::vector<Measurement> expected = source.all_measurements();
  const std::vector<Measurement> imported = fresh.all_measurements();
  ASSERT_EQ(imported.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) expect_same(imported[i], expected[i]);
  const std::vector<Winner> expected_winners = source.all_winners();
  const std::vector<Winner> imported_winners = fresh.all_winners();
  ASSERT_EQ(imported_winners.size(), expected_winners.size());
  for (std::size_t i = 0; i < expected_winners.size(); ++i)
    expect_same(imported_winners[i], expected_winners[i]);

  // And the fresh database exports the very same bytes.
  fresh.export_csv(dir.file("again.csv"));
  EXPECT_EQ(read_file_bytes(dir.file("again.csv")), read_file_bytes(path));
}

TEST(CacheCsv, ExportStartsWithTheHeaderAndAKindColumn) {
  ScratchDir dir;
  Database db = Database::open(":memory:");
  db.add_measurements({measurement("c1", Status::kOk, "plain")});
  db.set_winner(winner("1x1x1", "c1", 2.5, false));
  db.export_csv(dir.file("e.csv"));
  const std::string text = read_file_bytes(dir.file("e.csv"));
  ASSERT_EQ(text.substr(0, kHeader.size()), kHeader);
  EXPECT_NE(text.find("\nmeasurement,gemm:bf16:bf16:nt:4096x4096x4096,"), std::string::npos);
  EXPECT_NE(text.find("\nwinner,gemm:bf16:bf16:nt:1x1x1,\"NVIDIA \"\"H200\"\", SXM/cc90/132sm\","),
            std::string::npos);
}

TEST(CacheCsv, DetailWithCommasQuotesAndNewlinesRoundTrips) {
  ScratchDir dir;
  const std::string detail = "a, b; \"c\"\nd\r\ne,,\"\"\n";
  Database db = Database::open(":memory:");
  db.add_measurements({measurement("c", Status::kCompileError, detail)});
  db.export_csv(dir.file("d.csv"));
  Database fresh = Database::open(":memory:");
  EXPECT_EQ(fresh.import_csv(dir.file("d.csv")), 1);
  EXPECT_EQ(fresh.all_measurements().at(0).detail, detail);
}

TEST(CacheCsv, NanAndInfinityRoundTrip) {
  ScratchDir dir;
  Measurement m = measurement("c", Status::kLaunchError, "");
  m.median_us = std::numeric_limits<double>::quiet_NaN();
  m.tflops = std::numeric_limits<double>::infinity();
  Database db = Database::open(":memory:");
  db.add_measurements({m});
  db.export_csv(dir.file("n.csv"));
  Database fresh = Database::open(":memory:");
  EXPECT_EQ(fresh.import_csv(dir.file("n.csv")), 1);
  const Measurement back = fresh.all_measurements().at(0);
  EXPECT_TRUE(std::isnan(back.median_us));
  EXPECT_EQ(back.tflops, std::numeric_limits<double>::infinity());
  EXPECT_EQ(fresh.import_csv(dir.file("n.csv")), 0);
}

TEST(CacheCsv, ImportingTheSameFileTwiceAddsNothing) {
  ScratchDir dir;
  populated().export_csv(dir.file("twice.csv"));
  Database db = Database::open(dir.file("twice.db"));
  EXPECT_EQ(db.import_csv(dir.file("twice.csv")), 8);
  EXPECT_EQ(db.import_csv(dir.file("twice.csv")), 0);
  EXPECT_EQ(db.summary().num_measurements, 6);
  EXPECT_EQ(db.summary().num_winners, 2);
}

TEST(CacheCsv, ImportIntoTheExportingDatabaseAddsNothing) {
  ScratchDir dir;
  Database db = populated();
  db.export_csv(dir.file("self.csv"));
  EXPECT_EQ(db.import_csv(dir.file("self.csv")), 0);
}

TEST(CacheCsv, ImportedWinnerFollowsTheMergeRule) {
  ScratchDir dir;
  const std::string path = dir.file("w.csv");
  write_file_bytes(path, kHeader + "winner,gemm:bf16:bf16:nt:1x1x1,dev,1,1," +
                             config_named("predicted-fast") + ",,1,,,,,,1,,r,100\n" +
                             "winner,gemm:bf16:bf16:nt:2x2x2,dev,1,1," +
                             config_named("measured-slow") + ",,50,,,,,,0,,r,100\n");
  Database db = Database::open(":memory:");
  const TuningKey key1{.problem_key = "gemm:bf16:bf16:nt:1x1x1",
                       .device_fingerprint = "dev",
                       .protocol_version = 1,
                       .template_version = 1};
  const TuningKey key2{.problem_key = "gemm:bf16:bf16:nt:2x2x2",
                       .device_fingerprint = "dev",
                       .protocol_version = 1,
                       .template_version = 1};
  db.set_winner(Winner{.key = key1, .config_key = config_named("measured"), .median_us = 10});
  db.set_winner(Winner{.key = key2, .config_key = config_named("measured-fast"), .median_us = 10});
  std::vector<std::string> skipped;
  EXPECT_EQ(db.import_csv(path, &skipped), 0);
  EXPECT_TRUE(skipped.empty());
  EXPECT_EQ(db.find_winner(key1)->config_key, config_named("measured"));
  EXPECT_EQ(db.find_winner(key2)->config_key, config_named("measured-fast"));
}

TEST(CacheCsv, ColumnsMayComeInAnyOrder) {
  ScratchDir dir;
  const std::string path = dir.file("reordered.csv");
  write_file_bytes(path,
                   "created_unix,run_id,detail,predicted,predicted_us,sm_clock_mhz,tflops,num_reps,"
                   "spread_pct,median_us,status,config_key,template_version,protocol_version,"
                   "device_fingerprint,problem_key,kind\n"
                   "100,r,,1,,,,,,2.5,," +
                       config_named("cfg") + ",1,1,dev,gemm:bf16:bf16:nt:8x8x8,winner\n");
  Database db = Database::open(":memory:");
  EXPECT_EQ(db.import_csv(path), 1);
  EXPECT_EQ(db.all_winners().at(0).median_us, 2.5);
}

struct MalformedCase {
  const char* name;
  std::string text;
  std::vector<std::string> needles;
};

TEST(CacheCsv, MalformedFilesAreErrorsNamingTheLineAndAddNothing) {
  const std::string good_row =
      "measurement,gemm:x,dev,1,1,cfg,ok,1.5,0.5,10,100,1500,1.4,,note,r,100\n";
  const std::vector<MalformedCase> cases = {
      {"bad number",
       kHeader + good_row + good_row +
           "measurement,gemm:x,dev,1,1,cfg,ok,fast,0.5,10,100,1500,1.4,,n,r,100\n",
       {":4:", "median_us", "fast"}},
      {"bad status",
       kHeader + good_row + "measurement,gemm:x,dev,1,1,cfg,great,1,0.5,10,100,1500,1.4,,n,r,100\n",
       {":3:", "great"}},
      {"short row", kHeader + good_row + "measurement,gemm:x,dev\n", {":3:", "3 fields"}},
      {"bad kind",
       kHeader + "record,gemm:x,dev,1,1,cfg,ok,1,0.5,10,100,1500,1.4,,n,r,100\n",
       {":2:", "record"}},
      {"winner with a status",
       kHeader + "winner,gemm:x,dev,1,1,cfg,ok,1,,,,,,0,,r,100\n",
       {":2:", "status"}},
      {"bad predicted flag",
       kHeader + "winner,gemm:x,dev,1,1,cfg,,1,,,,,,yes,,r,100\n",
       {":2:", "predicted"}},
      {"integer overflow",
       kHeader + good_row +
           "measurement,gemm:x,dev,99999999999,1,cfg,ok,1,0.5,10,100,1500,"
           "1.4,,n,r,100\n",
       {":3:", "protocol_version"}},
      {"unknown column", "kind,problem_key,colour\n", {":1:", "colour"}},
      {"missing column", "kind,problem_key\n", {":1:", "device_fingerprint"}},
      {"stray quote", kHeader + good_row + "measurement,gemm:\"x\",dev\n", {":3:", "quote"}},
      {"unclosed quote",
       kHeader + good_row + good_row +
           "measurement,gemm:x,dev,1,1,cfg,ok,1,0.5,10,100,1500,1.4,,\"n,r,100\n",
       {":4:", "closed"}},
      {"empty file", "", {":1:", "empty"}},
  };
  ScratchDir dir;
  Database db = Database::open(":memory:");
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.file("bad.csv");
    write_file_bytes(path, c.text);
    std::vector<std::string> needles = c.needles;
    needles.push_back(path);
    expect_error([&] { db.import_csv(path); }, needles);
    EXPECT_EQ(db.summary().num_measurements, 0);
    EXPECT_EQ(db.summary().num_winners, 0);
  }
}

TEST(CacheCsv, MissingInputFileIsNotFound) {
  ScratchDir dir;
  Database db = Database::open(":memory:");
  try {
    db.import_csv(dir.file("absent.csv"));
    FAIL() << "imported a missing file";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kNotFound);
  }
}

TEST(CacheCsv, UnwritableExportPathIsAnError) {
  ScratchDir dir;
  Database db = Database::open(":memory:");
  expect_error([&] { db.export_csv(dir.file("no/such/dir/out.csv")); }, {"out.csv"});
}

}  // namespace
}  // namespace kt::cache
