// The tuner's pick (pick_order): with re-measured finalists only they compete, so a candidate
// whose first-pass figure was taken while the GPU ran cooler cannot beat the finalists' pooled,
// side-by-side figures; without finalists every scored candidate competes.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "tuner/candidate_pipeline.hpp"

namespace kt::tune {
namespace {

struct Scored {
  std::optional<double> us;
};

auto score = [](const Scored& c) { return c.us; };

TEST(TunerPick, OnlyReMeasuredFinalistsCompete) {
  // 0 and 1 were finalists and measured slower side by side than 2's stale first pass.
  const std::vector<Scored> cands = {{650.0}, {640.0}, {600.0}, {std::nullopt}};
  const std::vector<std::size_t> order = pick_order(cands, {0, 1}, score);
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], 1u);
  EXPECT_EQ(order[1], 0u);
}

TEST(TunerPick, WithoutFinalistsEveryScoredCandidateCompetesInOrder) {
  const std::vector<Scored> cands = {{650.0}, {std::nullopt}, {600.0}, {640.0}};
  const std::vector<std::size_t> order = pick_order(cands, {}, score);
  EXPECT_EQ(order, (std::vector<std::size_t>{2, 3, 0}));
}

TEST(TunerPick, AFinalistWithoutAScoreDropsOut) {
  const std::vector<Scored> cands = {{std::nullopt}, {700.0}};
  EXPECT_EQ(pick_order(cands, {0, 1}, score), (std::vector<std::size_t>{1}));
}

}  // namespace
}  // namespace kt::tune
