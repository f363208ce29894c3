// The small-M GEMM family (GemmFamily::kSmallM, templates/gemm/gemm_small_m.cuh): M <= 64, the
// decoding shapes, where streaming B once at full memory bandwidth is the whole cost. Its
// validity rules, derived sizes, template arguments, space and model; gemm_config.cpp and
// gemm_model.cpp call these for the family and nothing else re-derives them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device_desc.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_model.hpp"
#include "core/gemm_problem.hpp"

namespace kt {

// The largest M the family serves.
inline constexpr std::int64_t kSmallMMaxM = 64;

// A small-M config with its canonical unused fields (warp_m, stages, consumers 0; raster
// group 1): tile_m rows of C per CTA, tile_n columns per CTA, batch_k K elements per warp per
// batch, warp_n columns per warp, warps_k warps along K.
GemmConfig small_m_config(int tile_m, int tile_n, int batch_k, int warp_n, int warps_k,
                          int split_k = 1);

// 16-byte loads of B each thread has in flight (one batch): warp_n * tile_k / 256.
int small_m_loads_per_thread(const GemmConfig& c);
// Dynamic shared memory: the partial sums of warps_k - 1 warps along K.
int small_m_smem_bytes(const GemmConfig& c);
// Registers per thread before compiling: accumulators, two batches of B words, up to two chunks
// of A words, addressing.
int small_m_estimated_registers(const GemmConfig& c);

// Why `c` (family kSmallM) cannot run `p` on `device`, or nullopt; the common checks (shared
// memory, register file, split-K) are validate()'s.
std::optional<std::string> validate_small_m(const GemmProblem& p, const GemmConfig& c,
                                            const DeviceDesc& device);

// "kt::gemm_small_m<In, Out, tile_m, warp_n, warps_n, warps_k, tile_k, nt, split>".
std::string small_m_kernel_expression(const GemmProblem& p, const GemmConfig& c);

// The family's points of `domains` for p (none when M > 64 or the family is not in the
// domains), before validate(): tile_m within a factor two of M's padding, whole warps of
// 4..16 per CTA, 4..16 loads in flight per thread, and split-K only where each warp along K
// keeps at least one batch.
std::vector<GemmConfig> small_m_candidates(const GemmProblem& p, const GemmDomains& domains);

// The model of the family (see docs/ARCHITECTURE.md): bytes in flight decide how much of
// 0.9 x DRAM bandwidth each wave reaches; B re-read by further M tiles and A re-read by every
// CTA go at L2 bandwidth; padded mma work at half the mma.sync rate; split-K's reduce; launch.
GemmEstimate estimate_small_m(const GemmProblem& p, const GemmConfig& c, const DeviceDesc& d,
                              int regs_per_thread);

}  // namespace kt
