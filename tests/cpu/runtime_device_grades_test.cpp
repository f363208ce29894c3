// Graded device matching at dispatch, with device profiles: a winner measured on this exact
// device serves first, then one measured on this GPU model with another SM count (the nearest
// count), then winners of this compute capability re-scored by the model here, then measured
// neighbours of the shape, then this problem's predicted winners, then the model; winners of
// another compute capability never serve. Each choice names the grade, problem and device.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "runtime/op_dispatch.hpp"

namespace kt {
namespace {

using cache::Database;
using cache::Winner;
using rt::DispatchGrade;

constexpr const char* kProblem = "gemm:bf16:bf16:nt:4096x4096x4096";
constexpr std::int64_t kWorkspace = 1 << 30;

const OpSpec& gemm() { return op_spec("gemm"); }
const DeviceDesc& h200() { return device_profile("h200"); }
DeviceDesc h200_with(int sms) { return device_variant(h200(), "", sms, 0); }
// Another GPU of compute capability 9.0.
DeviceDesc h100_pcie() {
  return device_variant(device_profile("h100-sxm"), "NVIDIA H100 PCIe", 114, 1755);
}

// The model's config of rank `rank` for the problem on the H200.
std::string config(std::size_t rank) {
  return rt::model_ranked_configs(gemm(), kProblem, h200(), kWorkspace, rank + 1)[rank];
}

void add_winner(Database& db, const DeviceDesc& device, const std::string& config_key,
                bool predicted, const std::string& problem = kProblem) {
  db.set_winner(
      {.key = {problem, device.fingerprint(), kBenchmarkProtocolVersion, kGemmTemplateVersion},
       .config_key = config_key,
       .median_us = 100,
       .predicted = predicted,
       .run_id = "r"});
}

std::vector<DispatchGrade> grades(const std::vector<rt::DispatchChoice>& choices) {
  std::vector<DispatchGrade> out;
  for (const auto& c : choices) out.push_back(c.grade);
  return out;
}

TEST(DeviceGrades, EveryGradeInOrderWithTheDeviceItWasTunedOn) {
  Database db = Database::open(":memory:");
  add_winner(db, h200(), config(0), false);
  add_winner(db, h200_with(114), config(1), false);
  add_winner(db, h100_pcie(), config(2), false);
  // A predicted winner never replaces the measured one of the same key: none here.
  const auto choices = rt::ranked_choices(&db, gemm(), kProblem, h200(), kWorkspace, 1);
  ASSERT_FALSE(choices.empty());
  EXPECT_EQ(choices[0].grade, DispatchGrade::kExact);
  EXPECT_EQ(choices[0].config_key, config(0));
  EXPECT_EQ(choices[0].tuned_device, h200().fingerprint());
  EXPECT_EQ(choices[0].tuned_problem_key, kProblem);
  EXPECT_FALSE(choices[0].predicted);
  EXPECT_EQ(choices[1].grade, DispatchGrade::kSameModel);
  EXPECT_EQ(choices[1].tuned_device, h200_with(114).fingerprint());
  EXPECT_EQ(choices[2].grade, DispatchGrade::kSameCc);
  EXPECT_EQ(choices[2].tuned_device, h100_pcie().fingerprint());
  EXPECT_EQ(choices.back().grade, DispatchGrade::kModelDefault);
}

TEST(DeviceGrades, TheLeadingChoicesAreTheHeadOfTheList) {
  Database db = Database::open(":memory:");
  add_winner(db, h200_with(114), config(1), false);
  add_winner(db, h100_pcie(), config(2), false);
  add_winner(db, h200(), config(3), true);
  // No neighbour on this device measured anything: the predicted winner joins the head.
  const auto leading = rt::leading_choices(&db, gemm(), kProblem, h200(), kWorkspace);
  const auto all = rt::ranked_choices(&db, gemm(), kProblem, h200(), kWorkspace, 1);
  ASSERT_EQ(leading.size(), 3u);
  EXPECT_EQ(leading[2].grade, DispatchGrade::kPredicted);
  ASSERT_GT(all.size(), leading.size());
  for (std::size_t i = 0; i < leading.size(); ++i) {
    EXPECT_EQ(leading[i].config_key, all[i].config_key);
    EXPECT_EQ(leading[i].grade, all[i].grade);
  }
  EXPECT_TRUE(rt::leading_choices(nullptr, gemm(), kProblem, h200(), kWorkspace).empty());
}

TEST(DeviceGrades, AMeasuredNeighbourKeepsThePredictedWinnerOutOfTheHead) {
  Database db = Database::open(":memory:");
  add_winner(db, h200(), config(3), true);
  add_winner(db, h200(), config(4), false, "gemm:bf16:bf16:nt:4000x4096x4096");
  const auto leading = rt::leading_choices(&db, gemm(), kProblem, h200(), kWorkspace);
  EXPECT_TRUE(leading.empty());
}

TEST(DeviceGrades, AnotherSmCountOfTheModelServesTheNearestCount) {
  Database db = Database::open(":memory:");
  add_winner(db, h200(), config(0), false);          // 132 SMs
  add_winner(db, h200_with(100), config(1), false);  // 100 SMs
  const rt::DispatchChoice c = rt::choose_config(&db, gemm(), kProblem, h200_with(114), kWorkspace);
  EXPECT_EQ(c.grade, DispatchGrade::kSameModel);
  EXPECT_EQ(c.config_key, config(1));  // |114 - 100| < |114 - 132|
  EXPECT_EQ(rt::choose_config(&db, gemm(), kProblem, h200_with(128), kWorkspace).config_key,
            config(0));
}

TEST(DeviceGrades, WinnersOfThisComputeCapabilityAreReScoredByTheModelHere) {
  Database db = Database::open(":memory:");
  // Two other cc 9.0 GPUs' winners: the one the model times faster on this device serves.
  const DeviceDesc gh200 = device_variant(h200(), "NVIDIA GH200", 132, 0);
  add_winner(db, gh200, config(5), false);
  add_winner(db, h100_pcie(), config(0), false);
  const rt::DispatchChoice c = rt::choose_config(&db, gemm(), kProblem, h200(), kWorkspace);
  EXPECT_EQ(c.grade, DispatchGrade::kSameCc);
  const bool first_faster = gemm().predicted_us(kProblem, config(0), h200()) <=
                            gemm().predicted_us(kProblem, config(5), h200());
  EXPECT_EQ(c.config_key, first_faster ? config(0) : config(5));
  EXPECT_EQ(c.tuned_device, first_faster ? h100_pcie().fingerprint() : gh200.fingerprint());
}

TEST(DeviceGrades, AnotherComputeCapabilityNeverServes) {
  Database db = Database::open(":memory:");
  const std::string sm80 =
      rt::model_ranked_configs(gemm(), kProblem, device_profile("a100"), kWorkspace, 1).front();
  add_winner(db, device_profile("a100"), sm80, false);
  const rt::DispatchChoice c = rt::choose_config(&db, gemm(), kProblem, h200(), kWorkspace);
  EXPECT_EQ(c.grade, DispatchGrade::kModelDefault);
  EXPECT_TRUE(c.tuned_device.empty());
}

TEST(DeviceGrades, PredictedEntriesServeBeforeTheModelAndAfterMeasurements) {
  Database db = Database::open(":memory:");
  add_winner(db, h200(), config(2), true);
  rt::DispatchChoice c = rt::choose_config(&db, gemm(), kProblem, h200(), kWorkspace);
  EXPECT_EQ(c.grade, DispatchGrade::kPredicted);
  EXPECT_EQ(c.config_key, config(2));
  EXPECT_TRUE(c.predicted);
  EXPECT_EQ(c.tuned_device, h200().fingerprint());
  // Predicted for this model with another SM count: still the predicted grade.
  c = rt::choose_config(&db, gemm(), kProblem, h200_with(66), kWorkspace);
  EXPECT_EQ(c.grade, DispatchGrade::kPredicted);
  EXPECT_EQ(c.tuned_device, h200().fingerprint());
  // A measurement on another GPU of the compute capability comes first.
  add_winner(db, h100_pcie(), config(1), false);
  c = rt::choose_config(&db, gemm(), kProblem, h200(), kWorkspace);
  EXPECT_EQ(c.grade, DispatchGrade::kSameCc);
  const auto choices = rt::ranked_choices(&db, gemm(), kProblem, h200(), kWorkspace, 1);
  ASSERT_GE(choices.size(), 3u);
  EXPECT_EQ(choices[0].grade, DispatchGrade::kSameCc);
  EXPECT_NE(std::find_if(
                choices.begin(), choices.end(),
                [](const rt::DispatchChoice& c) { return c.grade == DispatchGrade::kPredicted; }),
            choices.end());
}

TEST(DeviceGrades, MeasuredNeighboursOfTheShapeComeBeforeAPredictedEntry) {
  Database db = Database::open(":memory:");
  const std::string neighbour = "gemm:bf16:bf16:nt:4096x4096x4000";
  const std::string c0 = config(0);  // the model's pick here, measured at the neighbour
  cache::Measurement m;
  m.key = {neighbour, h200().fingerprint(), kBenchmarkProtocolVersion, kGemmTemplateVersion};
  m.config_key = c0;
  m.median_us = 0.5 * gemm().predicted_us(neighbour, c0, h200());  // far faster than predicted
  m.num_reps = 10;
  m.run_id = "r";
  db.add_measurements({m});
  add_winner(db, h200(), c0, false, neighbour);
  add_winner(db, h200(), config(3), true);
  const auto g = grades(rt::ranked_choices(&db, gemm(), kProblem, h200(), kWorkspace, 1));
  ASSERT_GE(g.size(), 3u);
  EXPECT_EQ(g[0], DispatchGrade::kNearestShape);
  // The predicted entry right after the neighbours' measured configs, before the model's own.
  const auto predicted = std::find(g.begin(), g.end(), DispatchGrade::kPredicted);
  ASSERT_NE(predicted, g.end());
  EXPECT_TRUE(std::all_of(g.begin(), predicted,
                          [](DispatchGrade x) { return x == DispatchGrade::kNearestShape; }));
  EXPECT_TRUE(std::all_of(predicted + 1, g.end(),
                          [](DispatchGrade x) { return x == DispatchGrade::kModelDefault; }));
}

TEST(DeviceGrades, WithoutADatabaseOnlyTheModel) {
  const auto choices = rt::ranked_choices(nullptr, gemm(), kProblem, h200(), kWorkspace, 1);
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(choices[0].grade, DispatchGrade::kModelDefault);
  EXPECT_EQ(choices[0].config_key, config(0));
}

}  // namespace
}  // namespace kt
