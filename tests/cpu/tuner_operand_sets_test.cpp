// How many copies of a GEMM's operands the measuring protocol rotates over (eight for the decode
// and mid-sized shapes whose time moves with where their operands lie, fewer as a set grows
// toward the 1 GiB budget, never none), and the rotation itself.
#include <gtest/gtest.h>

#include <vector>

#include "core/gemm_problem.hpp"
#include "ops/gemm/gemm_workload.hpp"
#include "tuner/benchmark.hpp"

namespace kt::tune {
namespace {

GemmProblem bf16(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

TEST(TimingOperandSets, DecodeShapesGetEight) {
  EXPECT_EQ(timing_operand_sets(bf16(1, 4096, 4096)), 8);
  EXPECT_EQ(timing_operand_sets(bf16(64, 14336, 4096)), 8);  // 119 MB a set
  EXPECT_EQ(timing_operand_sets(bf16(1, 1, 1)), 8);
}

TEST(TimingOperandSets, LargeSetsGetFewerWithinTheBudget) {
  // 8192^3 in bf16: A, B and C of 128 MiB each, so two sets fit in 1 GiB.
  EXPECT_EQ(timing_operand_sets(bf16(8192, 8192, 8192)), 2);
  GemmProblem fp32_out = bf16(8192, 8192, 8192);
  fp32_out.out_dtype = DType::kFP32;  // C of 256 MiB: 512 MiB a set
  EXPECT_EQ(timing_operand_sets(fp32_out), 2);
  EXPECT_EQ(timing_operand_sets(bf16(4096, 4096, 4096)), 8);  // 96 MiB a set: ten would fit
  EXPECT_EQ(timing_operand_sets(bf16(8192, 8192, 4096)), 4);  // 64 + 64 + 128 MiB
}

TEST(TimingOperandSets, ASetLargerThanTheBudgetStillGetsOne) {
  EXPECT_EQ(timing_operand_sets(bf16(32768, 32768, 32768)), 1);
}

TEST(RotatingLaunch, VisitsEverySetInTurnAndKeepsItsPlaceAcrossCallers) {
  std::vector<int> seen;
  const auto launch = rotating_launch(3, [&seen](CUstream, int set) {
    seen.push_back(set);
    return CUDA_SUCCESS;
  });
  // Bench::sample takes the launch by reference: a later round continues where one stopped.
  auto round = [](const std::function<CUresult(CUstream)>& f, int reps) {
    for (int i = 0; i < reps; ++i) EXPECT_EQ(f(nullptr), CUDA_SUCCESS);
  };
  round(launch, 4);
  round(launch, 3);
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(RotatingLaunch, NoSetsMeansTheFirstEveryTime) {
  std::vector<int> seen;
  const auto launch = rotating_launch(0, [&seen](CUstream, int set) {
    seen.push_back(set);
    return CUDA_ERROR_INVALID_VALUE;
  });
  EXPECT_EQ(launch(nullptr), CUDA_ERROR_INVALID_VALUE);  // the launch's result comes back
  EXPECT_EQ(launch(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(seen, (std::vector<int>{0, 0}));
}

}  // namespace
}  // namespace kt::tune
