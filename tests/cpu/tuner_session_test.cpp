// A tuning session's fresh run ids: unique among the many runs one second can start (the
// database refuses a second run under an existing id).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/device_desc.hpp"
#include "tuner/tuning_record.hpp"

namespace kt::tune {
namespace {

TEST(TuningSession, FreshRunIdsOfOneSecondAreDistinct) {
  const DeviceDesc& h200 = device_profile("h200");
  std::set<std::string> ids;
  constexpr int kRuns = 4000;  // 16 random bits would collide ~120 times
  for (int i = 0; i < kRuns; ++i) ids.insert(TuningSession(true, h200, 0, "", 1).run_id());
  EXPECT_EQ(ids.size(), std::size_t(kRuns));
}

TEST(TuningSession, AGivenRunIdIsKept) {
  EXPECT_EQ(TuningSession(true, device_profile("h200"), 0, "my-run", 1).run_id(), "my-run");
}

}  // namespace
}  // namespace kt::tune
