// The measuring protocol's rules (benchmark.hpp, candidate_rounds.hpp): the warm-up and the
// repetition count sized by the kernel's duration, and the early stop: a candidate stops after
// its probe only when every probe repetition is over the bar, which a candidate that could win
// almost never is.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tuner/benchmark.hpp"
#include "tuner/candidate_rounds.hpp"

namespace kt::tune {
namespace {

TEST(MeasuringRules, WarmUpRunsTheMinimumLaunchesAndTheMinimumKernelTime) {
  BenchmarkOptions o;
  o.warmup = 1;
  o.warmup_ms = 2;
  EXPECT_EQ(more_warmup_launches(5000, o), 0);  // one long launch is warm-up enough
  EXPECT_EQ(more_warmup_launches(10, o), 199);  // 2 ms of a 10 us kernel
  o.warmup = 3;
  EXPECT_EQ(more_warmup_launches(5000, o), 2);
  EXPECT_EQ(more_warmup_launches(0.01, o), kMaxWarmupLaunches - 1);  // capped
}

TEST(MeasuringRules, RepetitionsFallWithTheKernelsDurationWithinTheBounds) {
  BenchmarkOptions o;  // 25 ms, 5..100, probe of 3
  EXPECT_EQ(repetitions_for(13, o), 100);
  EXPECT_EQ(repetitions_for(250, o), 100);
  EXPECT_EQ(repetitions_for(1000, o), 25);
  EXPECT_EQ(repetitions_for(2700, o), 10);
  EXPECT_EQ(repetitions_for(17000, o), 5);
  o.min_reps = 150;  // a harness asking for more than the cap gets what it asked
  EXPECT_EQ(repetitions_for(13, o), 150);
  o.min_reps = 1;
  o.probe_reps = 4;
  EXPECT_EQ(repetitions_for(1e6, o), 4);  // never fewer than the probe took
}

TEST(MeasuringRules, OnlyAProbeEntirelyOverTheBarStops) {
  EXPECT_TRUE(clearly_slower({110, 120, 111}, 105));
  EXPECT_FALSE(clearly_slower({110, 104, 120}, 105));  // one repetition at or under the bar
  EXPECT_FALSE(clearly_slower({105, 106, 107}, 105));  // the bar itself does not stop
  EXPECT_FALSE(clearly_slower({500, 500, 500}, 0));    // no bar: nothing stops
  EXPECT_FALSE(clearly_slower({}, 105));
}

TEST(MeasuringRules, TheBarIsTheBestSoFarTimesOnePlusTheMargin) {
  EXPECT_DOUBLE_EQ(early_stop_bar_us(200, 0.05), 210);
  EXPECT_EQ(early_stop_bar_us(0, 0.05), 0);  // nothing measured yet: time it fully
  EXPECT_EQ(early_stop_bar_us(200, 0), 0);   // early stop off
  EXPECT_EQ(early_stop_bar_us(200, -1), 0);
}

// The rule's error rates under the noise the H200 shows (repetitions spread 1-5%: a standard
// deviation up to 2% of the median), with a seeded generator so that the counts are exact.
TEST(MeasuringRules, ACandidateThatCouldWinAlmostNeverStopsAndAClearlySlowerOneAlmostAlwaysDoes) {
  std::mt19937_64 rng(41);
  const double best = 100, bar = early_stop_bar_us(best, 0.05);
  auto stops = [&](double median, double sd_pct, int trials) {
    std::normal_distribution<double> noise(0, sd_pct / 100 * median);
    int stopped = 0;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> probe;
      for (int r = 0; r < BenchmarkOptions{}.probe_reps; ++r) probe.push_back(median + noise(rng));
      stopped += clearly_slower(probe, bar);
    }
    return stopped;
  };
  // As fast as the best: never stopped; 2% slower (the tuner's target): under 1 in 1000
  // (each repetition exceeds the bar with probability 0.07, all three 3.6e-4).
  EXPECT_EQ(stops(100, 2, 100000), 0);
  EXPECT_LT(stops(102, 2, 100000), 100);
  // At the bar itself each repetition exceeds it half the time: at most 1/8 of the probes stop.
  EXPECT_LT(stops(bar, 2, 100000), 100000 / 8 + 1000);
  // 10% slower: stopped nearly always.
  EXPECT_GT(stops(110, 2, 100000), 95000);
}

}  // namespace
}  // namespace kt::tune
