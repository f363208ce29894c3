// `kerntune report`'s data layer, through the CLI as a subprocess on real SQLite files: --json
// carries every config with its tile, the winner's and runner-up's waves as the model counts
// them, predicted rows marked as such, a bench CSV's baseline ratios; the database is only read;
// bad input (no database, a damaged or older one, an unknown op or device, a hostile bench CSV, no
// python3 with matplotlib) exits 1 naming the problem and writes nothing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_model.hpp"
#include "core/versions.hpp"
#include "support/cli_runner.hpp"
#include "support/damaged_database.hpp"
#include "support/file_bytes.hpp"
#include "support/old_schema.hpp"
#include "support/scratch_dir.hpp"
#include "tools/bench_csv.hpp"
#include "tuner/run_ledger.hpp"

namespace kt::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kH200 = "NVIDIA H200/cc90/132sm";
constexpr const char* kA100 = "NVIDIA A100-SXM4-80GB/cc80/108sm";
constexpr const char* kProblem = "gemm:bf16:bf16:nt:4096x4096x4096";
constexpr const char* kWinner = "sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1";
constexpr const char* kRunnerUp = "sm90.bm128.bn128.bk64.s4.c2.e2.cl1.g8.sk1";
constexpr const char* kThird = "sm90.bm256.bn128.bk64.s4.c2.e0.cl1.g8.sk1";

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

cache::TuningKey gemm_key(const std::string& device = kH200,
                          const std::string& problem = kProblem) {
  return {problem, device, kBenchmarkProtocolVersion, kGemmTemplateVersion};
}

cache::Measurement row(const cache::TuningKey& key, const std::string& config, cache::Status status,
                       double us, double predicted_us, const std::string& detail = "") {
  cache::Measurement m;
  m.key = key;
  m.config_key = config;
  m.status = status;
  m.median_us = us;
  m.predicted_us = predicted_us;
  m.detail = detail;
  m.run_id = "r1";
  return m;
}

void set_winner(cache::Database& db, const cache::TuningKey& key, const std::string& config,
                double us, bool predicted) {
  cache::Winner w;
  w.key = key;
  w.config_key = config;
  w.median_us = us;
  w.predicted = predicted;
  w.run_id = "r1";
  db.set_winner(w);
}

// A database tuned without a GPU: three predicted configs, one that did not compile.
void write_predicted_database(const std::string& path) {
  cache::Database db = cache::Database::open(path);
  const cache::TuningKey key = gemm_key();
  db.add_measurements({row(key, kWinner, cache::Status::kPredicted, 200, 200),
                       row(key, kRunnerUp, cache::Status::kPredicted, 210, 210),
                       row(key, kThird, cache::Status::kPredicted, 230, 230),
                       row(key, "sm90.bm64.bn64.bk64.s4.c1.e0.cl1.g8.sk1",
                           cache::Status::kCompileError, 0, 400, "nvrtc: error")});
  set_winner(db, key, kWinner, 200, true);
}

// A measured database: the winner has a first pass and a finalist's re-measurement.
void write_measured_database(const std::string& path) {
  cache::Database db = cache::Database::open(path);
  const cache::TuningKey key = gemm_key();
  db.add_measurements({row(key, kWinner, cache::Status::kOk, 190, 180),
                       row(key, kRunnerUp, cache::Status::kOk, 205, 195),
                       row(key, kThird, cache::Status::kIllegalAddress, 0, 170),
                       row(key, kWinner, cache::Status::kOk, 185, 180, tune::kFinalistDetail)});
  set_winner(db, key, kWinner, 185, false);
}

// `expression` of the JSON `kerntune report --json <args>` printed (as `d`), by python3; the
// report must exit 0 with stdout holding nothing but the document.
std::string report_field(const ScratchDir& dir, const std::string& args,
                         const std::string& expression) {
  const std::string out = dir.file("report.json");
  const CliResult r = run_cli_stdout_to(out, "report --json " + args, dir.file("unused.db"));
  EXPECT_EQ(r.status, 0) << r.output;
  const CliResult parsed = run_shell(
      "python3 -c " +
      shell_quote("import json, sys; d = json.load(sys.stdin); print(" + expression + ")") + " <" +
      shell_quote(out));
  EXPECT_EQ(parsed.status, 0) << read_file_bytes(out) << "\n" << parsed.output;
  return parsed.output;
}

TEST(CliReport, APredictedDatabaseIsMarkedPredictedWithTilesAndTheModelsWaves) {
  ScratchDir dir;
  const std::string db = dir.file("predicted.db");
  write_predicted_database(db);
  const std::string before = read_file_bytes(db);
  const std::string args = "--db " + shell_quote(db);
  EXPECT_EQ(report_field(dir, args, "d['predicted_only'], len(d['problems']), d['bench_file']"),
            "True 1 None\n");
  EXPECT_EQ(report_field(dir, args,
                         "[(c['config'], c['predicted'], c['us'], c['tile'], c['spread_pct']) "
                         "for c in d['problems'][0]['configs']]"),
            fmt::format("[('{}', True, 200, [128, 256], None), ('{}', True, 210, [128, 128], "
                        "None), ('{}', True, 230, [256, 128], None)]\n",
                        kWinner, kRunnerUp, kThird));
  EXPECT_EQ(report_field(dir, args,
                         "d['problems'][0]['tile_axes'], d['problems'][0]['failures'], "
                         "d['problems'][0]['winner']['config'], "
                         "d['problems'][0]['runner_up']['config'], "
                         "d['problems'][0]['winner']['predicted']"),
            fmt::format("['bm', 'bn'] {{'compile_error': 1}} {} {} True\n", kWinner, kRunnerUp));
  // The waves are the GEMM model's on the device the rows name.
  const GemmEstimate e =
      estimate(parse_gemm_key(kProblem), parse_gemm_config_key(kWinner), device_profile("h200"));
  EXPECT_EQ(report_field(dir, args,
                         "[d['problems'][0]['winner']['waves'][k] for k in ('num_ctas', 'slots', "
                         "'waves', 'last_wave_ctas')]"),
            fmt::format("[{}, {}, {}, {}]\n", e.waves.num_ctas, e.waves.slots, e.waves.waves,
                        e.waves.last_wave_ctas));
  EXPECT_EQ(report_field(dir, args, "d['devices']"),
            fmt::format("[{{'fingerprint': '{}', 'model': {{'num_sms': 132, 'sm_clock_mhz': "
                        "1980, 'dram_gbps': 4270, 'mma_sync_tflops': 660, 'wgmma_tflops': 989, "
                        "'tensor_tflops': 989}}}}]\n",
                        kH200));
  EXPECT_EQ(read_file_bytes(db), before) << "report wrote the database";
}

TEST(CliReport, AMeasuredDatabaseTakesTheFinalistsTimingAndKeepsTheModelsBeside) {
  ScratchDir dir;
  const std::string db = dir.file("measured.db");
  write_measured_database(db);
  const std::string args = "--db " + shell_quote(db);
  EXPECT_EQ(
      report_field(dir, args,
                   "d['predicted_only'], [(c['config'], c['us'], c['predicted_us'], "
                   "c['finalist']) for c in d['problems'][0]['configs']]"),
      fmt::format("False [('{}', 185, 180, True), ('{}', 205, 195, False)]\n", kWinner, kRunnerUp));
  EXPECT_EQ(report_field(dir, args,
                         "d['problems'][0]['runner_up']['config'], "
                         "d['problems'][0]['runner_up']['predicted'], "
                         "d['problems'][0]['failures']"),
            fmt::format("{} False {{'illegal_address': 1}}\n", kRunnerUp));
}

// A bench CSV as `kerntune bench --csv` writes it, with `rows` after the header.
std::string bench_csv(const ScratchDir& dir, const std::vector<std::string>& rows) {
  std::string text = std::string(cli::kBenchCsvHeader) + "\n";
  for (const std::string& r : rows) text += r + "\n";
  const std::string path = dir.file("bench.csv");
  write_file_bytes(path, text);
  return path;
}

std::string bench_row(const std::string& problem, const std::string& kerntune_us,
                      const std::string& baseline, const std::string& baseline_us) {
  return fmt::format(
      "{},{},exact,{},0.50,700.0,0.100,{},{},0.40,690.0,0.100,1.0000,1e-3,1e-3,50.000,2.000,"
      "0.2500,algo=1",
      problem, kWinner, kerntune_us, baseline, baseline_us);
}

TEST(CliReport, ABenchCsvGivesEachProblemItsBaselineRatios) {
  ScratchDir dir;
  const std::string db = dir.file("measured.db");
  write_measured_database(db);
  const std::string csv =
      bench_csv(dir, {bench_row(kProblem, "200.000", "cuBLASLt", "210.000"),
                      bench_row(kProblem, "200.000", "cuBLASLt", "0.000"),
                      bench_row("gemm:bf16:bf16:nt:64x64x64", "5.000", "cuBLASLt", "6.000")});
  const std::string args = "--db " + shell_quote(db) + " --bench " + shell_quote(csv);
  EXPECT_EQ(report_field(dir, args,
                         "[(b['line'], b['baseline'], b['ratio'], b['baseline_us']) for b in "
                         "d['problems'][0]['bench']]"),
            "[(2, 'cuBLASLt', 1.05, 210), (3, 'cuBLASLt', None, None)]\n");
  EXPECT_TRUE(contains(report_field(dir, args, "d['notes']"),
                       "bench rows of gemm:bf16:bf16:nt:64x64x64, which the report does not hold"));
}

TEST(CliReport, FiltersSelectOpsAndDevices) {
  ScratchDir dir;
  const std::string db = dir.file("two.db");
  write_predicted_database(db);
  {
    cache::Database d = cache::Database::open(db);
    const cache::TuningKey a100 = gemm_key(kA100);
    d.add_measurements({row(a100, "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1",
                            cache::Status::kPredicted, 600, 600)});
    set_winner(d, a100, "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1", 600, true);
  }
  const std::string args = "--db " + shell_quote(db);
  EXPECT_EQ(report_field(dir, args, "[p['device'] for p in d['problems']]"),
            fmt::format("['{}', '{}']\n", kA100, kH200));
  EXPECT_EQ(report_field(dir, args + " --device " + shell_quote(kH200),
                         "[p['device'] for p in d['problems']]"),
            fmt::format("['{}']\n", kH200));
  // A bench CSV names no device: with two, the report asks which one bench ran on.
  const std::string csv = bench_csv(dir, {bench_row(kProblem, "200.000", "cuBLASLt", "210.000")});
  const CliResult both =
      run_cli("report --json " + args + " --bench " + shell_quote(csv), dir.file("unused.db"));
  EXPECT_EQ(both.status, 1) << both.output;
  EXPECT_TRUE(contains(both.output, "on 2 devices")) << both.output;
  EXPECT_TRUE(contains(both.output, "pass --device")) << both.output;
  const CliResult other = run_cli("report --json " + args + " --op rmsnorm", dir.file("unused.db"));
  EXPECT_EQ(other.status, 1) << other.output;
  EXPECT_TRUE(contains(other.output, "nothing to report")) << other.output;
}

struct BadInput {
  const char* args;  // after --db DB
  std::vector<std::string> needles;
};

TEST(CliReport, BadInputExitsOneNamingTheProblem) {
  ScratchDir dir;
  const std::string db = dir.file("predicted.db");
  write_predicted_database(db);
  const std::vector<BadInput> cases = {
      {"--json --op conv2d", {"'conv2d'", "gemm", "attention"}},
      {"--json --device 'NVIDIA B200/cc100/148sm'", {"no rows of that device", kH200}},
      {"", {"pass --out FILE.html", "--json"}},
      {"--json --bench /nonexistent/bench.csv", {"cannot read bench CSV '/nonexistent/bench.csv'"}},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.args);
    const CliResult r =
        run_cli("report --db " + shell_quote(db) + " " + c.args, dir.file("unused.db"));
    EXPECT_EQ(r.status, 1) << r.output;
    for (const std::string& needle : c.needles)
      EXPECT_TRUE(contains(r.output, needle)) << "no '" << needle << "' in:\n" << r.output;
  }
}

TEST(CliReport, AHostileBenchCsvIsRefusedNamingItsLine) {
  ScratchDir dir;
  const std::string db = dir.file("predicted.db");
  write_predicted_database(db);
  const std::string good = bench_row(kProblem, "200.000", "cuBLASLt", "210.000");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{bench_row(kProblem, "nan", "cuBLASLt", "210.000")}, ":2: kerntune_us = 'nan'"},
      {{good, bench_row(kProblem, "0", "cuBLASLt", "210.000")}, ":3: kerntune_us is 0"},
      {{bench_row(kProblem, "200", "cuBLASLt", "-1")}, ":2: baseline_us = '-1'"},
      {{bench_row(kProblem, "200", "", "210")}, ":2: baseline_us is 210 but no baseline"},
      {{bench_row(kProblem, "2e", "cuBLASLt", "210")}, ":2: kerntune_us = '2e' is not a number"},
      {{bench_row("gemm:bf16:bf16:nt:64x64", "200", "cuBLASLt", "210")}, ":2: "},
      {{bench_row("conv:1x1", "200", "cuBLASLt", "210")}, ":2: "},
      {{bench_row(kProblem, "200", "cu\x1b[31mBLAS", "210")}, ":2: baseline holds the byte 0x1b"},
      {{good + ",extra"}, ":2: 20 fields, the header has 19"},
      {{"\"unterminated"}, ":2:"},
  };
  for (const auto& [rows, needle] : cases) {
    SCOPED_TRACE(needle);
    const std::string csv = bench_csv(dir, rows);
    const CliResult r =
        run_cli("report --json --db " + shell_quote(db) + " --bench " + shell_quote(csv),
                dir.file("unused.db"));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(contains(r.output, csv + needle)) << r.output;
  }
  // Another kind of CSV (a cache export) is refused by its first line.
  const std::string export_csv = dir.file("export.csv");
  ASSERT_EQ(run_cli("cache export --db " + shell_quote(db) + " " + shell_quote(export_csv),
                    dir.file("unused.db"))
                .status,
            0);
  const CliResult r =
      run_cli("report --json --db " + shell_quote(db) + " --bench " + shell_quote(export_csv),
              dir.file("unused.db"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, export_csv + ":1: not a CSV of this version of `kerntune bench"))
      << r.output;
}

TEST(CliReport, AMissingDamagedOrOlderDatabaseIsReportedAndNeverWritten) {
  ScratchDir dir;
  const std::string missing = dir.file("none/kerntune.db");
  const CliResult none = run_cli("report --json --db " + shell_quote(missing), dir.file("u.db"));
  EXPECT_EQ(none.status, 1) << none.output;
  EXPECT_TRUE(contains(none.output, "report needs a database")) << none.output;
  EXPECT_FALSE(fs::exists(dir.file("none")));

  const std::string old = dir.file("old.db");
  write_healthy_database(old);
  downgrade_schema(old, 2);
  const std::string old_bytes = read_file_bytes(old);
  const CliResult older = run_cli("report --json --db " + shell_quote(old), dir.file("u.db"));
  EXPECT_EQ(older.status, 1) << older.output;
  EXPECT_TRUE(contains(older.output, "kerntune cache migrate --db")) << older.output;
  EXPECT_EQ(read_file_bytes(old), old_bytes);

  for (const DamageCase& c : refused_damage_cases()) {
    SCOPED_TRACE(c.name);
    const std::string path =
        make_damaged_database(c.damage, dir.file(fmt::format("{}.db", c.name)));
    const CliResult r = run_cli("report --json --db " + shell_quote(path), dir.file("u.db"));
    EXPECT_EQ(r.status, 1) << r.output;
    for (const std::string& needle : c.needles)
      EXPECT_TRUE(contains(r.output, needle)) << "no '" << needle << "' in:\n" << r.output;
  }

  const std::string empty = dir.file("empty.db");
  cache::Database::open(empty);  // a kerntune database with no rows
  const CliResult nothing = run_cli("report --json --db " + shell_quote(empty), dir.file("u.db"));
  EXPECT_EQ(nothing.status, 1) << nothing.output;
  EXPECT_TRUE(contains(nothing.output, "nothing to report")) << nothing.output;
}

TEST(CliReport, WithoutPythonAndMatplotlibItSaysWhatToInstallAndWritesNoPage) {
  ScratchDir dir;
  const std::string db = dir.file("predicted.db");
  write_predicted_database(db);
  const std::string out = dir.file("report.html");
  for (const char* python : {"/nonexistent/python3", "/bin/false"}) {
    SCOPED_TRACE(python);
    const CliResult r = run_cli("report --db " + shell_quote(db) + " --out " + shell_quote(out),
                                dir.file("u.db"), fmt::format("KERNTUNE_PYTHON={}", python));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "needs python3 with matplotlib")) << r.output;
    EXPECT_TRUE(contains(r.output, "apt-get install python3-matplotlib")) << r.output;
    EXPECT_TRUE(contains(r.output, python)) << r.output;
    EXPECT_FALSE(fs::exists(out));
  }
}

}  // namespace
}  // namespace kt::testing
