// Terse builders of GEMM problems and configs for the tests of every tier.
#pragma once

#include <cstdint>

#include "core/gemm_config.hpp"
#include "core/gemm_problem.hpp"

namespace kt::testing {

inline GemmProblem problem(std::int64_t m, std::int64_t n, std::int64_t k,
                           Layout layout = Layout::kNT, DType in = DType::kBF16,
                           DType out = DType::kBF16) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.layout = layout;
  p.in_dtype = in;
  p.out_dtype = out;
  return p;
}

// An sm80 config with raster group 8.
inline GemmConfig config(int bm, int bn, int bk, int wm, int wn, int stages, int split_k = 1) {
  return GemmConfig{GemmFamily::kSm80, bm, bn, bk, wm, wn, stages, 8, split_k};
}

// An sm90 config (tile_k 64) with raster group 8.
inline GemmConfig sm90_config(int bm, int bn, int stages, int consumers, int split_k = 1) {
  return GemmConfig{GemmFamily::kSm90, bm, bn, 64, 0, 0, stages, 8, split_k, consumers};
}

}  // namespace kt::testing
