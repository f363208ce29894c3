// The model's calibration by the database's own measurements (model_calibration.hpp), on the real
// GEMM model and a real SQLite database: a family the model misjudges on neighbouring problems
// gets a factor that moves it in the ranking, shrunk by the rows it rests on; the problem's own
// rows, finalists' re-measurements, families seen in one problem only and other devices' rows
// calibrate nothing; an imported export calibrates exactly as the database it came from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "support/scratch_dir.hpp"
#include "tuner/model_calibration.hpp"
#include "tuner/run_ledger.hpp"

namespace kt::tune {
namespace {

const DeviceDesc& h200() { return device_profile("h200"); }
std::string gemm_key(const std::string& shape) { return "gemm:bf16:bf16:nt:" + shape; }

// The model's first `count` configs of `family` for the problem.
std::vector<std::string> configs_of(const std::string& problem, const std::string& family,
                                    std::size_t count) {
  std::vector<std::string> out;
  for (const RankedConfigKey& r : op_spec_for_key(problem).ranked_configs(problem, h200()))
    if (config_family(r.config_key) == family && out.size() < count) out.push_back(r.config_key);
  return out;
}

// Rows of `problem`: its first sm90 and sm80 configs measured at the model's time x `sm80_off`
// for sm80 (sm90 exactly as predicted).
std::vector<cache::Measurement> rows_of(const std::string& problem, double sm80_off,
                                        const std::string& fingerprint = h200().fingerprint()) {
  const OpSpec& op = op_spec_for_key(problem);
  std::vector<cache::Measurement> rows;
  for (const std::string& family : {std::string("sm90"), std::string("sm80")})
    for (const std::string& config : configs_of(problem, family, family == "sm90" ? 8 : 4)) {
      cache::Measurement m;
      m.key = {problem, fingerprint, kBenchmarkProtocolVersion, kGemmTemplateVersion};
      m.config_key = config;
      m.median_us = op.predicted_us(problem, config, h200()) * (family == "sm80" ? sm80_off : 1.0);
      m.num_reps = 10;
      m.run_id = "r-" + problem;
      rows.push_back(m);
    }
  return rows;
}

std::vector<cache::Measurement> join(std::vector<std::vector<cache::Measurement>> parts) {
  std::vector<cache::Measurement> all;
  for (auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

TEST(ModelCalibration, AFamilyTheModelMisjudgesGetsAShrunkFactor) {
  const std::string target = gemm_key("3072x3072x3072");
  const ModelCalibration c = ModelCalibration::fit(
      op_spec_for_key(target), target, h200(),
      join({rows_of(gemm_key("4096x4096x4096"), 1.3), rows_of(gemm_key("2048x2048x2048"), 1.3)}));
  // 8 sm80 rows over two problems at 1.3x: exp(log 1.3 x 8 / 16) = sqrt(1.3).
  EXPECT_NEAR(c.factor("sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1"), std::sqrt(1.3), 1e-9);
  EXPECT_NEAR(c.factor("sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1"), 1.0, 1e-9);
  EXPECT_EQ(c.factor("smallm.bm8.bn64.bk128.wn16.wk4.sk1"), 1.0);  // never measured
  ASSERT_EQ(c.factors().size(), 2u);
  EXPECT_EQ(c.factors()[0].family, "sm80");
  EXPECT_EQ(c.factors()[0].num_rows, 8);
  EXPECT_EQ(c.factors()[0].num_problems, 2);
  EXPECT_NE(c.summary().find("sm80 x1.140 (8 rows, 2 problems)"), std::string::npos);
}

TEST(ModelCalibration, TheFactorMovesAFamilyInTheRankingAndKeepsTheOrderWithinIt) {
  const std::string target = gemm_key("3072x3072x3072");
  const ModelCalibration c = ModelCalibration::fit(
      op_spec_for_key(target), target, h200(),
      join({rows_of(gemm_key("4096x4096x4096"), 0.2), rows_of(gemm_key("2048x2048x2048"), 0.2)}));
  std::vector<RankedConfigKey> ranked = op_spec_for_key(target).ranked_configs(target, h200());
  std::vector<std::string> sm80_before;
  for (const RankedConfigKey& r : ranked)
    if (config_family(r.config_key) == "sm80") sm80_before.push_back(r.config_key);
  ASSERT_NE(config_family(ranked.front().config_key), "sm80");
  c.apply(ranked);
  EXPECT_EQ(config_family(ranked.front().config_key), "sm80");  // measured 5x faster than modelled
  EXPECT_TRUE(std::is_sorted(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.predicted_us < b.predicted_us;
  }));
  std::vector<std::string> sm80_after;
  for (const RankedConfigKey& r : ranked)
    if (config_family(r.config_key) == "sm80") sm80_after.push_back(r.config_key);
  EXPECT_EQ(sm80_after, sm80_before);
}

TEST(ModelCalibration, RowsThatSayNothingOfTheDeviceOrTheFamilyCalibrateNothing) {
  const std::string target = gemm_key("3072x3072x3072");
  const OpSpec& op = op_spec_for_key(target);
  // The problem's own rows, and a family measured in one problem only.
  std::vector<cache::Measurement> rows =
      join({rows_of(target, 5.0), rows_of(gemm_key("4096x4096x4096"), 1.3)});
  EXPECT_TRUE(ModelCalibration::fit(op, target, h200(), rows).factors().empty());
  // Finalists' re-measurements and failed rows.
  std::vector<cache::Measurement> second = rows_of(gemm_key("2048x2048x2048"), 1.3);
  for (cache::Measurement& m : second)
    if (config_family(m.config_key) == "sm80") m.detail = kFinalistDetail;
  rows.insert(rows.end(), second.begin(), second.end());
  const ModelCalibration without_finalists = ModelCalibration::fit(op, target, h200(), rows);
  EXPECT_EQ(without_finalists.factor("sm80.x"), 1.0);
  EXPECT_NEAR(without_finalists.factor("sm90.x"), 1.0, 1e-9);
  ASSERT_EQ(without_finalists.factors().size(), 1u);  // sm90, measured in two problems
  // Another dtype's problems are no neighbours (OpSpec::distance).
  const std::string fp16 = "gemm:fp16:fp16:nt:4096x4096x4096";
  rows = join({rows_of(gemm_key("2048x2048x2048"), 1.3), rows_of(fp16, 1.3)});
  EXPECT_EQ(ModelCalibration::fit(op, target, h200(), rows).factor("sm80.x"), 1.0);
  EXPECT_TRUE(ModelCalibration().summary().empty());
}

TEST(ModelCalibration, TheDatabaseGivesTheDevicesMeasuredRowsAndAnImportCalibratesTheSame) {
  testing::ScratchDir dir;
  const std::string target = gemm_key("3072x3072x3072");
  const OpSpec& op = op_spec_for_key(target);
  cache::Database db = cache::Database::open(dir.file("a.db"));
  db.add_measurements(
      join({rows_of(gemm_key("4096x4096x4096"), 1.3), rows_of(gemm_key("2048x2048x2048"), 1.3),
            rows_of(gemm_key("1024x1024x1024"), 0.5, "NVIDIA A100/cc80/108sm")}));
  cache::Measurement failed = rows_of(gemm_key("1024x1024x1024"), 0.5).front();
  failed.status = cache::Status::kWrongResult;
  db.add_measurements({failed});
  const std::vector<cache::Measurement> rows =
      db.measured_with_prefix(h200().fingerprint(), op.key_prefix());
  EXPECT_EQ(rows.size(), 24u);  // 12 per H200 problem; not the A100's, not the failed one
  const ModelCalibration fitted = ModelCalibration::fit(op, target, h200(), rows);
  EXPECT_NEAR(fitted.factor("sm80.x"), std::sqrt(1.3), 1e-9);

  db.export_csv(dir.file("export.csv"));
  cache::Database copy = cache::Database::open(dir.file("b.db"));
  copy.import_csv(dir.file("export.csv"));
  const ModelCalibration imported = ModelCalibration::fit(
      op, target, h200(), copy.measured_with_prefix(h200().fingerprint(), op.key_prefix()));
  EXPECT_EQ(imported.summary(), fitted.summary());
}

}  // namespace
}  // namespace kt::tune
