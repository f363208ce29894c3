// GEMM tuning workload: random inputs, poison, sampled float64 reference.
#include "ops/gemm/gemm_workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/arith.hpp"
#include "generator/generated_source.hpp"
#include "ops/gemm/gemm_kernel.hpp"
#include "ops/gemm/gemm_source.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/host_copy.hpp"
#include "runtime/kernel_launch.hpp"
#include "tuner/gathered_samples.hpp"

namespace kt::tune {

namespace {

constexpr std::int64_t kMaxSamples = 16384;
constexpr int kMaxOperandSets = 8;
constexpr std::int64_t kOperandSetsBudgetBytes = 1LL << 30;
constexpr std::uint32_t kThreads = 256;

std::uint32_t blocks_for(std::int64_t work_items, std::uint32_t cap) {
  return std::uint32_t(std::clamp<std::int64_t>(ceil_div(work_items, kThreads), 1, cap));
}

}  // namespace

int timing_operand_sets(const GemmProblem& p) {
  // One set is A, B and C: the problem's minimum traffic.
  const double fit = std::floor(double(kOperandSetsBudgetBytes) / std::max(p.min_bytes(), 1.0));
  return int(std::clamp(fit, 1.0, double(kMaxOperandSets)));
}

double gemm_tolerance(DType out_dtype) {
  switch (out_dtype) {
    case DType::kBF16:
      return 1e-2;
    case DType::kFP16:
      return 2e-3;
    case DType::kFP32:
      return 1e-4;
  }
  return 1e-2;
}

GemmWorkload::GemmWorkload(const GemmProblem& p, const DeviceDesc& device, cache::Database* db,
                           rt::ModuleCache& modules, CUstream stream, std::uint64_t seed,
                           std::size_t workspace_bytes, int operand_sets)
    : problem_(p),
      stream_(stream),
      a_(std::size_t(p.m * p.k) * size_bytes(p.in_dtype)),
      b_(std::size_t(p.k * p.n) * size_bytes(p.in_dtype)),
      c_(std::size_t(p.m * p.n) * size_bytes(p.out_dtype)),
      workspace_(workspace_bytes) {
  rt::clear_gemm_workspace_flags(workspace_.get(), workspace_.bytes());
  const gen::GeneratedSource source = gen::generate_gemm_check(p, device.arch());
  module_ = &modules.load(rt::get_or_compile(db, source, true, db != nullptr).record);

  // Samples: every element when C is small, else uniform ones plus the last rows and columns
  // (where tile tails live).
  std::mt19937_64 rng(seed ^ 0x6b657274756e65ULL);
  if (p.m * p.n <= kMaxSamples) {
    for (int r = 0; r < p.m; ++r)
      for (int c = 0; c < p.n; ++c) {
        rows_.push_back(r);
        cols_.push_back(c);
      }
  } else {
    auto pick = [&rng](std::int64_t lo, std::int64_t hi) {
      return int(std::uniform_int_distribution<std::int64_t>(lo, hi - 1)(rng));
    };
    for (std::int64_t i = 0; i < kMaxSamples; ++i) {
      const int kind = int(i % 4);
      const int r = kind == 1 ? pick(std::max<std::int64_t>(0, p.m - 130), p.m) : pick(0, p.m);
      const int c = kind == 2 ? pick(std::max<std::int64_t>(0, p.n - 130), p.n) : pick(0, p.n);
      rows_.push_back(r);
      cols_.push_back(c);
    }
  }
  const std::size_t n = rows_.size();
  rows_device_ = rt::DeviceBuffer(n * sizeof(int));
  cols_device_ = rt::DeviceBuffer(n * sizeof(int));
  reference_device_ = rt::DeviceBuffer(n * sizeof(double));
  gathered_device_ = rt::DeviceBuffer(n * sizeof(double));
  count_device_ = rt::DeviceBuffer(sizeof(unsigned long long));
  const rt::CudaDriver& d = rt::driver();
  rt::check(d.memcpy_htod(rows_device_.get(), rows_.data(), n * sizeof(int)), "cuMemcpyHtoD(rows)");
  rt::check(d.memcpy_htod(cols_device_.get(), cols_.data(), n * sizeof(int)), "cuMemcpyHtoD(cols)");

  float scale = 1.0f;
  long long count_a = p.m * p.k, count_b = p.k * p.n;
  unsigned long long seed_a = seed * 2 + 1, seed_b = seed * 2 + 2;
  CUdeviceptr a_ptr = a_.get(), b_ptr = b_.get();
  void* fill_a[] = {&a_ptr, &count_a, &seed_a, &scale};
  launch(gen::kFillRandomIn, blocks_for(count_a, 65535), fill_a);
  void* fill_b[] = {&b_ptr, &count_b, &seed_b, &scale};
  launch(gen::kFillRandomIn, blocks_for(count_b, 65535), fill_b);

  long long lda = p.k, ldb = p.layout == Layout::kNT ? p.k : p.n;
  int m = int(p.m), nn = int(p.n), k = int(p.k), num = int(n);
  CUdeviceptr rows_ptr = rows_device_.get(), cols_ptr = cols_device_.get();
  CUdeviceptr ref_ptr = reference_device_.get();
  void* ref_args[] = {&a_ptr, &b_ptr,    &lda,      &ldb, &m,      &nn,
                      &k,     &rows_ptr, &cols_ptr, &num, &ref_ptr};
  launch(gen::kReferenceSamples, blocks_for(std::int64_t(n) * 32, 8192), ref_args);
  for (int set = 1; set < operand_sets; ++set) {
    OperandCopy copy{rt::DeviceBuffer(a_.bytes()), rt::DeviceBuffer(b_.bytes()),
                     rt::DeviceBuffer(c_.bytes())};
    rt::check(d.memcpy_dtod_async(copy.a.get(), a_ptr, a_.bytes(), stream_),
              "cuMemcpyDtoDAsync(A copy)");
    rt::check(d.memcpy_dtod_async(copy.b.get(), b_ptr, b_.bytes(), stream_),
              "cuMemcpyDtoDAsync(B copy)");
    poison(copy.c.get());
    copies_.push_back(std::move(copy));
  }
  rt::check(d.stream_synchronize(stream_), "cuStreamSynchronize(reference)");
  reference_ = rt::copy_to_host<double>(ref_ptr, n, "cuMemcpyDtoH(reference)");
}

void GemmWorkload::launch(int kernel, std::uint32_t blocks, void** args) {
  rt::check(rt::launch_with_plan(module_->functions[kernel], rt::linear_plan(blocks, kThreads),
                                 args, stream_),
            "cuLaunchKernel(check kernel)");
}

GemmOperands GemmWorkload::operands(int set) const {
  if (set == 0) return {a(), b(), c()};
  const OperandCopy& copy = copies_.at(std::size_t(set - 1));
  return {copy.a.data(), copy.b.data(), copy.c.data()};
}

void GemmWorkload::poison(CUdeviceptr c) {
  long long count = problem_.m * problem_.n;
  void* args[] = {&c, &count};
  launch(gen::kFillPoisonOut, blocks_for(count, 65535), args);
}

void GemmWorkload::poison_output() { poison(c_.get()); }

OutputCheck GemmWorkload::check_output() {
  const rt::CudaDriver& d = rt::driver();
  rt::check(d.memset_d8_async(count_device_.get(), 0, sizeof(unsigned long long), stream_),
            "cuMemsetD8Async(count)");
  CUdeviceptr c_ptr = c_.get(), rows_ptr = rows_device_.get(), cols_ptr = cols_device_.get();
  CUdeviceptr gathered_ptr = gathered_device_.get(), count_ptr = count_device_.get();
  long long ldc = problem_.n;
  int m = int(problem_.m), n = int(problem_.n), num = num_samples();
  void* args[] = {&c_ptr, &ldc, &m, &n, &rows_ptr, &cols_ptr, &num, &gathered_ptr, &count_ptr};
  launch(gen::kGatherAndCount, blocks_for(problem_.m * problem_.n, 132 * 16), args);
  const GatheredSamples<double> got =
      read_gathered<double>(stream_, gathered_ptr, reference_.size(), count_ptr);
  const std::vector<double>& gathered = got.values;
  const unsigned long long nonfinite = got.nonfinite;

  OutputCheck check;
  check.nonfinite = nonfinite;
  check.tolerance = gemm_tolerance(problem_.out_dtype);
  check.relative_error = relative_error(gathered, reference_);
  std::size_t worst = 0;
  double worst_abs = -1;
  for (std::size_t i = 0; i < reference_.size(); ++i) {
    const double abs_delta = std::fabs(gathered[i] - reference_[i]);
    if (!(abs_delta <= worst_abs)) {
      worst_abs = abs_delta;
      worst = i;
    }
  }
  if (nonfinite > 0) {
    check.detail = fmt::format("{} of {} outputs are NaN/Inf (unwritten or overflowed)", nonfinite,
                               problem_.m * problem_.n);
  } else if (!(check.relative_error <= check.tolerance)) {
    check.detail = fmt::format(
        "relative error {:.3g} > tolerance {:.3g}; worst at C[{},{}]: got {:.6g}, expected {:.6g}",
        check.relative_error, check.tolerance, rows_[worst], cols_[worst], gathered[worst],
        reference_[worst]);
  } else {
    check.passed = true;
  }
  return check;
}

}  // namespace kt::tune
