// Launching a GEMM kernel through the driver.
#include "ops/gemm/gemm_kernel.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "core/log.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/kernel_launch.hpp"
#include "runtime/tensor_map.hpp"

namespace kt::rt {

static_assert(sizeof(GemmParams) == 5 * 8 + 3 * 8 + 10 * 4, "GemmParams layout changed");
static_assert(sizeof(SplitKReduceParams) == 8 + 8 + 8 + 4 * 4, "SplitKReduceParams layout changed");
static_assert(sizeof(GemmPadParams) == 4 * 8 + 2 * 4, "GemmPadParams layout changed");
static_assert(sizeof(GemmSm90Params) == 3 * 128 + 128 && offsetof(GemmSm90Params, gemm) == 384,
              "GemmSm90Params layout changed");

namespace {

// A row-major matrix of `rows` x `cols` elements (row stride `row_elements`) as a 2D TMA map,
// moved in boxes of box_cols x box_rows elements (encode_tensor_map).
CUresult encode_tile_map(TmaDescriptor& map, DType dtype, const void* base, std::int64_t rows,
                         std::int64_t cols, std::int64_t row_elements, std::uint32_t box_cols,
                         std::uint32_t box_rows, TmaSwizzle swizzle = TmaSwizzle::k128B) {
  const std::uint64_t dims[2] = {std::uint64_t(cols), std::uint64_t(rows)};
  const std::uint64_t strides[1] = {std::uint64_t(row_elements) * std::uint64_t(size_bytes(dtype))};
  const std::uint32_t box[2] = {box_cols, box_rows};
  return encode_tensor_map(map, dtype, base, dims, strides, box, swizzle);
}

}  // namespace

void clear_gemm_workspace_flags(CUdeviceptr workspace, std::size_t bytes) {
  if (workspace == 0 || bytes < std::size_t(kGemmFlagRegionBytes)) return;
  const CudaDriver& d = driver();
  // The legacy stream, waited for at once: later launches on any stream (blocking or not) find
  // the zeros in place.
  check(d.memset_d8_async(workspace, 0, std::size_t(kGemmFlagRegionBytes), nullptr),
        "cuMemsetD8Async(workspace flags)");
  check(d.stream_synchronize(nullptr), "cuStreamSynchronize(workspace flags)");
}

GemmKernel::GemmKernel(const GemmProblem& problem, const GemmConfig& config,
                       const LoadedModule& module)
    : problem_(problem),
      config_(config),
      plan_(plan_launch(problem, config,
                        config.family == GemmFamily::kSm90 ? current_device_sms() : 0)) {
  const std::size_t needed = plan_.reduce || !plan_.pads.empty() ? 2 : 1;
  if (module.functions.size() < needed)
    throw Error(ErrorKind::kInternal, fmt::format("module for {} has {} kernels, expected {}",
                                                  to_key(config), module.functions.size(), needed));
  main_ = module.functions[0];
  if (plan_.reduce) reduce_ = module.functions[1];
  if (!plan_.pads.empty()) pad_ = module.functions[1];
  if (config.family == GemmFamily::kSm90) last_sm90_ = std::make_shared<LastSm90Params>();
  allow_dynamic_smem(main_, plan_.main.smem_bytes);
  // NOTE: a cluster needs its CTAs on SMs of one GPC; when the GPCs' SM counts leave some SMs
  // unpaired, fewer than num_sms / 2 clusters fit at once, and the clusters past that would run
  // as a second wave after the persistent ones. The kernel loops over its units with any grid,
  // so the grid shrinks to what is co-resident.
  // The query failing or answering 0 keeps the planned grid (correct with any grid, at worst a
  // second partial wave), except for sm90 split-K: its reducers spin on units of other CTAs, so
  // every CTA of the grid must be resident at once (gemm_sm90.cuh, "Deadlock freedom"); without
  // the query's answer that is not known, and the kernel is refused. (Without clusters the grid
  // is at most one CTA per SM, and validate() has checked that one CTA fits an SM.)
  int resident = -1;
  if (plan_.main.cluster[0] > 1) {
    resident = max_active_clusters();
    const std::uint32_t clusters = plan_.main.grid[0] / plan_.main.cluster[0];
    if (resident > 0 && std::uint32_t(resident) < clusters)
      plan_.main.grid[0] = std::uint32_t(resident) * plan_.main.cluster[0];
    if (resident <= 0 && config.family == GemmFamily::kSm90 && config.split_k > 1 &&
        config.cluster_k == 1)
      throw Error(ErrorKind::kUnsupported,
                  fmt::format("{}: the clusters that fit the device at once are unknown, and "
                              "split-K needs them all resident",
                              to_key(config)));
  }
  const LaunchPlan& m = plan_.main;
  logger().debug(
      "gemm kernel {} for {}: grid=({},{},{}) cluster=({},{},{}) block={} smem={} "
      "max_active_clusters={} reduce={}",
      to_key(config_), to_key(problem_), m.grid[0], m.grid[1], m.grid[2], m.cluster[0],
      m.cluster[1], m.cluster[2], m.block[0], m.smem_bytes, resident, plan_.reduce.has_value());
}

CUlaunchConfig GemmKernel::main_launch_config(CUstream stream, CUlaunchAttribute& cluster) const {
  const LaunchPlan& m = plan_.main;
  CUlaunchConfig config{};
  config.gridDimX = m.grid[0];
  config.gridDimY = m.grid[1];
  config.gridDimZ = m.grid[2];
  config.blockDimX = m.block[0];
  config.blockDimY = m.block[1];
  config.blockDimZ = m.block[2];
  config.sharedMemBytes = m.smem_bytes;
  config.hStream = stream;
  cluster = CUlaunchAttribute{};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = m.cluster[0];
  cluster.value.clusterDim.y = m.cluster[1];
  cluster.value.clusterDim.z = m.cluster[2];
  config.attrs = &cluster;
  config.numAttrs = 1;
  return config;
}

int GemmKernel::max_active_clusters() const {
  CUlaunchAttribute cluster;
  const CUlaunchConfig config = main_launch_config(nullptr, cluster);
  int clusters = 0;
  const CUresult r = driver().occupancy_max_active_clusters(&clusters, main_, &config);
  if (r != CUDA_SUCCESS) {
    logger().warn(
        "cuOccupancyMaxActiveClusters failed (CUresult {}) for {}; keeping the planned grid",
        int(r), to_key(config_));
    return 0;
  }
  return clusters;
}

const GemmPaddedOperand* GemmKernel::padded(char operand) const {
  for (const GemmPaddedOperand& o : plan_.pads)
    if (o.operand == operand) return &o;
  return nullptr;
}

GemmParams GemmKernel::make_params(const void* a, const void* b, void* c, void* workspace) const {
  // Swap-AB: the kernel computes C^T = B·A^T (oriented_problem) and stores it transposed, so its
  // A is the caller's B, its M the caller's N, and C's row stride stays the caller's N.
  const GemmProblem q = oriented_problem(problem_, config_);
  // The caller's operands' rows (A: K; B: K for nt, N for nn), or their padded copies in the
  // workspace (sm90_padded_operands).
  std::int64_t a_ld = problem_.k;
  std::int64_t b_ld = problem_.layout == Layout::kNT ? problem_.k : problem_.n;
  if (const GemmPaddedOperand* o = padded('A')) {
    a = static_cast<const char*>(workspace) + o->offset;
    a_ld = o->dst_ld;
  }
  if (const GemmPaddedOperand* o = padded('B')) {
    b = static_cast<const char*>(workspace) + o->offset;
    b_ld = o->dst_ld;
  }
  GemmParams params{};
  params.a = config_.swap_ab ? b : a;
  params.b = config_.swap_ab ? a : b;
  params.c = c;
  if (workspace != nullptr) {
    params.flags = static_cast<unsigned int*>(workspace);
    params.workspace =
        reinterpret_cast<float*>(static_cast<char*>(workspace) + kGemmFlagRegionBytes);
  }
  params.lda = config_.swap_ab ? b_ld : a_ld;
  params.ldb = config_.swap_ab ? a_ld : b_ld;
  params.ldc = problem_.n;
  params.m = int(q.m);
  params.n = int(q.n);
  params.k = int(q.k);
  params.k_per_split = int(k_per_split(problem_, config_));
  params.raster_group = config_.raster_group;
  params.tiles_m = int(tiles_m(problem_, config_));
  params.tiles_n = int(tiles_n(problem_, config_));
  params.num_splits = config_.split_k;
  const StreamKRegion region = stream_k_region(problem_, config_, plan_.main.grid[0]);
  params.sk_units = int(region.units);
  params.sk_iters = int(region.iters);
  return params;
}

CUresult GemmKernel::make_sm90_params(const void* a, const void* b, void* c, void* workspace,
                                      GemmSm90Params& params) const {
  params.gemm = make_params(a, b, c, workspace);
  // The kernel's operands and product (swap-AB: the caller's B and A, M and N exchanged).
  const GemmProblem p = oriented_problem(problem_, config_);
  const void* const kernel_a = params.gemm.a;
  const void* const kernel_b = params.gemm.b;
  // An operand copied by the producer warpgroup (sm90_mn_copy_bytes: the caller's nn B, TMA
  // cannot address its rows) has no map.
  const bool copied = sm90_mn_copy_bytes(problem_, config_) > 0;
  params.a_map = TmaDescriptor{};
  params.b_map = TmaDescriptor{};
  CUresult r = CUDA_SUCCESS;
  // Pairs along N: each CTA loads half of the A tile's rows and multicasts it to both. An M-major
  // A (swap-AB nn: the caller's K x N B) in atoms of tile_k K-rows by 64 columns.
  if (kernel_a_k_major(problem_, config_))
    r = encode_tile_map(params.a_map, p.in_dtype, kernel_a, p.m, p.k, params.gemm.lda, 64,
                        std::uint32_t(config_.tile_m / config_.cluster_n));
  else if (!copied)
    r = encode_tile_map(params.a_map, p.in_dtype, kernel_a, p.k, p.m, params.gemm.lda, 64,
                        std::uint32_t(config_.tile_k));
  if (r != CUDA_SUCCESS) return r;
  // Clusters of 2: each CTA loads half of the B tile (K-major: half the rows of N; nn: half the
  // tile_k K-rows of each 64-column atom) and multicasts it to both.
  const std::uint32_t cluster = std::uint32_t(config_.cluster);
  if (kernel_b_k_major(problem_, config_))
    r = encode_tile_map(params.b_map, p.in_dtype, kernel_b, p.n, p.k, params.gemm.ldb, 64,
                        std::uint32_t(config_.tile_n) / cluster);
  else if (!copied)
    r = encode_tile_map(params.b_map, p.in_dtype, kernel_b, p.k, p.n, params.gemm.ldb, 64,
                        std::uint32_t(config_.tile_k) / cluster);
  if (r != CUDA_SUCCESS) return r;
  params.c_map = TmaDescriptor{};
  if (config_.epilogue > 0)
    r = encode_tile_map(params.c_map, p.out_dtype, c, p.m, p.n, p.n,
                        std::uint32_t(sm90_slab_columns(p, config_)),
                        std::uint32_t(config_.tile_m / config_.consumers),
                        sm90_slabs_swizzled(p, config_) ? TmaSwizzle::k128B : TmaSwizzle::kNone);
  return r;
}

CUresult GemmKernel::sm90_params(const void* a, const void* b, void* c, void* workspace,
                                 GemmSm90Params& params) const {
  LastSm90Params& last = *last_sm90_;
  const Sm90Operands operands{a, b, c, workspace};
  {
    const std::lock_guard lock(last.mutex);
    if (last.operands == operands) {
      params = last.params;
      return CUDA_SUCCESS;
    }
  }
  const CUresult r = make_sm90_params(a, b, c, workspace, params);
  if (r != CUDA_SUCCESS) return r;
  const std::lock_guard lock(last.mutex);
  last.operands = operands;
  last.params = params;
  return r;
}

CUresult GemmKernel::launch_main(void* params, CUstream stream) const {
  const LaunchPlan& m = plan_.main;
  void* args[] = {params};
  if (m.cluster[0] * m.cluster[1] * m.cluster[2] > 1) {
    CUlaunchAttribute cluster;
    const CUlaunchConfig config = main_launch_config(stream, cluster);
    return driver().launch_kernel_ex(&config, main_, args, nullptr);
  }
  return launch_with_plan(main_, m, args, stream);
}

CUresult GemmKernel::launch(const void* a, const void* b, void* c, void* workspace,
                            CUstream stream) const {
  CUresult r = CUDA_SUCCESS;
  for (const GemmPaddedOperand& o : plan_.pads) {
    GemmPadParams pad{};
    pad.src = o.operand == 'A' ? a : b;
    pad.dst = static_cast<char*>(workspace) + o.offset;
    pad.src_ld = o.src_ld;
    pad.dst_ld = o.dst_ld;
    pad.rows = int(o.rows);
    pad.cols = int(o.cols);
    void* pad_args[] = {&pad};
    r = launch_with_plan(pad_, o.launch, pad_args, stream);
    if (r != CUDA_SUCCESS) return r;
  }
  if (config_.family == GemmFamily::kSm90) {
    GemmSm90Params params;
    r = sm90_params(a, b, c, workspace, params);
    if (r == CUDA_SUCCESS) r = launch_main(&params, stream);
  } else {
    GemmParams params = make_params(a, b, c, workspace);
    r = launch_main(&params, stream);
  }
  if (r != CUDA_SUCCESS || !plan_.reduce) return r;
  SplitKReduceParams reduce{};
  reduce.workspace = make_params(a, b, c, workspace).workspace;
  reduce.c = c;
  reduce.ldc = problem_.n;
  reduce.m = int(problem_.m);
  reduce.n = int(problem_.n);
  reduce.splits = config_.split_k;
  void* reduce_args[] = {&reduce};
  return launch_with_plan(reduce_, *plan_.reduce, reduce_args, stream);
}

}  // namespace kt::rt
